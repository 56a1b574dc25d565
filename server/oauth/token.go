package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"sdkpp/server/extauth"
	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// GrantDeviceCode is the device_code grant type.
const GrantDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"

// token serves POST /oauth2/token.
func (h *Handler) token(w http.ResponseWriter, r *http.Request) {
	form, ok := httpx.Form(r)
	if !ok {
		httpx.Error(w, r, h.Logger, oauthErr(wire.OAuthInvalidRequest,
			"The token endpoint accepts only application/x-www-form-urlencoded bodies"))
		return
	}
	// The client's application may come from this node's memo on PostgreSQL too: a client
	// secret reset on another node a moment ago may still be taken here for that moment.
	behind := store.MayBeBehind(r.Context())
	cv, err := h.authenticateClient(behind, r, form)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	c := &cv
	grant := form.Get("grant_type")
	var resp *wire.TokenResponse
	switch grant {
	case "authorization_code":
		resp, err = h.grantCode(r.Context(), c, form)
	case "refresh_token":
		resp, err = h.grantRefresh(w, r.Context(), c, form)
	case "client_credentials":
		resp, err = h.grantClientCredentials(r.Context(), behind, c, form)
	case GrantDeviceCode:
		resp, err = h.grantDevice(r.Context(), c, form)
	case "":
		err = oauthErr(wire.OAuthInvalidRequest, "grant_type is required")
	default:
		err = oauthErr(wire.OAuthUnsupportedGrantType, "unsupported grant_type")
	}
	if err != nil {
		var oe *wire.OAuthError
		if errors.As(err, &oe) {
			h.Logger.InfoContext(r.Context(), "token request refused", "application_id", c.app.ID, "grant_type", grant, "error", oe.Code)
		}
		httpx.Error(w, r, h.Logger, err)
		return
	}
	// At Debug, as the request's own line (httpx.Logging): a service issues tokens at the rate of
	// its requests, and a line at Info for each cost the endpoint more than its JSON answer.
	// Refusals above stay at Info.
	if h.Logger.Enabled(r.Context(), slog.LevelDebug) {
		h.Logger.DebugContext(r.Context(), "token issued", "application_id", c.app.ID, "grant_type", grant, "scope", resp.Scope)
	}
	w.Header().Set("Pragma", "no-cache")
	httpx.JSON(w, http.StatusOK, resp)
}

// requireConfidential fails unless a confidential client sent its secret.
func requireConfidential(c *client) error {
	if !c.app.PublicClient && !c.authenticated {
		return errInvalidClient
	}
	return nil
}

// respond issues tokens under a and builds the response, with an ID token for openid.
func (h *Handler) respond(ctx context.Context, a *store.Authorization, opts token.Options, nonce string) (*wire.TokenResponse, error) {
	now := h.Clock.Now()
	if opts.ExpiresAt.IsZero() && h.AccessTTL > 0 {
		opts.ExpiresAt = now.Add(h.AccessTTL)
	}
	issued, err := token.Issue(ctx, h.Store, h.Accounts.IDs, now, a, opts)
	if errors.Is(err, token.ErrGrantRevoked) {
		return nil, oauthErr(wire.OAuthInvalidGrant, "The grant was revoked")
	}
	if err != nil {
		return nil, err
	}
	resp := issued.Response(now, scopes.Join(issued.Scopes))
	if scopes.Has(issued.Scopes, scopes.OpenID) {
		if resp.IDToken, err = h.Provider.IDToken(strconv.FormatUint(a.UserID, 10), strconv.FormatUint(a.AppID, 10), nonce, now); err != nil {
			return nil, err
		}
	}
	return &resp, nil
}

func (h *Handler) grantCode(ctx context.Context, c *client, form url.Values) (*wire.TokenResponse, error) {
	code := form.Get("code")
	if code == "" {
		return nil, oauthErr(wire.OAuthInvalidRequest, "code is required")
	}
	ac, err := h.Store.UseAuthCode(ctx, secret.Hash(code), store.Grant{ID: h.Accounts.IDs.Next(), CreatedAt: h.Clock.Now()})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, oauthErr(wire.OAuthInvalidGrant, "Invalid authorization code")
	case err != nil:
		return nil, err
	case ac.Used:
		// RFC 6749 4.1.2: whoever redeemed it first may not be the client; what it got dies.
		if err := h.revokeGrant(ctx, ac.GrantID, "authorization code redeemed again"); err != nil {
			return nil, err
		}
		return nil, oauthErr(wire.OAuthInvalidGrant, "The authorization code was already used")
	case !h.Clock.Now().Before(ac.ExpiresAt):
		return nil, oauthErr(wire.OAuthInvalidGrant, "The authorization code expired")
	case ac.AppID != c.app.ID:
		return nil, oauthErr(wire.OAuthInvalidGrant, "The authorization code was issued to another client")
	case form.Get("redirect_uri") != ac.RedirectURI:
		return nil, oauthErr(wire.OAuthInvalidGrant, "redirect_uri does not match the authorization request")
	}
	if err := requireConfidential(c); err != nil {
		return nil, err
	}
	verifier := form.Get("code_verifier")
	switch {
	case ac.CodeChallenge == "" && verifier != "":
		// RFC 9700 2.1.1: a verifier for a code issued without a challenge is a PKCE downgrade
		// (a code obtained without PKCE injected into a client that uses it).
		return nil, oauthErr(wire.OAuthInvalidGrant, "code_verifier was sent, but the authorization request had no code_challenge")
	case ac.CodeChallenge != "":
		if verifier == "" {
			return nil, oauthErr(wire.OAuthInvalidGrant, "code_verifier is required")
		}
		if len(verifier) < 43 || len(verifier) > 128 || !pkceChars(verifier) || !s256Matches(verifier, ac.CodeChallenge) {
			return nil, oauthErr(wire.OAuthInvalidGrant, "code_verifier does not match the code_challenge") // rule AA-5
		}
	case !c.authenticated:
		return nil, oauthErr(wire.OAuthInvalidGrant, "a public client without its client secret must use PKCE (code_challenge S256)")
	}
	if err := h.checkUser(ctx, ac.UserID); err != nil {
		return nil, err
	}
	if err := h.mergeIfAsked(ctx, c.app, ac.UserID, form); err != nil {
		return nil, err
	}
	a, err := h.Accounts.Authorize(ctx, h.Store, c.app.ID, ac.UserID, ac.Scopes, ac.IntegrationType)
	if err != nil {
		return nil, err
	}
	return h.respond(ctx, a, token.Options{Refresh: true, Grant: ac.GrantID}, ac.Nonce)
}

// revokeGrant revokes grant id (RFC 9700 4.14.2, RFC 6749 4.1.2) and ends the gateway sessions
// its access tokens opened; a grant that is gone already is no error.
func (h *Handler) revokeGrant(ctx context.Context, id uint64, reason string) error {
	g, err := token.RevokeGrant(ctx, h.Store, h.Clock.Now(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	h.Logger.WarnContext(ctx, "token grant revoked: "+reason, "application_id", g.AppID, "user_id", g.UserID, "grant_id", g.ID)
	if h.OnGrantRevoked != nil {
		h.OnGrantRevoked(*g)
	}
	return nil
}

// checkUser refuses tokens for a user banned since the consent.
func (h *Handler) checkUser(ctx context.Context, userID uint64) error {
	u, err := h.Store.GetUser(ctx, userID)
	if err != nil {
		return err
	}
	if u.Banned(h.Clock.Now()) {
		return oauthErr(wire.OAuthInvalidGrant, "The account is banned")
	}
	return nil
}

func s256Matches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// mergeIfAsked merges the provisional account of external_auth_type/external_auth_token into
// userID when the token request carries them (rule AU-5).
func (h *Handler) mergeIfAsked(ctx context.Context, app *store.Application, userID uint64, form url.Values) error {
	typ, tok := form.Get("external_auth_type"), form.Get("external_auth_token")
	if typ == "" && tok == "" {
		return nil
	}
	if typ == "" {
		return wire.Required("external_auth_type")
	}
	if tok == "" {
		return wire.Required("external_auth_token")
	}
	id, err := h.External.Verify(ctx, h.Store, extauth.Request{App: app, Type: typ, Token: tok, Now: h.Clock.Now()})
	if err != nil {
		return ExternalError(err, true)
	}
	return h.Accounts.Merge(ctx, app, userID, id)
}

// ExternalError turns an external credential failure into the API error: an unsupported type is a
// 50035 naming external_auth_type; an invalid token is 530014 in a merge, else 401 50025.
func ExternalError(err error, merge bool) error {
	var inv *extauth.InvalidError
	switch {
	case errors.Is(err, extauth.ErrUnsupported):
		return wire.Invalid("external_auth_type", "EXTERNAL_AUTH_TYPE_UNSUPPORTED", "This external auth type is not supported for this application.")
	case errors.As(err, &inv) && merge:
		return wire.Coded(wire.CodeInvalidMergeSource, "Invalid merge source: "+inv.Reason)
	case errors.As(err, &inv):
		return &wire.APIError{Status: http.StatusUnauthorized, Code: wire.CodeInvalidOAuthToken, Message: "Invalid external auth token: " + inv.Reason}
	}
	return err
}

func (h *Handler) grantRefresh(w http.ResponseWriter, ctx context.Context, c *client, form url.Values) (*wire.TokenResponse, error) {
	rt := form.Get("refresh_token")
	if rt == "" {
		return nil, oauthErr(wire.OAuthInvalidRequest, "refresh_token is required")
	}
	if err := requireConfidential(c); err != nil {
		return nil, err
	}
	now := h.Clock.Now()
	var resp *wire.TokenResponse
	var reused *store.Token
	appID := c.app.ID // (the closure takes the id, not c: c stays on the token handler's stack)
	err := h.Store.WithTx(ctx, func(tx store.Store) error {
		old, err := token.UseRefresh(ctx, tx, now, rt)
		switch {
		case errors.Is(err, token.ErrInvalid):
			return oauthErr(wire.OAuthInvalidGrant, "Invalid refresh token") // rule AU-6
		case errors.Is(err, token.ErrReused) && old.AppID == appID:
			reused = old
			return oauthErr(wire.OAuthInvalidGrant, "Invalid refresh token")
		case err != nil && !errors.Is(err, token.ErrReused):
			return err
		case old.AppID != appID:
			return oauthErr(wire.OAuthInvalidGrant, "The refresh token was issued to another client")
		}
		granted := old.Scopes
		if s := form.Get("scope"); s != "" {
			granted = scopes.Expand(scopes.Parse(s))
			if !scopes.Subset(granted, old.Scopes) {
				return oauthErr(wire.OAuthInvalidScope, "scope exceeds the granted scopes")
			}
		}
		h2 := *h
		h2.Store = tx
		if err := h2.checkUser(ctx, old.UserID); err != nil {
			return err
		}
		if h2.deprecatedRefresh(ctx, old) {
			w.Header().Set("Deprecation", "true")
			h.Logger.WarnContext(ctx, "deprecated refresh_token grant for an OIDC provisional account; re-authenticate instead", "user_id", old.UserID)
		}
		a, err := tx.GetAuthorization(ctx, old.AuthorizationID)
		if errors.Is(err, store.ErrNotFound) {
			return oauthErr(wire.OAuthInvalidGrant, "The authorization was revoked")
		}
		if err != nil {
			return err
		}
		resp, err = h2.respond(ctx, a, token.Options{Scopes: granted, Refresh: true, Grant: old.GrantID}, "")
		return err
	})
	if reused != nil {
		// RFC 9700 2.2.2, 4.14.2: a used refresh token came back, so the client or an attacker
		// holds a copy; neither can tell which, so the whole grant goes.
		if rerr := h.revokeGrant(ctx, reused.GrantID, "a used refresh token was presented again"); rerr != nil {
			return nil, rerr
		}
	}
	return resp, err
}

// deprecatedRefresh tells whether the token is an OIDC provisional account's (rules AU-5, VER-4).
func (h *Handler) deprecatedRefresh(ctx context.Context, t *store.Token) bool {
	ids, err := h.Store.ListIdentitiesByUser(ctx, t.UserID)
	if err != nil {
		return false
	}
	for _, id := range ids {
		if id.AppID == t.AppID && id.Type == extauth.OIDC && id.ProvisionalUserID == t.UserID {
			return true
		}
	}
	return false
}

// grantClientCredentials issues a token to the client's bot; behind is ctx marked
// store.MayBeBehind, made once for the request.
func (h *Handler) grantClientCredentials(ctx, behind context.Context, c *client, form url.Values) (*wire.TokenResponse, error) {
	if !c.authenticated {
		return nil, errInvalidClient
	}
	requested := scopes.Parse(form.Get("scope"))
	if len(requested) == 0 {
		requested = []string{scopes.Identify}
	}
	if unknown := scopes.Unknown(requested); len(unknown) > 0 {
		return nil, oauthErr(wire.OAuthInvalidScope, "unknown scope "+unknown[0])
	}
	granted := scopes.Grant(requested, func(string) bool { return true }, policy(c.app))
	// The bot's authorization is written when it is new or its scopes change, not at every
	// request: a request then writes nothing (its token is signed).
	// From the memo on PostgreSQL too: an authorization changed on another node a moment ago
	// may be read as it was, as a read a moment earlier would have.
	a, err := h.Store.FindAuthorization(behind, c.app.ID, c.app.BotUserID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err != nil || !slices.Equal(a.Scopes, granted) || a.IntegrationType != -1 {
		if a, err = h.Accounts.Authorize(ctx, h.Store, c.app.ID, c.app.BotUserID, granted, -1); err != nil {
			return nil, err
		}
	}
	// A signed token: nothing written (see token's package doc).
	return h.respond(ctx, a, token.Options{Signed: true}, "")
}
