// Package partner serves the provisional-account endpoints of the HTTP API (rules AU-4, AU-5,
// AU-8, AU-9, ST-2):
//
//	POST /partner-sdk/token/bot                        Authorization: Bot <bot token>
//	     {"external_user_id": "...", "preferred_global_name": "..."?}       -> token response
//	POST /partner-sdk/token
//	     {"client_id", "client_secret"? (omit for public clients), "external_auth_type",
//	      "external_auth_token", "nonce"?, "preferred_global_name"?}         -> token response
//	POST /partner-sdk/provisional-accounts/unmerge
//	     {"client_id", "client_secret"?, "external_auth_type", "external_auth_token"} -> 204
//	POST /partner-sdk/provisional-accounts/unmerge/bot  Authorization: Bot
//	     {"external_user_id"}                                              -> 204
//	POST /partner-sdk/child-token
//	     {"parent_access_token", "child_application_id", "parent_client_secret"?}
//	     -> {"access_token", "token_type", "expires_in", "scope"} (no refresh token)
//	PUT  /applications/{application_id}/oidc-config     Authorization: Bot (that app's)
//	     {"issuer", "client_id"}  -> {"application_id", "issuer", "client_id", "jwks_uri", "algorithms"}
//	GET  /applications/{application_id}/oidc-config     Authorization: Bot
//
// Bodies are JSON (the two client-credential calls also accept a form). The token responses are the
// OAuth token response {"access_token", "token_type": "Bearer", "expires_in": 604800,
// "refresh_token", "scope", "id_token"}; the ID token is signed by the service (sub = the user id,
// aud = the application id, nonce when given).
//
// Errors: a missing or wrong bot token is 401 {"message": "401: Unauthorized", "code": 0}; a wrong
// client secret likewise; a missing field is 50035 naming it; an unsupported external_auth_type is
// 50035 naming external_auth_type; an external token that fails verification is 401 code 50025
// (530014 when merging); unmerging an identity that is not merged is 530014; an OIDC configuration
// that fails validation is 50035 whose errors name issuer, discovery, jwks_uri or jwks with the
// reason.
package partner

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/extauth"
	"sdkpp/server/httpx"
	"sdkpp/server/oauth"
	"sdkpp/server/oidc"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// Handler serves the partner endpoints.
type Handler struct {
	Store    store.Store
	Clock    clock.Clock
	Logger   *slog.Logger
	Accounts *accounts.Service
	Provider *oidc.Provider
	External extauth.Registry
	OIDC     oidc.Options
}

// Register adds the routes to mux (paths relative to the API base).
func (h *Handler) Register(mux httpx.Router) {
	mux.HandleFunc("POST /partner-sdk/token/bot", h.botToken)
	mux.HandleFunc("POST /partner-sdk/token", h.externalToken)
	mux.HandleFunc("POST /partner-sdk/provisional-accounts/unmerge", h.unmerge)
	mux.HandleFunc("POST /partner-sdk/provisional-accounts/unmerge/bot", h.unmergeBot)
	mux.HandleFunc("POST /partner-sdk/child-token", h.childToken)
	mux.HandleFunc("PUT /applications/{application_id}/oidc-config", h.putOIDC)
	mux.HandleFunc("GET /applications/{application_id}/oidc-config", h.getOIDC)
}

func (h *Handler) auth() token.Auth { return token.Auth{Store: h.Store, Clock: h.Clock} }

// fail writes err.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpx.Error(w, r, h.Logger, err)
}

// externalUserID checks the bot endpoint's external_user_id.
func externalUserID(s string) (string, error) {
	if s == "" {
		return "", wire.Required("external_user_id")
	}
	if !utf8.ValidString(s) || len(s) > 128 {
		return "", wire.Invalid("external_user_id", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 128 in length.")
	}
	return s, nil
}

// preferredName checks an optional preferred_global_name.
func preferredName(p *string) (string, error) {
	if p == nil || strings.TrimSpace(*p) == "" {
		return "", nil
	}
	return users.ValidGlobalName("preferred_global_name", *p)
}

// signIn finds or creates the account of an external identity (rule AU-5), issues its tokens and
// writes the token response.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, app *store.Application, id extauth.Identity, preferred *string, nonce string) {
	ctx := r.Context()
	name, err := preferredName(preferred)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	u, err := h.Accounts.ForIdentity(ctx, app, id, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if u.Banned(h.Clock.Now()) {
		h.fail(w, r, &wire.APIError{Status: http.StatusForbidden, Code: wire.CodeMissingAccess, Message: "The account is banned"})
		return
	}
	a, err := h.Accounts.Authorize(ctx, h.Store, app.ID, u.ID, accounts.ProvisionalScopes(), -1)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.Clock.Now()
	grant := h.Accounts.IDs.Next()
	if err := token.NewGrant(ctx, h.Store, grant, now, app.ID, u.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	issued, err := token.Issue(ctx, h.Store, h.Accounts.IDs, now, a, token.Options{Refresh: true, Grant: grant})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp := issued.Response(now, strings.Join(issued.Scopes, " "))
	if resp.IDToken, err = h.Provider.IDToken(strconv.FormatUint(u.ID, 10), strconv.FormatUint(app.ID, 10), nonce, now); err != nil {
		h.fail(w, r, err)
		return
	}
	h.Logger.InfoContext(ctx, "provisional token issued", "application_id", app.ID, "user_id", u.ID, "provisional", u.Provisional)
	httpx.JSON(w, http.StatusOK, resp)
}

// botRequest authenticates the bot (rule AU-8) and reads a BotTokenRequest.
func (h *Handler) botRequest(r *http.Request) (*store.Application, *wire.BotTokenRequest, error) {
	app, err := h.auth().Bot(r) // rule AU-8
	if err != nil {
		return nil, nil, err
	}
	var body wire.BotTokenRequest
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, nil, err
	}
	if body.ExternalUserID, err = externalUserID(body.ExternalUserID); err != nil {
		return nil, nil, err
	}
	return app, &body, nil
}

// botToken serves POST /partner-sdk/token/bot.
func (h *Handler) botToken(w http.ResponseWriter, r *http.Request) {
	app, body, err := h.botRequest(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.signIn(w, r, app, extauth.Identity{Type: extauth.BotExternalUser, ExternalID: body.ExternalUserID}, body.PreferredGlobalName, "")
}

// decodeExternal reads an ExternalTokenRequest from JSON or a form.
func decodeExternal(r *http.Request) (*wire.ExternalTokenRequest, error) {
	var body wire.ExternalTokenRequest
	if httpx.IsForm(r) {
		form, ok := httpx.Form(r)
		if !ok {
			return nil, wire.InvalidJSON()
		}
		if id := form.Get("client_id"); id != "" {
			sf, ok := wire.ParseSnowflake(id)
			if !ok {
				return nil, wire.Invalid("client_id", "NUMBER_TYPE_COERCE", "Value is not snowflake.")
			}
			body.ClientID = sf
		}
		body.ClientSecret, body.ExternalAuthType = form.Get("client_secret"), form.Get("external_auth_type")
		body.ExternalAuthToken, body.Nonce = form.Get("external_auth_token"), form.Get("nonce")
		if n := form.Get("preferred_global_name"); n != "" {
			body.PreferredGlobalName = &n
		}
		return &body, nil
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	return &body, nil
}

// clientApp authenticates the client of an external-credentials call: the secret is optional for
// public clients and must be right when given.
func (h *Handler) clientApp(ctx context.Context, body *wire.ExternalTokenRequest) (*store.Application, error) {
	if body.ClientID == 0 {
		return nil, wire.Required("client_id")
	}
	app, err := h.Store.GetApplication(ctx, uint64(body.ClientID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.Unauthorized()
	}
	if err != nil {
		return nil, err
	}
	if body.ClientSecret != "" && !secret.Matches(app.ClientSecretHash, body.ClientSecret) {
		return nil, wire.Unauthorized()
	}
	if body.ClientSecret == "" && !app.PublicClient {
		return nil, wire.Unauthorized()
	}
	return app, nil
}

// verifyExternal authenticates the client and verifies the external credentials.
func (h *Handler) verifyExternal(r *http.Request, merge bool) (*store.Application, *wire.ExternalTokenRequest, extauth.Identity, error) {
	body, err := decodeExternal(r)
	if err != nil {
		return nil, nil, extauth.Identity{}, err
	}
	app, err := h.clientApp(r.Context(), body)
	if err != nil {
		return nil, nil, extauth.Identity{}, err
	}
	switch {
	case body.ExternalAuthType == "":
		return nil, nil, extauth.Identity{}, wire.Required("external_auth_type")
	case body.ExternalAuthToken == "":
		return nil, nil, extauth.Identity{}, wire.Required("external_auth_token")
	}
	id, err := h.External.Verify(r.Context(), h.Store, extauth.Request{App: app, Type: body.ExternalAuthType,
		Token: body.ExternalAuthToken, Nonce: body.Nonce, Now: h.Clock.Now()})
	if err != nil {
		var inv *extauth.InvalidError
		if errors.As(err, &inv) {
			h.Logger.InfoContext(r.Context(), "external token refused", "application_id", app.ID, "type", body.ExternalAuthType, "reason", inv.Reason)
		}
		return nil, nil, extauth.Identity{}, oauth.ExternalError(err, merge)
	}
	return app, body, id, nil
}

// externalToken serves POST /partner-sdk/token.
func (h *Handler) externalToken(w http.ResponseWriter, r *http.Request) {
	app, body, id, err := h.verifyExternal(r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.signIn(w, r, app, id, body.PreferredGlobalName, body.Nonce)
}

// unmerge serves POST /partner-sdk/provisional-accounts/unmerge.
func (h *Handler) unmerge(w http.ResponseWriter, r *http.Request) {
	app, _, id, err := h.verifyExternal(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.doUnmerge(w, r, app, id)
}

func (h *Handler) doUnmerge(w http.ResponseWriter, r *http.Request, app *store.Application, id extauth.Identity) {
	if _, err := h.Accounts.Unmerge(r.Context(), app, id); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// unmergeBot serves POST /partner-sdk/provisional-accounts/unmerge/bot.
func (h *Handler) unmergeBot(w http.ResponseWriter, r *http.Request) {
	app, body, err := h.botRequest(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.doUnmerge(w, r, app, extauth.Identity{Type: extauth.BotExternalUser, ExternalID: body.ExternalUserID})
}

// childToken serves POST /partner-sdk/child-token (rule AU-4).
func (h *Handler) childToken(w http.ResponseWriter, r *http.Request) {
	var body wire.ChildTokenRequest
	if err := httpx.DecodeJSON(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	switch {
	case body.ParentAccessToken == "":
		h.fail(w, r, wire.Required("parent_access_token"))
		return
	case body.ChildApplicationID == 0:
		h.fail(w, r, wire.Required("child_application_id"))
		return
	}
	ctx := r.Context()
	now := h.Clock.Now()
	parentTok, err := token.Lookup(ctx, h.Store, now, body.ParentAccessToken, store.AccessToken)
	if errors.Is(err, token.ErrInvalid) {
		h.fail(w, r, &wire.APIError{Status: http.StatusUnauthorized, Code: wire.CodeInvalidOAuthToken, Message: "Invalid OAuth2 access token"})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	parentApp, err := h.Store.GetApplication(ctx, parentTok.AppID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if body.ParentClientSecret != "" && !secret.Matches(parentApp.ClientSecretHash, body.ParentClientSecret) ||
		body.ParentClientSecret == "" && !parentApp.PublicClient {
		h.fail(w, r, wire.Unauthorized())
		return
	}
	child, err := h.Store.GetApplication(ctx, uint64(body.ChildApplicationID))
	if errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, wire.Invalid("child_application_id", "UNKNOWN_APPLICATION", "Unknown application."))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if child.ParentID != parentApp.ID || child.PublisherID != parentApp.PublisherID {
		h.fail(w, r, wire.Invalid("child_application_id", "NOT_A_CHILD_APPLICATION",
			"The application is not a child of the token's application."))
		return
	}
	parentAuth, err := h.Store.GetAuthorization(ctx, parentTok.AuthorizationID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if parentAuth.ParentID != 0 {
		h.fail(w, r, wire.Invalid("parent_access_token", "CHILD_TOKEN", "A child token cannot be exchanged again."))
		return
	}
	a, err := h.Accounts.AuthorizeChild(ctx, parentAuth, child.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	issued, err := token.Issue(ctx, h.Store, h.Accounts.IDs, now, a, token.Options{Scopes: parentTok.Scopes, ExpiresAt: parentTok.ExpiresAt})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.Logger.InfoContext(ctx, "child token issued", "parent_application_id", parentApp.ID, "child_application_id", child.ID, "user_id", a.UserID)
	httpx.JSON(w, http.StatusOK, issued.Response(now, strings.Join(issued.Scopes, " ")))
}

// appOfPath authenticates the bot of the path's application.
func (h *Handler) appOfPath(r *http.Request) (*store.Application, error) {
	app, err := h.auth().Bot(r)
	if err != nil {
		return nil, err
	}
	if id, ok := wire.ParseSnowflake(r.PathValue("application_id")); !ok || uint64(id) != app.ID {
		return nil, wire.MissingAccess()
	}
	return app, nil
}

// ConfigureOIDC validates and stores an application's OIDC issuer (rule AU-9).
func (h *Handler) ConfigureOIDC(ctx context.Context, appID uint64, issuer, clientID string) (*store.OIDCConfig, error) {
	if issuer == "" {
		return nil, wire.Required("issuer")
	}
	if clientID == "" {
		return nil, wire.Required("client_id")
	}
	v, err := h.OIDC.ValidateIssuer(ctx, issuer)
	if err != nil {
		var oe *oidc.Error
		if errors.As(err, &oe) {
			h.Logger.InfoContext(ctx, "OIDC issuer refused", "application_id", appID, "field", oe.Field, "reason", oe.Reason)
			return nil, wire.Invalid(oe.Field, "OIDC_CONFIGURATION_INVALID", oe.Reason)
		}
		return nil, err
	}
	c := &store.OIDCConfig{AppID: appID, Issuer: v.Issuer, ClientID: clientID, JWKSURI: v.JWKSURI, JWKS: v.JWKS,
		UpdatedAt: h.Clock.Now()}
	if err := h.Store.PutOIDCConfig(ctx, c); err != nil {
		return nil, err
	}
	h.Logger.InfoContext(ctx, "OIDC issuer configured", "application_id", appID, "issuer", v.Issuer)
	return c, nil
}

func oidcWire(c *store.OIDCConfig) wire.OIDCConfig {
	return wire.OIDCConfig{ApplicationID: wire.Snowflake(c.AppID), Issuer: c.Issuer, ClientID: c.ClientID,
		JWKSURI: c.JWKSURI, Algorithms: algorithmNames()}
}

func algorithmNames() []string {
	out := make([]string, len(oidc.Algorithms))
	for i, a := range oidc.Algorithms {
		out[i] = string(a)
	}
	return out
}

func (h *Handler) putOIDC(w http.ResponseWriter, r *http.Request) {
	app, err := h.appOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var body wire.OIDCConfigRequest
	if err := httpx.DecodeJSON(r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.ConfigureOIDC(r.Context(), app.ID, body.Issuer, body.ClientID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, oidcWire(c))
}

func (h *Handler) getOIDC(w http.ResponseWriter, r *http.Request) {
	app, err := h.appOfPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.Store.GetOIDCConfig(r.Context(), app.ID)
	if errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeGeneral, Message: "No OIDC issuer configured"})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, oidcWire(c))
}
