package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"sdkpp/core/loopback"
	"sdkpp/core/rest"
	"sdkpp/core/token"
)

// AuthorizeTimeout bounds how long Authorize waits for the user in the browser.
const AuthorizeTimeout = 10 * time.Minute

// authState is the Client's authorization state: the token store (core/token, its own lock), the
// flows in progress (guarded by Client.mu) and the handlers.
type authState struct {
	tokens *token.Store

	authorizeCancel context.CancelFunc // the Authorize in progress
	deviceCancel    context.CancelFunc // the device flow in progress

	opener       handlerSlot[ClientOpenUrlCallback] // the game's URL opener, if set
	expiry       handlerSlot[ClientTokenExpirationCallback]
	refreshed    handlerSlot[ClientTokenRefreshedCallback]
	screenClosed handlerSlot[ClientAuthorizeDeviceScreenClosedCallback]
	screenOpen   bool
}

// tokenResponse is the body of a successful token call.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int32  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token"`
}

// tokenType maps the wire token type to the enum.
func (t *tokenResponse) tokenType() AuthorizationTokenType {
	if strings.EqualFold(t.TokenType, "bearer") || t.TokenType == "" {
		return AuthorizationTokenTypeBearer
	}
	return AuthorizationTokenTypeUser
}

// externalAuthNames are the wire names of AuthenticationExternalAuthType.
var externalAuthNames = map[AuthenticationExternalAuthType]string{
	AuthenticationExternalAuthTypeOIDC:                          "OIDC",
	AuthenticationExternalAuthTypeEpicOnlineServicesAccessToken: "EPIC_ONLINE_SERVICES_ACCESS_TOKEN",
	AuthenticationExternalAuthTypeEpicOnlineServicesIdToken:     "EPIC_ONLINE_SERVICES_ID_TOKEN",
	AuthenticationExternalAuthTypeSteamSessionTicket:            "STEAM_SESSION_TICKET",
	AuthenticationExternalAuthTypeUnityServicesIdToken:          "UNITY_SERVICES_ID_TOKEN",
	AuthenticationExternalAuthTypeDiscordBotIssuedAccessToken:   "DISCORD_BOT_ISSUED_ACCESS_TOKEN",
	AuthenticationExternalAuthTypeAppleIdToken:                  "APPLE_ID_TOKEN",
	AuthenticationExternalAuthTypePlayStationNetworkIdToken:     "PLAYSTATION_NETWORK_ID_TOKEN",
}

// appIDOr returns id, or the Client's application id when id is 0.
func (c *Client) appIDOr(id uint64) uint64 {
	if id == 0 {
		return c.appID.Load()
	}
	return id
}

// remember records a token response's secrets for redaction, and its expiry and refresh token
// (obtained for application appID) for the automatic refresh and the expiration callback.
func (c *Client) remember(t *tokenResponse, appID uint64) {
	Secrets.Add(t.AccessToken)
	Secrets.Add(t.RefreshToken)
	Secrets.Add(t.IDToken)
	c.auth.tokens.Remember(t.AccessToken, t.RefreshToken, time.Duration(t.ExpiresIn)*time.Second, appID)
}

// tokenOp answers cb, exactly once, with the tokens fetch obtains on a goroutine of c; what names
// the operation in the log. fetch runs under ctx, which Close cancels.
func (c *Client) tokenOp(ctx context.Context, what string, appID uint64, cb Callback[ClientTokenExchangeCallback], fetch func(context.Context) (*tokenResponse, error)) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "", "", AuthorizationTokenTypeBearer, 0, "") }, cb.Release)
	c.start(func(context.Context) {
		t, err := fetch(ctx)
		if err == nil {
			c.remember(t, appID)
		} else {
			c.logf(LoggingSeverityWarning, "%s failed: %v", what, err)
		}
		once.Fire(func() {
			if err != nil {
				cb.Fn(resultOf(err), "", "", AuthorizationTokenTypeBearer, 0, "")
				return
			}
			cb.Fn(Success(), t.AccessToken, t.RefreshToken, t.tokenType(), t.ExpiresIn, t.Scope)
		})
	})
}

// tokenCall runs a grant at /oauth2/token and answers cb.
func (c *Client) tokenCall(form url.Values, cb Callback[ClientTokenExchangeCallback]) {
	for _, k := range []string{"code", "code_verifier", "refresh_token", "external_auth_token"} {
		Secrets.Add(form.Get(k))
	}
	appID, _ := strconv.ParseUint(form.Get("client_id"), 10, 64)
	c.tokenOp(c.ctx, "token request ("+form.Get("grant_type")+")", appID, cb, func(ctx context.Context) (*tokenResponse, error) {
		var t tokenResponse
		return &t, c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: form}, &t)
	})
}

// GetToken exchanges an authorization code and its PKCE verifier for tokens (rules AU-1, AA-5).
func (c *Client) GetToken(applicationId uint64, code, codeVerifier, redirectUri string, cb Callback[ClientTokenExchangeCallback]) {
	c.tokenCall(url.Values{
		"grant_type":    {"authorization_code"},
		"client_id":     {strconv.FormatUint(c.appIDOr(applicationId), 10)},
		"code":          {code},
		"code_verifier": {codeVerifier},
		"redirect_uri":  {redirectUri},
	}, cb)
}

// RefreshToken exchanges a refresh token for new tokens; the old ones stop working. A revoked
// grant fails with ErrorType AuthorizationFailed (rule AU-6). A refresh token this Client has
// presented already (its own automatic refresh, or an earlier call) fails the same way without
// being sent: the service would take a second use for theft and revoke the grant (RFC 9700
// 4.14.2).
func (c *Client) RefreshToken(applicationId uint64, refreshToken string, cb Callback[ClientTokenExchangeCallback]) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"client_id":     {strconv.FormatUint(c.appIDOr(applicationId), 10)},
		"refresh_token": {refreshToken},
	}
	Secrets.Add(refreshToken)
	spent := !c.auth.tokens.Spend(refreshToken)
	appID, _ := strconv.ParseUint(form.Get("client_id"), 10, 64)
	c.tokenOp(c.ctx, "token request (refresh_token)", appID, cb, func(ctx context.Context) (*tokenResponse, error) {
		if spent {
			return nil, errSpentRefresh
		}
		var t tokenResponse
		err := c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: form}, &t)
		var re *rest.Error
		if errors.As(err, &re) && re.Unprocessed() {
			c.auth.tokens.Unspend(refreshToken) // the service never saw it: the game may try again
		}
		return &t, err
	})
}

// errSpentRefresh answers a RefreshToken with a refresh token the Client presented before.
var errSpentRefresh = &rest.Error{Status: http.StatusBadRequest, OAuthError: "invalid_grant",
	OAuthDescription: "this refresh token was used already (by the SDK's automatic refresh or an earlier RefreshToken) and is not sent again; use the tokens from TokenRefreshedCallback or sign in again"}

// GetTokenFromProvisionalMerge exchanges an authorization code like GetToken and merges the
// provisional account identified by the external credentials into the user's account.
func (c *Client) GetTokenFromProvisionalMerge(applicationId uint64, code, codeVerifier, redirectUri string,
	externalAuthType AuthenticationExternalAuthType, externalAuthToken string, cb Callback[ClientTokenExchangeCallback]) {
	c.tokenCall(url.Values{
		"grant_type":          {"authorization_code"},
		"client_id":           {strconv.FormatUint(c.appIDOr(applicationId), 10)},
		"code":                {code},
		"code_verifier":       {codeVerifier},
		"redirect_uri":        {redirectUri},
		"external_auth_type":  {externalAuthNames[externalAuthType]},
		"external_auth_token": {externalAuthToken},
	}, cb)
}

// resultCall runs one API request whose callback takes only a ClientResult.
func (c *Client) resultCall(req rest.Request, what string, cb Callback[func(*ClientResult)], after func()) {
	once := resultOnce(c, cb)
	c.start(func(ctx context.Context) {
		err := c.api.Do(ctx, req, nil)
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s failed: %v", what, err)
		} else if after != nil {
			after()
		}
		once.Fire(func() { cb.Fn(resultOf(err)) })
	})
}

// RevokeToken revokes token and with it the whole authorization: every access and refresh token
// of the user for the application (rule AU-7).
func (c *Client) RevokeToken(applicationId uint64, token string, cb Callback[ClientRevokeTokenCallback]) {
	Secrets.Add(token)
	c.resultCall(rest.Request{Method: http.MethodPost, Path: "/oauth2/token/revoke", Form: url.Values{
		"client_id": {strconv.FormatUint(c.appIDOr(applicationId), 10)},
		"token":     {token},
	}}, "RevokeToken", Callback[func(*ClientResult)](cb), func() { c.auth.tokens.Clear(token) })
}

// UpdateToken sets the token the client uses for the service.
func (c *Client) UpdateToken(tokenType AuthorizationTokenType, token string, cb Callback[ClientUpdateTokenCallback]) {
	once := resultOnce(c, cb)
	if token == "" {
		once.Fire(func() { cb.Fn(resultOf(invalid("UpdateToken: the token is empty"))) })
		return
	}
	Secrets.Add(token)
	changed := c.auth.tokens.Set(token)
	if gw := c.gateway(); changed && gw != nil {
		// A live connection is renewed, so that the service authenticates it with the new token.
		c.logf(LoggingSeverityInfo, "UpdateToken: a new token; renewing the gateway connection")
		gw.Renew()
	}
	once.Fire(func() { cb.Fn(Success()) })
}

// IsAuthenticated reports whether a token is set.
func (c *Client) IsAuthenticated() bool { return c.auth.tokens.Get() != "" }

// authHeader is the Authorization header for the client's token, or "".
func (c *Client) authHeader() string { return c.auth.tokens.Header() }

// SetTokenExpirationCallback sets the handler that runs when the token set by UpdateToken is five
// minutes from expiry (or already expired) and the SDK cannot refresh it itself: the SDK knows the
// expiry of the tokens it obtained, and refreshes those that came with a refresh token
// (refresh.go); the handler then runs only when that refresh is refused or keeps failing.
func (c *Client) SetTokenExpirationCallback(cb Callback[ClientTokenExpirationCallback]) {
	setHandler(c, &c.auth.expiry, cb)
	c.auth.tokens.Reschedule()
}

// tokenExpiring queues the expiration callback.
func (c *Client) tokenExpiring() {
	postHandler(c, &c.auth.expiry, func(f ClientTokenExpirationCallback) { f() })
}

// currentUser is the body of GET /users/@me.
type currentUser struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	GlobalName string `json:"global_name"`
}

// FetchCurrentUser validates token by fetching its user.
func (c *Client) FetchCurrentUser(tokenType AuthorizationTokenType, token string, cb Callback[ClientFetchCurrentUserCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), 0, "") }, cb.Release)
	Secrets.Add(token)
	c.start(func(ctx context.Context) {
		var u currentUser
		err := c.api.Do(ctx, rest.Request{Path: "/users/@me", Auth: "Bearer " + token}, &u)
		id, perr := strconv.ParseUint(u.ID, 10, 64)
		if err == nil && perr != nil {
			err = &rest.Error{Status: http.StatusOK, Message: "malformed user id " + strconv.Quote(u.ID)}
		}
		once.Fire(func() {
			if err != nil {
				cb.Fn(resultOf(err), 0, "")
				return
			}
			name := u.GlobalName
			if name == "" {
				name = u.Username
			}
			cb.Fn(Success(), id, name)
		})
	})
}

// ExchangeChildToken exchanges a parent application's access token for a token of a child
// application of the same publisher (rule AU-4). Child tokens have no refresh token.
func (c *Client) ExchangeChildToken(parentApplicationToken string, childApplicationId uint64, cb Callback[ClientExchangeChildTokenCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "", AuthorizationTokenTypeBearer, 0, "") }, cb.Release)
	Secrets.Add(parentApplicationToken)
	c.start(func(ctx context.Context) {
		var t tokenResponse
		err := c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/partner-sdk/child-token", JSON: map[string]string{
			"parent_access_token":  parentApplicationToken,
			"child_application_id": strconv.FormatUint(childApplicationId, 10),
		}}, &t)
		if err == nil {
			c.remember(&t, childApplicationId)
		} else {
			c.logf(LoggingSeverityWarning, "ExchangeChildToken failed: %v", err)
		}
		once.Fire(func() {
			if err != nil {
				cb.Fn(resultOf(err), "", AuthorizationTokenTypeBearer, 0, "")
				return
			}
			cb.Fn(Success(), t.AccessToken, t.tokenType(), t.ExpiresIn, t.Scope)
		})
	})
}

// GetProvisionalToken signs in a provisional account with external credentials (rule AU-5).
func (c *Client) GetProvisionalToken(applicationId uint64, externalAuthType AuthenticationExternalAuthType, externalAuthToken string, cb Callback[ClientTokenExchangeCallback]) {
	Secrets.Add(externalAuthToken)
	c.tokenOp(c.ctx, "GetProvisionalToken", c.appIDOr(applicationId), cb, func(ctx context.Context) (*tokenResponse, error) {
		var t tokenResponse
		return &t, c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/partner-sdk/token", JSON: map[string]string{
			"client_id":           strconv.FormatUint(c.appIDOr(applicationId), 10),
			"external_auth_type":  externalAuthNames[externalAuthType],
			"external_auth_token": externalAuthToken,
		}}, &t)
	})
}

// UnmergeIntoProvisionalAccount splits the provisional account back out of the user's account;
// the user's tokens for the application stop working (rules AU-7, ST-2).
func (c *Client) UnmergeIntoProvisionalAccount(applicationId uint64, externalAuthType AuthenticationExternalAuthType, externalAuthToken string, cb Callback[ClientUnmergeIntoProvisionalAccountCallback]) {
	Secrets.Add(externalAuthToken)
	c.resultCall(rest.Request{Method: http.MethodPost, Path: "/partner-sdk/provisional-accounts/unmerge", JSON: map[string]string{
		"client_id":           strconv.FormatUint(c.appIDOr(applicationId), 10),
		"external_auth_type":  externalAuthNames[externalAuthType],
		"external_auth_token": externalAuthToken,
	}}, "UnmergeIntoProvisionalAccount", Callback[func(*ClientResult)](cb), nil)
}

// ProvisionalDisplayNamePath is the endpoint of UpdateProvisionalAccountDisplayName.
const ProvisionalDisplayNamePath = "/users/@me/provisional-display-name"

// UpdateProvisionalAccountDisplayName renames the signed-in provisional account.
func (c *Client) UpdateProvisionalAccountDisplayName(name string, cb Callback[ClientUpdateProvisionalAccountDisplayNameCallback]) {
	auth := c.authHeader()
	if auth == "" {
		once := resultOnce(c, cb)
		once.Fire(func() { cb.Fn(resultOf(errNotReady)) })
		return
	}
	c.resultCall(rest.Request{Method: http.MethodPatch, Path: ProvisionalDisplayNamePath, Auth: auth,
		JSON: map[string]string{"global_name": name}}, "UpdateProvisionalAccountDisplayName", Callback[func(*ClientResult)](cb), nil)
}

// SetOpenUrlCallback makes the SDK hand the URLs it would open in the system browser (the
// consent page, the device verification page) to cb instead, inside RunCallbacks.
func (c *Client) SetOpenUrlCallback(cb Callback[ClientOpenUrlCallback]) {
	setHandler(c, &c.auth.opener, cb)
}

// openURL shows u to the user: through the game's opener, or the system browser.
func (c *Client) openURL(u string) error {
	c.mu.Lock()
	scope, fn := c.auth.opener.scope, c.auth.opener.fn
	c.mu.Unlock()
	if scope != nil && scope.Post(func() { fn(u) }) {
		return nil
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	case "darwin":
		cmd = exec.Command("open", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return invalid("cannot open the browser (%v); set a URL opener with SetOpenUrlCallback", err)
	}
	// The launcher may live as long as the browser it starts, so Close must not wait for it: this
	// goroutine only reaps the process, and ends when the process does.
	go cmd.Wait()
	return nil
}

// redirectTarget is where the authorization redirect lands on this platform: a loopback
// listener on desktop, the custom scheme on mobile (rule AA-7).
func redirectTargetFor(r *loopback.Receiver) RedirectTarget {
	if runtime.GOOS == "android" || runtime.GOOS == "ios" || r == nil {
		return RedirectTarget{}
	}
	return RedirectTarget{Loopback: r.Addr()}
}

// Authorize starts the OAuth2 authorization code flow (rule AU-1): it opens the consent page and
// answers with the code and the redirect URI once the user approves. An Authorize in progress is
// aborted by a new one.
func (c *Client) Authorize(args *AuthorizationArgs, cb Callback[ClientAuthorizationCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "", "") }, cb.Release)
	fail := func(err error) { once.Fire(func() { cb.Fn(resultOf(err), "", "") }) }
	appID := c.appID.Load()
	if err := validateAuthorize(args, appID); err != nil {
		fail(err) // rule AA-2: nothing is sent
		return
	}
	args = args.Clone()
	state, ok := args.State()
	if !ok {
		s, err := randomState(nil) // rule AA-3
		if err != nil {
			fail(err)
			return
		}
		state = s
		args.SetState(&state)
	}
	Secrets.Add(state)
	recv, err := loopback.Listen(state)
	if err != nil {
		fail(err)
		return
	}
	req, err := buildAuthorizeRequest(args, appID, c.webBase, redirectTargetFor(recv), nil)
	if err != nil {
		recv.Close()
		fail(err)
		return
	}
	ctx, cancel := c.withTimeout(c.ctx, AuthorizeTimeout)
	c.mu.Lock()
	previous := c.auth.authorizeCancel
	c.auth.authorizeCancel = cancel
	c.mu.Unlock()
	if previous != nil {
		previous()
	}
	started := c.start(func(context.Context) {
		defer cancel()
		defer recv.Close()
		if err := c.openURL(req.URL); err != nil {
			fail(err)
			return
		}
		code, err := recv.Wait(ctx)
		if err != nil && ctx.Err() != nil {
			err = context.Cause(ctx) // DeadlineExceeded when the clock ran out
		}
		if err != nil {
			switch {
			case errors.Is(err, context.Canceled):
				err = errAborted
			case errors.Is(err, context.DeadlineExceeded):
				err = fmt.Errorf("%w: the user did not finish within %v", errAborted, AuthorizeTimeout)
			}
			c.logf(LoggingSeverityWarning, "Authorize: %v", err)
			fail(err)
			return
		}
		Secrets.Add(code)
		once.Fire(func() { cb.Fn(Success(), code, req.RedirectURI) })
	})
	if !started {
		cancel()
		recv.Close()
	}
}

// AbortAuthorize ends the Authorize in progress; its callback fires with ErrorType Aborted. A
// redirect arriving later finds nothing listening.
func (c *Client) AbortAuthorize() {
	c.mu.Lock()
	cancel := c.auth.authorizeCancel
	c.auth.authorizeCancel = nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
