package users

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// connections serves GET /users/@me/connections (scope connections): the user's connections but
// those rule CON-1 leaves out at the service's time.
func (h *Handler) connections(w http.ResponseWriter, r *http.Request) {
	t, err := h.auth().Bearer(r)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	if !scopes.Has(t.Scopes, scopes.Connections) {
		httpx.Error(w, r, h.Logger, wire.MissingAccess())
		return
	}
	list, err := h.Store.ListConnections(r.Context(), t.UserID)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	now := h.Clock.Now()
	out := make([]wire.Connection, 0, len(list))
	for _, c := range list {
		if wire.ConnectionVisible(c.Type, c.CreatedAt, now) { // rule CON-1
			out = append(out, ConnectionObject(&c))
		}
	}
	httpx.JSON(w, http.StatusOK, out)
}

// ConnectionObject is the wire form of a connection.
func ConnectionObject(c *store.Connection) wire.Connection {
	return wire.Connection{ID: c.ID, Name: c.Name, Type: c.Type, Revoked: c.Revoked, Integrations: []struct{}{},
		Verified: c.Verified, FriendSync: c.FriendSync, ShowActivity: c.ShowActivity, TwoWayLink: c.TwoWayLink,
		Visibility: c.Visibility}
}

// Limits of a connection's id and name, in characters.
const (
	MaxConnectionIDChars   = 100
	MaxConnectionNameChars = 100
)

// AddConnection stores a connection of the user made at c.CreatedAt (the dev route POST
// /dev/users/{user_id}/connections). Errors: 404 10013 for an unknown user, 400 50035 for a type
// the service does not know, an empty or overlong id or name, a visibility other than 0 or 1.
func AddConnection(ctx context.Context, st store.Store, c *store.Connection) (wire.Connection, error) {
	if _, err := st.GetUser(ctx, c.UserID); errors.Is(err, store.ErrNotFound) {
		return wire.Connection{}, wire.UnknownUser()
	} else if err != nil {
		return wire.Connection{}, err
	}
	if !slices.Contains(wire.ConnectionTypes, c.Type) {
		return wire.Connection{}, wire.Invalid("type", "BASE_TYPE_CHOICES", "Value must be one of "+strings.Join(wire.ConnectionTypes, ", ")+".")
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"id", c.ID, MaxConnectionIDChars}, {"name", c.Name, MaxConnectionNameChars}} {
		if n := utf8.RuneCountInString(f.v); n < 1 || n > f.max || !utf8.ValidString(f.v) {
			return wire.Connection{}, wire.Invalid(f.name, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
		}
	}
	if c.Visibility != 0 && c.Visibility != 1 {
		return wire.Connection{}, wire.Invalid("visibility", "BASE_TYPE_CHOICES", "Value must be one of {0, 1}.")
	}
	if err := st.PutConnection(ctx, c); err != nil {
		return wire.Connection{}, err
	}
	return ConnectionObject(c), nil
}
