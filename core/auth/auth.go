// Package auth is the authorization of a Client: the OAuth 2.0 authorization code flow with PKCE
// (Authorize), the device flow (RFC 8628), the token grants and exchanges (code, refresh, child
// and provisional tokens), revocation, provisional accounts, and the automatic refresh of the
// token in use shortly before it expires. The token in use and what is known of the tokens
// obtained live in core/token; this package obtains them.
//
// Its lock (Flows.mu, over the flows in progress) is a leaf. Every exchange registers the secrets
// it handles with the redaction set before they can reach a log line, and remembers what it
// obtained in the token store.
package auth

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"sdkpp/core/redact"
	"sdkpp/core/rest"
	"sdkpp/core/token"
	"sdkpp/internal/clock"
)

// Severity is the importance of a log message of this package.
type Severity int

// Severities of log messages.
const (
	Info Severity = iota
	Warning
	Error
)

// Deps is what Flows uses of its Client.
type Deps struct {
	API     *rest.Client
	Clock   clock.Clock
	Tokens  *token.Store
	Secrets *redact.Set
	WebBase string
	// Logf writes a message to the Client's log (which redacts it).
	Logf func(sev Severity, format string, args ...any)
	// Open shows a URL to the user: the consent page, the device verification page.
	Open func(url string) error
	// Start runs fn on a goroutine the Client owns and stops; false once the Client is closed.
	Start func(fn func(ctx context.Context)) bool
	// Renew renews the gateway connection, if there is one, so that it uses a new token.
	Renew func()
	// Expiring warns the game that the token in use expires and cannot be refreshed.
	Expiring func()
	// Refreshed tells the game the pair the automatic refresh obtained.
	Refreshed func(t *Tokens)
}

// Flows runs the authorization flows of one Client. Its methods may be called from any goroutine.
type Flows struct {
	Deps

	mu              sync.Mutex
	authorizeCancel context.CancelFunc // the Authorize in progress
	deviceCancel    context.CancelFunc // the device flow in progress
	screenOpen      bool               // OpenAuthorizeDeviceScreen showed the page
}

// New returns the Flows of a Client.
func New(d Deps) *Flows { return &Flows{Deps: d} }

// Tokens is the body of a successful token call.
type Tokens struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int32  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token"`
}

// Bearer reports whether the tokens are bearer tokens (the default when the service names none).
func (t *Tokens) Bearer() bool { return strings.EqualFold(t.TokenType, "bearer") || t.TokenType == "" }

// Remember records t's secrets for redaction, and its expiry and refresh token (obtained for
// application appID) for the automatic refresh and the expiration warning.
func (f *Flows) Remember(t *Tokens, appID uint64) {
	f.Secrets.Add(t.AccessToken)
	f.Secrets.Add(t.RefreshToken)
	f.Secrets.Add(t.IDToken)
	f.Tokens.Remember(t.AccessToken, t.RefreshToken, time.Duration(t.ExpiresIn)*time.Second, appID)
}

// Grant is the form of a grant at /oauth2/token.
type Grant url.Values

// CodeGrant exchanges an authorization code and its PKCE verifier (rules AU-1, AA-5).
func CodeGrant(appID uint64, code, verifier, redirectURI string) Grant {
	return Grant{
		"grant_type":    {"authorization_code"},
		"client_id":     {strconv.FormatUint(appID, 10)},
		"code":          {code},
		"code_verifier": {verifier},
		"redirect_uri":  {redirectURI},
	}
}

// RefreshGrant exchanges a refresh token; the old tokens stop working.
func RefreshGrant(appID uint64, refresh string) Grant {
	return Grant{
		"grant_type":    {"refresh_token"},
		"client_id":     {strconv.FormatUint(appID, 10)},
		"refresh_token": {refresh},
	}
}

// WithExternal adds the external credentials of a provisional account to merge (externalType is
// the wire name of the credential's kind) and returns g.
func (g Grant) WithExternal(externalType, externalToken string) Grant {
	g["external_auth_type"] = []string{externalType}
	g["external_auth_token"] = []string{externalToken}
	return g
}

// Exchange runs grant g at /oauth2/token and remembers the tokens it gives.
func (f *Flows) Exchange(ctx context.Context, g Grant) (*Tokens, error) {
	form := url.Values(g)
	for _, k := range []string{"code", "code_verifier", "refresh_token", "external_auth_token"} {
		f.Secrets.Add(form.Get(k))
	}
	appID, _ := strconv.ParseUint(form.Get("client_id"), 10, 64)
	var t Tokens
	if err := f.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: form}, &t); err != nil {
		return nil, err
	}
	f.Remember(&t, appID)
	return &t, nil
}

// ChildToken exchanges a parent application's access token for a token of a child application
// of the same publisher (rule AU-4). Child tokens have no refresh token.
func (f *Flows) ChildToken(ctx context.Context, parentToken string, childID uint64) (*Tokens, error) {
	f.Secrets.Add(parentToken)
	var t Tokens
	err := f.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/partner-sdk/child-token", JSON: map[string]string{
		"parent_access_token":  parentToken,
		"child_application_id": strconv.FormatUint(childID, 10),
	}}, &t)
	if err != nil {
		return nil, err
	}
	f.Remember(&t, childID)
	return &t, nil
}

// ProvisionalToken signs in a provisional account with external credentials (rule AU-5).
func (f *Flows) ProvisionalToken(ctx context.Context, appID uint64, externalType, externalToken string) (*Tokens, error) {
	f.Secrets.Add(externalToken)
	var t Tokens
	err := f.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/partner-sdk/token", JSON: map[string]string{
		"client_id":           strconv.FormatUint(appID, 10),
		"external_auth_type":  externalType,
		"external_auth_token": externalToken,
	}}, &t)
	if err != nil {
		return nil, err
	}
	f.Remember(&t, appID)
	return &t, nil
}

// RevokeRequest revokes token and with it the whole authorization: every access and refresh
// token of the user for the application (rule AU-7).
func (f *Flows) RevokeRequest(appID uint64, tok string) rest.Request {
	f.Secrets.Add(tok)
	return rest.Request{Method: http.MethodPost, Path: "/oauth2/token/revoke", Form: url.Values{
		"client_id": {strconv.FormatUint(appID, 10)},
		"token":     {tok},
	}}
}

// UnmergeRequest splits the provisional account back out of the user's account; the user's
// tokens for the application stop working (rules AU-7, ST-2).
func (f *Flows) UnmergeRequest(appID uint64, externalType, externalToken string) rest.Request {
	f.Secrets.Add(externalToken)
	return rest.Request{Method: http.MethodPost, Path: "/partner-sdk/provisional-accounts/unmerge", JSON: map[string]string{
		"client_id":           strconv.FormatUint(appID, 10),
		"external_auth_type":  externalType,
		"external_auth_token": externalToken,
	}}
}

// ProvisionalDisplayNamePath is the endpoint of UpdateProvisionalAccountDisplayName.
const ProvisionalDisplayNamePath = "/users/@me/provisional-display-name"

// DisplayNameRequest renames the signed-in provisional account; authHeader is the token's.
func DisplayNameRequest(authHeader, name string) rest.Request {
	return rest.Request{Method: http.MethodPatch, Path: ProvisionalDisplayNamePath, Auth: authHeader,
		JSON: map[string]string{"global_name": name}}
}

// currentUser is the body of GET /users/@me.
type currentUser struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	GlobalName string `json:"global_name"`
}

// CurrentUser validates tok by fetching its user: its id and the name to show.
func (f *Flows) CurrentUser(ctx context.Context, tok string) (uint64, string, error) {
	f.Secrets.Add(tok)
	var u currentUser
	if err := f.API.Do(ctx, rest.Request{Path: "/users/@me", Auth: "Bearer " + tok}, &u); err != nil {
		return 0, "", err
	}
	id, err := strconv.ParseUint(u.ID, 10, 64)
	if err != nil {
		return 0, "", &rest.Error{Status: http.StatusOK, Message: "malformed user id " + strconv.Quote(u.ID)}
	}
	if u.GlobalName != "" {
		return id, u.GlobalName, nil
	}
	return id, u.Username, nil
}

// cancelPrevious makes cancel the one of the flow in *slot and ends the flow it replaces.
func (f *Flows) cancelPrevious(slot *context.CancelFunc, cancel context.CancelFunc) {
	f.mu.Lock()
	previous := *slot
	*slot = cancel
	f.mu.Unlock()
	if previous != nil {
		previous()
	}
}

// abort ends the flow in *slot, if any.
func (f *Flows) abort(slot *context.CancelFunc) { f.cancelPrevious(slot, nil) }
