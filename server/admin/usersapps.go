package admin

import (
	"net/http"

	"sdkpp/server/apps"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// registerUsersApps adds the dev routes of users' guild tags and connections and of applications'
// flags, SKUs and subscriptions (see the package doc).
func (h *Handler) registerUsersApps(mux httpx.Router) {
	mux.HandleFunc("PUT /dev/guilds/{guild_id}/tag", h.guard(h.guildTag))
	mux.HandleFunc("PUT /dev/users/{user_id}/primary-guild", h.guard(h.primaryGuild))
	mux.HandleFunc("POST /dev/users/{user_id}/connections", h.guard(h.connection))
	mux.HandleFunc("PUT /dev/applications/{application_id}/flags", h.guard(h.appFlags))
	if h.Apps != nil {
		mux.HandleFunc("POST /dev/applications/{application_id}/skus", h.guard(h.sku))
		mux.HandleFunc("POST /dev/skus/{sku_id}/subscriptions", h.guard(h.subscribe))
		mux.HandleFunc("POST /dev/subscriptions/{subscription_id}/cancel", h.guard(h.cancel))
	}
}

// decodeAt reads the JSON body and the path's id.
func decodeAt(r *http.Request, param string, body any) (uint64, error) {
	id, err := httpx.PathID(r, param)
	if err != nil {
		return 0, err
	}
	return id, httpx.DecodeJSON(r, body)
}

func (h *Handler) guildTag(r *http.Request) (int, any, error) {
	var body wire.GuildTagRequest
	id, err := decodeAt(r, "guild_id", &body)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, users.SetGuildTag(r.Context(), h.Store, id, body)
}

func (h *Handler) primaryGuild(r *http.Request) (int, any, error) {
	var body wire.PrimaryGuildRequest
	id, err := decodeAt(r, "user_id", &body)
	if err != nil {
		return 0, nil, err
	}
	pg, err := users.SetPrimaryGuild(r.Context(), h.Store, id, body)
	return http.StatusOK, pg, err
}

func (h *Handler) connection(r *http.Request) (int, any, error) {
	var body wire.ConnectionRequest
	id, err := decodeAt(r, "user_id", &body)
	if err != nil {
		return 0, nil, err
	}
	c, err := users.AddConnection(r.Context(), h.Store, &store.Connection{UserID: id, Type: body.Type, ID: body.ID,
		Name: body.Name, Verified: body.Verified, Visibility: body.Visibility, CreatedAt: h.Clock.Now()})
	return http.StatusOK, c, err
}

func (h *Handler) appFlags(r *http.Request) (int, any, error) {
	var body wire.ApplicationFlagsRequest
	id, err := decodeAt(r, "application_id", &body)
	if err != nil {
		return 0, nil, err
	}
	app, err := apps.SetFlags(r.Context(), h.Store, id, body)
	if err == nil && h.Apps != nil {
		h.Apps.FlagsChanged(r.Context(), id)
	}
	return http.StatusOK, app, err
}

func (h *Handler) sku(r *http.Request) (int, any, error) {
	var body wire.SKURequest
	id, err := decodeAt(r, "application_id", &body)
	if err != nil {
		return 0, nil, err
	}
	k, err := h.Apps.CreateSKU(r.Context(), id, body)
	return http.StatusOK, k, err
}

func (h *Handler) subscribe(r *http.Request) (int, any, error) {
	var body wire.SubscriptionRequest
	id, err := decodeAt(r, "sku_id", &body)
	if err != nil {
		return 0, nil, err
	}
	x, err := h.Apps.Subscribe(r.Context(), id, body)
	return http.StatusOK, x, err
}

func (h *Handler) cancel(r *http.Request) (int, any, error) {
	id, err := httpx.PathID(r, "subscription_id")
	if err != nil {
		return 0, nil, err
	}
	x, err := h.Apps.Cancel(r.Context(), id)
	return http.StatusOK, x, err
}
