// Package admin serves the dev-only administration endpoints, registered only in dev mode and
// guarded by "Authorization: Admin <admin_token>" (the admin_token of the dev credentials file).
// They let tests in any language do what the Go API of package server does:
//
//	PUT    /dev/users/{user_id}/ban                  {"until": "<RFC 3339>"} or {} (permanent) -> 204
//	DELETE /dev/users/{user_id}/ban                                                        -> 204
//	PUT    /dev/applications/{application_id}/webhook           {"url": "..."}            -> 204
//	PUT    /dev/applications/{application_id}/premium-approved  {"approved": true}        -> 204
//	POST   /dev/external-token  {"application_id", "external_auth_type", "external_user_id",
//	                             "ttl_seconds"?}  -> {"token": "<dev-form external token>"}
//	GET    /dev/clock                                          -> {"now": "<RFC 3339>"}
//	POST   /dev/guilds          {"name", "owner_id", "members"?: [{"id", "manage_channels"}],
//	                             "channels"?: [{"name", "type", "position", "parent"? | "parent_id"?}]}
//	                             -> {"id", "name", "owner_id", "channels": [channel]} (package guilds)
//	POST   /dev/clock/advance   {"seconds": 601}               -> {"now": ...} (409 when the
//	                                                              service's clock is not movable)
//	PUT    /dev/guilds/{guild_id}/tag        {"tag": "1-4 chars" | null, "badge"?}     -> 204 (rule LIM-5)
//	PUT    /dev/users/{user_id}/primary-guild {"identity_guild_id", "identity_enabled"?} -> primary_guild (USR-2)
//	POST   /dev/users/{user_id}/connections  {"type", "id", "name", "verified"?, "visibility"?} -> connection,
//	                                          made now by the service's clock (rule CON-1)
//	PUT    /dev/applications/{application_id}/flags {"flags": "<all bits>", "channel_obfuscation"?: bool}
//	                                          -> application (rules APP-1, GW-1); stands in for the
//	                                          platform's review of privileged intents (LIM-4)
//	POST   /dev/applications/{application_id}/skus {"type", "name"} -> sku
//	POST   /dev/skus/{sku_id}/subscriptions  {"user_id", "period_seconds", "country"?} -> subscription
//	POST   /dev/subscriptions/{subscription_id}/cancel                -> subscription (ending, rule ST-3)
//
// Paths are relative to the API base (/api/v10).
package admin

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/apps"
	"sdkpp/server/extauth"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Handler serves the dev administration endpoints.
type Handler struct {
	Token    string // the admin token; empty disables every endpoint
	Store    store.Store
	Clock    clock.Clock
	Logger   *slog.Logger
	Accounts *accounts.Service
	// CreateGuild makes a guild for POST /dev/guilds (nil: the route is not served).
	CreateGuild func(ctx context.Context, spec wire.GuildSpec) (wire.DevGuild, error)
	// Apps makes SKUs and subscriptions (nil: those routes are not served).
	Apps *apps.Service
}

// Register adds the routes to mux (paths relative to the API base).
func (h *Handler) Register(mux httpx.Router) {
	mux.HandleFunc("PUT /dev/users/{user_id}/ban", h.guard(h.ban))
	mux.HandleFunc("DELETE /dev/users/{user_id}/ban", h.guard(h.unban))
	mux.HandleFunc("PUT /dev/applications/{application_id}/webhook", h.guard(h.webhook))
	mux.HandleFunc("PUT /dev/applications/{application_id}/premium-approved", h.guard(h.premium))
	mux.HandleFunc("POST /dev/external-token", h.guard(h.externalToken))
	mux.HandleFunc("GET /dev/clock", h.guard(h.clockNow))
	mux.HandleFunc("POST /dev/clock/advance", h.guard(h.clockAdvance))
	if h.CreateGuild != nil {
		mux.HandleFunc("POST /dev/guilds", h.guard(h.guild))
	}
	h.registerUsersApps(mux)
}

type handlerFunc func(r *http.Request) (status int, body any, err error)

// guard checks the admin token and writes the result.
func (h *Handler) guard(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got := httpx.Credential(r, "Admin")
		if h.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(h.Token)) != 1 {
			httpx.Error(w, r, h.Logger, wire.Unauthorized())
			return
		}
		status, body, err := fn(r)
		switch {
		case err != nil:
			if errors.Is(err, store.ErrNotFound) {
				err = &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeGeneral, Message: "404: Not Found"}
			}
			httpx.Error(w, r, h.Logger, err)
		case body == nil:
			w.WriteHeader(status)
		default:
			httpx.JSON(w, status, body)
		}
	}
}

func (h *Handler) ban(r *http.Request) (int, any, error) {
	id, err := httpx.PathID(r, "user_id")
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		Until *time.Time `json:"until"`
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return 0, nil, err
	}
	var until time.Time
	if body.Until != nil {
		until = *body.Until
	}
	return http.StatusNoContent, nil, h.Accounts.Ban(r.Context(), id, until)
}

func (h *Handler) unban(r *http.Request) (int, any, error) {
	id, err := httpx.PathID(r, "user_id")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, h.Accounts.Unban(r.Context(), id)
}

// updateApp loads the path's application, applies change and saves it.
func (h *Handler) updateApp(r *http.Request, change func(*store.Application)) (int, any, error) {
	id, err := httpx.PathID(r, "application_id")
	if err != nil {
		return 0, nil, err
	}
	app, err := h.Store.GetApplication(r.Context(), id)
	if err != nil {
		return 0, nil, err
	}
	change(app)
	return http.StatusNoContent, nil, h.Store.UpdateApplication(r.Context(), app)
}

func (h *Handler) webhook(r *http.Request) (int, any, error) {
	var body struct {
		URL string `json:"url"`
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return 0, nil, err
	}
	return h.updateApp(r, func(a *store.Application) { a.WebhookURL = body.URL })
}

func (h *Handler) premium(r *http.Request) (int, any, error) {
	var body struct {
		Approved bool `json:"approved"`
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return 0, nil, err
	}
	return h.updateApp(r, func(a *store.Application) { a.PremiumApproved = body.Approved })
}

func (h *Handler) externalToken(r *http.Request) (int, any, error) {
	var body struct {
		ApplicationID    wire.Snowflake `json:"application_id"`
		ExternalAuthType string         `json:"external_auth_type"`
		ExternalUserID   string         `json:"external_user_id"`
		TTLSeconds       int64          `json:"ttl_seconds"`
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return 0, nil, err
	}
	switch {
	case body.ApplicationID == 0:
		return 0, nil, wire.Required("application_id")
	case body.ExternalAuthType == "":
		return 0, nil, wire.Required("external_auth_type")
	case body.ExternalUserID == "":
		return 0, nil, wire.Required("external_user_id")
	}
	app, err := h.Store.GetApplication(r.Context(), uint64(body.ApplicationID))
	if err != nil {
		return 0, nil, err
	}
	ttl := time.Duration(body.TTLSeconds) * time.Second
	if ttl <= 0 {
		ttl = time.Hour
	}
	tok, err := extauth.DevTokenWithKey(app.ID, app.ClientSecretHash, body.ExternalAuthType, body.ExternalUserID, h.Clock.Now(), ttl)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"token": tok}, nil
}

func (h *Handler) clockNow(r *http.Request) (int, any, error) {
	return http.StatusOK, map[string]string{"now": h.Clock.Now().UTC().Format(time.RFC3339Nano)}, nil
}

func (h *Handler) clockAdvance(r *http.Request) (int, any, error) {
	c, ok := h.Clock.(clock.Controllable)
	if !ok {
		return 0, nil, &wire.APIError{Status: http.StatusConflict, Code: wire.CodeGeneral,
			Message: "The service's clock cannot be moved; start it with a movable clock (SDKPP_CLOCK)"}
	}
	var body struct {
		Seconds float64 `json:"seconds"`
	}
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return 0, nil, err
	}
	c.Advance(time.Duration(body.Seconds * float64(time.Second)))
	h.Logger.InfoContext(r.Context(), "clock advanced", "seconds", body.Seconds)
	return h.clockNow(r)
}

func (h *Handler) guild(r *http.Request) (int, any, error) {
	var spec wire.GuildSpec
	if err := httpx.DecodeJSON(r, &spec); err != nil {
		return 0, nil, err
	}
	g, err := h.CreateGuild(r.Context(), spec)
	return http.StatusOK, g, err
}
