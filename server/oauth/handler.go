package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/extauth"
	"sdkpp/server/httpx"
	"sdkpp/server/invites"
	"sdkpp/server/oidc"
	"sdkpp/server/scopes"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Lifetimes.
const (
	CodeTTL        = 10 * time.Minute
	DeviceTTL      = 300 * time.Second
	DeviceInterval = 5 // seconds
	SessionTTL     = 24 * time.Hour
)

// Cookie names.
const (
	SessionCookie = "sdkpp_session"
	CSRFCookie    = "sdkpp_csrf"
)

// Handler serves the OAuth2 pages and endpoints.
type Handler struct {
	Store     store.Store
	Clock     clock.Clock
	Logger    *slog.Logger
	Accounts  *accounts.Service
	Provider  *oidc.Provider
	External  extauth.Registry
	PublicURL string // web base, e.g. http://127.0.0.1:7710
	// AccessTTL is the lifetime of the access tokens issued here; 0 is token.AccessTTL (7 days).
	// Tests shorten it to exercise the SDK's automatic refresh.
	AccessTTL time.Duration
	// Invites, when set, serves the invite page /invite/{code}; its join is the API's.
	Invites *invites.Service
	// Logins throttles wrong passwords on the pages, by username and by address, and wrong
	// user codes on the device pages, by address and by device request; nil throttles nothing.
	Logins *LoginThrottle
	// OnGrantRevoked, when set, is told of every grant revoked for a replayed authorization
	// code or a reused refresh token, after the revocation is committed (the service ends the
	// gateway sessions of the grant's tokens).
	OnGrantRevoked func(store.Grant)
}

// RegisterWeb adds the pages to mux.
func (h *Handler) RegisterWeb(mux httpx.Router) {
	mux.HandleFunc("GET /oauth2/authorize", h.authorizePage)
	mux.HandleFunc("POST /oauth2/authorize", h.authorizeSubmit)
	mux.HandleFunc("GET /activate", h.activatePage)
	mux.HandleFunc("POST /activate", h.activateSubmit)
	if h.Invites != nil {
		mux.HandleFunc("GET /invite/{code}", h.invitePage)
		mux.HandleFunc("POST /invite/{code}", h.inviteSubmit)
	}
}

// RegisterAPI adds the API endpoints to mux (paths relative to the API base).
func (h *Handler) RegisterAPI(mux httpx.Router) {
	mux.HandleFunc("POST /oauth2/token", h.token)
	mux.HandleFunc("POST /oauth2/token/revoke", h.revoke)
	mux.HandleFunc("POST /oauth2/device/authorize", h.deviceAuthorize)
}

func (h *Handler) secureCookies() bool { return strings.HasPrefix(h.PublicURL, "https:") }

// lookupApp returns the application of a client_id string.
func (h *Handler) lookupApp(ctx context.Context, clientID string) (*store.Application, error) {
	id, ok := wire.ParseSnowflake(clientID)
	if !ok {
		return nil, store.ErrNotFound
	}
	return h.Store.GetApplication(ctx, uint64(id))
}

// client is an authenticated (or identified, for public clients) token endpoint caller.
type client struct {
	app           *store.Application
	authenticated bool // sent the right client secret
}

var errInvalidClient = &wire.OAuthError{Status: http.StatusUnauthorized, Code: wire.OAuthInvalidClient,
	Description: "Unknown client or wrong client credentials"}

// authenticateClient reads client_id and client_secret from HTTP Basic or the form. The client
// is returned as a value, which its caller keeps on its stack.
func (h *Handler) authenticateClient(ctx context.Context, r *http.Request, form url.Values) (client, error) {
	id, sec, basic := r.BasicAuth()
	if basic {
		// RFC 6749 2.3.1: the Basic credentials are form-encoded.
		if v, err := url.QueryUnescape(id); err == nil {
			id = v
		}
		if v, err := url.QueryUnescape(sec); err == nil {
			sec = v
		}
	} else {
		id, sec = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" {
		return client{}, errInvalidClient
	}
	app, err := h.lookupApp(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return client{}, errInvalidClient
	}
	if err != nil {
		return client{}, err
	}
	c := client{app: app}
	if sec != "" {
		// A client secret is 24 random bytes made by the service, stored as its SHA-256: with
		// nothing to guess from a dictionary, the check is one SHA-256 and a constant-time
		// compare (under a microsecond), not a password hash, so verified secrets need no cache.
		if !secret.Matches(app.ClientSecretHash, sec) {
			return client{}, errInvalidClient
		}
		c.authenticated = true
	}
	return c, nil
}

// formClient reads a form-encoded request of a client endpoint other than the token endpoint and
// authenticates its client; a confidential client must send its secret.
func (h *Handler) formClient(r *http.Request) (url.Values, *client, error) {
	form, ok := httpx.Form(r)
	if !ok {
		return nil, nil, oauthErr(wire.OAuthInvalidRequest, "The body must be application/x-www-form-urlencoded")
	}
	c, err := h.authenticateClient(r.Context(), r, form)
	if err == nil {
		err = requireConfidential(&c)
	}
	return form, &c, err
}

// redirectAllowed tells whether uri may receive codes for app.
func redirectAllowed(app *store.Application, uri string) bool {
	if uri == "" || len(uri) > 2048 {
		return false
	}
	if slices.Contains(app.RedirectURIs, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Fragment != "" || u.User != nil {
		return false
	}
	if app.PublicClient {
		if isLoopbackCallback(u) {
			return true
		}
		if uri == "sdkpp-"+strconv.FormatUint(app.ID, 10)+":/authorize/callback" {
			return true
		}
	}
	if loopbackURL(u) { // a registered loopback URI matches on any port (RFC 8252 7.3)
		for _, reg := range app.RedirectURIs {
			ru, err := url.Parse(reg)
			if err == nil && loopbackURL(ru) && ru.Scheme == u.Scheme && ru.Hostname() == u.Hostname() &&
				ru.Path == u.Path && ru.RawQuery == u.RawQuery {
				return true
			}
		}
	}
	return false
}

// loopbackURL: http on a loopback IP literal with a valid or empty port.
func loopbackURL(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return false
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		return err == nil && n > 0 && n < 65536
	}
	return true
}

// isLoopbackCallback: http://127.0.0.1:<port>/authorize/callback or http://[::1]:<port>/... .
func isLoopbackCallback(u *url.URL) bool {
	return loopbackURL(u) && (u.Hostname() == "127.0.0.1" || u.Hostname() == "::1") &&
		u.Path == "/authorize/callback" && u.RawQuery == "" && !u.ForceQuery
}

// withParams returns uri with params added to its query.
func withParams(uri string, params url.Values) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Set(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func oauthErr(code, desc string) *wire.OAuthError { return wire.OAuth(code, desc) }

// policy is what app may be granted beyond the ordinary scopes (rules AU-2, AU-3).
func policy(app *store.Application) scopes.Policy {
	return scopes.Policy{PremiumApproved: app.PremiumApproved, SDKTermsAccepted: app.SDKTermsAccepted}
}
