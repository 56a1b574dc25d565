package core

import (
	"context"

	"sdkpp/core/auth"
	"sdkpp/core/internal/opt"
	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/records"
	"sdkpp/core/token"
	"sdkpp/internal/clock"
)

// The authorization surface of the Client: each method checks and converts what the game passes,
// runs the flow of core/auth on a goroutine of the Client and answers the callback once.

// AuthorizeTimeout bounds how long Authorize waits for the user in the browser.
const AuthorizeTimeout = auth.AuthorizeTimeout

// ErrNoScopes is returned for AuthorizationArgs without scopes (rule AA-2).
var ErrNoScopes = auth.ErrNoScopes

// ProvisionalDisplayNamePath is the endpoint of UpdateProvisionalAccountDisplayName.
const ProvisionalDisplayNamePath = auth.ProvisionalDisplayNamePath

// authState is the Client's authorization: the token store (core/token), the flows (core/auth),
// each with its own lock, and the handlers.
type authState struct {
	tokens *token.Store
	flows  *auth.Flows

	expiry handlerSlot[ClientTokenExpirationCallback]
}

// setAuth makes the token store and the flows of c, on clk.
func (c *Client) setAuth(clk clock.Clock) {
	c.auth.flows = auth.New(auth.Deps{
		API: c.api, Clock: clk, Secrets: Secrets, WebBase: c.webBase,
		Logf:  func(sev auth.Severity, format string, args ...any) { c.logf(authSeverity[sev], format, args...) },
		Open:  c.openURL,
		Start: c.start,
		Renew: func() {
			if gw := c.gateway(); gw != nil {
				gw.Renew()
			}
		},
		Expiring: c.tokenExpiring,
		Refreshed: func(t *auth.Tokens) {
			c.handlers.tokenRefreshed.Post(func(f ClientTokenRefreshedCallback) {
				f(t.AccessToken, t.RefreshToken, tokenTypeOf(t), t.ExpiresIn, t.Scope)
			})
		},
	})
	c.auth.tokens = token.New(clk, token.Timers{Refresh: c.auth.flows.AutoRefresh, Expiring: c.tokenExpiring, Warn: c.auth.expiry.IsSet})
	c.auth.flows.Tokens = c.auth.tokens
}

var authSeverity = map[auth.Severity]LoggingSeverity{
	auth.Info: LoggingSeverityInfo, auth.Warning: LoggingSeverityWarning, auth.Error: LoggingSeverityError}

// tokenTypeOf maps the wire token type to the enum.
func tokenTypeOf(t *auth.Tokens) AuthorizationTokenType {
	if t.Bearer() {
		return AuthorizationTokenTypeBearer
	}
	return AuthorizationTokenTypeUser
}

// appIDOr returns id, or the Client's application id when id is 0.
func (c *Client) appIDOr(id uint64) uint64 {
	if id == 0 {
		return c.appID.Load()
	}
	return id
}

// tokenOp answers cb, exactly once, with the tokens fetch obtains on a goroutine of c; what names
// the operation in the log.
func (c *Client) tokenOp(what string, cb Callback[ClientTokenExchangeCallback], fetch func(context.Context) (*auth.Tokens, error)) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "", "", AuthorizationTokenTypeBearer, 0, "") }, cb.Release)
	c.start(func(ctx context.Context) {
		t, err := fetch(ctx)
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s failed: %v", what, err)
		}
		once.Fire(func() {
			if err != nil {
				cb.Fn(resultOf(err), "", "", AuthorizationTokenTypeBearer, 0, "")
				return
			}
			cb.Fn(success(), t.AccessToken, t.RefreshToken, tokenTypeOf(t), t.ExpiresIn, t.Scope)
		})
	})
}

// grant runs g at /oauth2/token and answers cb.
func (c *Client) grant(g auth.Grant, cb Callback[ClientTokenExchangeCallback]) {
	what := "token request (" + g["grant_type"][0] + ")"
	c.tokenOp(what, cb, func(ctx context.Context) (*auth.Tokens, error) { return c.auth.flows.Exchange(ctx, g) })
}

// UpdateToken sets the token the client uses for the service.
func (c *Client) UpdateToken(tokenType AuthorizationTokenType, token string, cb Callback[ClientUpdateTokenCallback]) {
	once := resultOnce(c, cb)
	if token == "" {
		once.Fire(func() { cb.Fn(resultOf(sdkerr.Invalid("UpdateToken: the token is empty"))) })
		return
	}
	Secrets.Add(token)
	changed := c.auth.tokens.Set(token)
	if gw := c.gateway(); changed && gw != nil {
		// A live connection is renewed, so that the service authenticates it with the new token.
		c.logf(LoggingSeverityInfo, "UpdateToken: a new token; renewing the gateway connection")
		gw.Renew()
	}
	once.Fire(func() { cb.Fn(success()) })
}

// authHeader is the Authorization header for the client's token, or "".
func (c *Client) authHeader() string { return c.auth.tokens.Header() }

// SetTokenExpirationCallback sets the handler that runs when the token set by UpdateToken is five
// minutes from expiry (or already expired) and the SDK cannot refresh it itself: the SDK knows the
// expiry of the tokens it obtained, and refreshes those that came with a refresh token
// (core/auth); the handler then runs only when that refresh is refused or keeps failing.
func (c *Client) SetTokenExpirationCallback(cb Callback[ClientTokenExpirationCallback]) {
	setHandler(c, &c.auth.expiry, cb)
	c.auth.tokens.Reschedule()
}

// tokenExpiring queues the expiration callback.
func (c *Client) tokenExpiring() {
	c.auth.expiry.Post(func(f ClientTokenExpirationCallback) { f() })
}

// FetchCurrentUser validates token by fetching its user.
func (c *Client) FetchCurrentUser(tokenType AuthorizationTokenType, token string, cb Callback[ClientFetchCurrentUserCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), 0, "") }, cb.Release)
	Secrets.Add(token)
	c.start(func(ctx context.Context) {
		id, name, err := c.auth.flows.CurrentUser(ctx, token)
		once.Fire(func() { cb.Fn(resultOf(err), id, name) })
	})
}

// ExchangeChildToken exchanges a parent application's access token for a token of a child
// application of the same publisher (rule AU-4). Child tokens have no refresh token.
func (c *Client) ExchangeChildToken(parentApplicationToken string, childApplicationId uint64, cb Callback[ClientExchangeChildTokenCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "", AuthorizationTokenTypeBearer, 0, "") }, cb.Release)
	Secrets.Add(parentApplicationToken)
	c.start(func(ctx context.Context) {
		t, err := c.auth.flows.ChildToken(ctx, parentApplicationToken, childApplicationId)
		if err != nil {
			c.logf(LoggingSeverityWarning, "ExchangeChildToken failed: %v", err)
			once.Fire(func() { cb.Fn(resultOf(err), "", AuthorizationTokenTypeBearer, 0, "") })
			return
		}
		once.Fire(func() { cb.Fn(success(), t.AccessToken, tokenTypeOf(t), t.ExpiresIn, t.Scope) })
	})
}

// GetProvisionalToken signs in a provisional account with external credentials (rule AU-5).
func (c *Client) GetProvisionalToken(applicationId uint64, externalAuthType AuthenticationExternalAuthType, externalAuthToken string, cb Callback[ClientTokenExchangeCallback]) {
	Secrets.Add(externalAuthToken)
	c.tokenOp("GetProvisionalToken", cb, func(ctx context.Context) (*auth.Tokens, error) {
		return c.auth.flows.ProvisionalToken(ctx, c.appIDOr(applicationId), records.ExternalAuthName(externalAuthType), externalAuthToken)
	})
}

// UpdateProvisionalAccountDisplayName renames the signed-in provisional account.
func (c *Client) UpdateProvisionalAccountDisplayName(name string, cb Callback[ClientUpdateProvisionalAccountDisplayNameCallback]) {
	authCall(c, "UpdateProvisionalAccountDisplayName", nil, cb, func(ctx context.Context, header string) error {
		return c.api.Do(ctx, auth.DisplayNameRequest(header, name), nil)
	})
}

// openURL shows u to the user: through the game's opener, or the system browser.
func (c *Client) openURL(u string) error {
	if c.handlers.openUrl.Post(func(f ClientOpenUrlCallback) { f(u) }) {
		return nil
	}
	return auth.OpenBrowser(u)
}

// CreateAuthorizationCodeVerifier returns a new PKCE verifier and its S256 challenge.
func (c *Client) CreateAuthorizationCodeVerifier() *AuthorizationCodeVerifier {
	v := c.auth.flows.NewVerifier()
	return records.NewAuthorizationCodeVerifier(v.Verifier, v.Challenge)
}

// authArgs converts the game's AuthorizationArgs.
func authArgs(a *AuthorizationArgs) auth.Args {
	args := auth.Args{ClientID: a.ClientId(), Scopes: a.Scopes(), State: opt.Ptr(a.State()), Nonce: opt.Ptr(a.Nonce()),
		CustomSchemeParam: opt.Ptr(a.CustomSchemeParam())}
	if ch := a.CodeChallenge(); ch != nil {
		args.CodeChallenge = opt.Ptr(ch.Challenge(), true)
	}
	if it, ok := a.IntegrationType(); ok {
		args.IntegrationType = opt.Ptr(int32(it), true)
	}
	return args
}

// Authorize starts the OAuth2 authorization code flow (rule AU-1): it opens the consent page and
// answers with the code and the redirect URI once the user approves. An Authorize in progress is
// aborted by a new one.
func (c *Client) Authorize(args *AuthorizationArgs, cb Callback[ClientAuthorizationCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "", "") }, cb.Release)
	flow, err := c.auth.flows.StartAuthorize(c.ctx, authArgs(args), c.appID.Load())
	if err != nil {
		once.Fire(func() { cb.Fn(resultOf(err), "", "") })
		return
	}
	if !c.start(func(context.Context) {
		code, redirect, err := flow.Wait()
		once.Fire(func() { cb.Fn(resultOf(err), code, redirect) })
	}) {
		flow.Close()
	}
}

// GetTokenFromDeviceProvisionalMerge is GetTokenFromDevice that also merges the provisional
// account identified by the external credentials.
func (c *Client) GetTokenFromDeviceProvisionalMerge(args *DeviceAuthorizationArgs, externalAuthType AuthenticationExternalAuthType, externalAuthToken string, cb Callback[ClientTokenExchangeCallback]) {
	Secrets.Add(externalAuthToken)
	c.deviceFlow(args, auth.Grant{}.WithExternal(records.ExternalAuthName(externalAuthType), externalAuthToken), cb)
}

func (c *Client) deviceFlow(args *DeviceAuthorizationArgs, extra auth.Grant, cb Callback[ClientTokenExchangeCallback]) {
	clientID := c.appIDOr(args.ClientId())
	scopes, err := auth.CheckDevice(clientID, args.Scopes())
	if err != nil { // refused before anything is sent; a flow in progress goes on
		c.tokenOp("device authorization", cb, func(context.Context) (*auth.Tokens, error) { return nil, err })
		return
	}
	flow := c.auth.flows.StartDevice(c.ctx, clientID, scopes, extra)
	c.tokenOp("device authorization", cb, func(context.Context) (*auth.Tokens, error) { return flow.Run() })
}

// OpenAuthorizeDeviceScreen shows the verification page for a user code that the game's backend
// obtained (the backend-driven device flow).
func (c *Client) OpenAuthorizeDeviceScreen(clientId uint64, userCode string) {
	if err := c.auth.flows.OpenDeviceScreen(c.appIDOr(clientId), userCode); err != nil {
		c.logf(LoggingSeverityError, "OpenAuthorizeDeviceScreen: %v", err)
	}
}

// CloseAuthorizeDeviceScreen closes the verification page opened by OpenAuthorizeDeviceScreen;
// the screen-closed callback runs.
func (c *Client) CloseAuthorizeDeviceScreen() {
	if c.auth.flows.CloseDeviceScreen() {
		c.handlers.authorizeDeviceScreenClosed.Post(func(f ClientAuthorizeDeviceScreenClosedCallback) { f() })
	}
}
