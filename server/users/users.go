// Package users serves the user endpoints of the HTTP API:
//
//	GET   /users/@me                             (Bearer, scope identify; or Bot) -> user object
//	PATCH /users/@me/provisional-display-name    (Bearer; body {"global_name": "..."}) -> user object
//	GET   /users/@me/connections                 (Bearer, scope connections) -> [connection]
//
// The second is what Client::UpdateProvisionalAccountDisplayName calls: it renames a provisional
// account (1 to 32 characters after trimming); for a full account it fails with 530010. The
// third leaves out the connections of two game-platform providers as rule CON-1 dates it, by the
// service's clock (connections.go).
//
// A user object carries primary_guild, the guild whose tag the user shows (rule USR-2), when
// the user has one: {identity_guild_id, identity_enabled, tag, badge}, each nullable. A guild's
// tag is 1 to 4 characters (rule LIM-5), checked where it is set (primaryguild.go).
package users

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// Object is the wire form of u. premiumVisible says whether premium_type may show the user's tier:
// only for an app approved for identify.premium and a token carrying it (rules AU-2, USR-1).
func Object(u *store.User, premiumVisible bool) wire.User {
	out := wire.User{
		ID: wire.Snowflake(u.ID), Username: u.Username, Discriminator: "0", Bot: u.Bot,
		IsProvisional: u.Provisional,
	}
	if u.GlobalName != "" {
		name := u.GlobalName
		out.GlobalName = &name
	}
	if premiumVisible {
		out.PremiumType = u.PremiumType
	}
	out.PrimaryGuild = PrimaryGuildObject(u.PrimaryGuild)
	return out
}

// Profiles returns the user's external identities in an application as game profiles.
func Profiles(ctx context.Context, st store.Store, u *store.User, appID uint64) ([]wire.ApplicationProfile, error) {
	all, err := AllProfiles(ctx, st, u)
	return all[appID], err
}

// AllProfiles returns the user's external identities as game profiles, by application. Each
// application may see only its own (another game's identities are not its business).
func AllProfiles(ctx context.Context, st store.Store, u *store.User) (map[uint64][]wire.ApplicationProfile, error) {
	ids, err := st.ListIdentitiesByUser(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("users: identities of %d: %w", u.ID, err)
	}
	out := map[uint64][]wire.ApplicationProfile{}
	for _, id := range ids {
		out[id.AppID] = append(out[id.AppID], Profile(u, id))
	}
	return out, nil
}

// Profile is the game profile an external identity of u gives it.
func Profile(u *store.User, id store.Identity) wire.ApplicationProfile {
	name := u.GlobalName
	if name == "" {
		name = u.Username
	}
	return wire.ApplicationProfile{ApplicationID: wire.Snowflake(id.AppID), Username: name,
		ProviderIssuedUserID: id.ExternalID, ProviderType: id.Type}
}

// PremiumVisible tells whether a token of app with granted scopes may see premium_type (rule
// USR-1).
func PremiumVisible(app *store.Application, granted []string) bool {
	return app != nil && app.PremiumApproved && scopes.Has(granted, scopes.IdentifyPremium)
}

// ValidGlobalName checks a display name: 1 to 32 characters after trimming, no control characters.
func ValidGlobalName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	if !utf8.ValidString(name) || n < 1 || n > 32 {
		return "", wire.Invalid(field, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", wire.Invalid(field, "BASE_TYPE_BAD_CHARACTERS", "Must not contain control characters.")
		}
	}
	return name, nil
}

// Handler serves the user endpoints.
type Handler struct {
	Store  store.Store
	Clock  clock.Clock
	Logger *slog.Logger
	// ProfileTx, when set, commits a rename (in place of a plain transaction on Store), so that
	// the players who see the user (and the user's game profiles, which carry the name) are
	// told in the same transaction (see ProfileTx).
	ProfileTx ProfileTx
}

// Changed names the users whose game profiles or user object a change altered, by
// application.
type Changed map[uint64][]uint64

// Note adds userID to the users changed in appID, once.
func (c Changed) Note(appID, userID uint64) {
	if !slices.Contains(c[appID], userID) {
		c[appID] = append(c[appID], userID)
	}
}

// ProfileTx runs fn, a change of the game profiles or the user objects of some users, in one
// transaction whose commit also sends the players who see them the users as they now are
// (relationships.Service.ProfileTx): fn returns whom it changed, by application. users are
// those fn is expected to change; fn may be run again when it changed others (each run in a
// fresh transaction, the last one committed), so it must change nothing outside the store.
type ProfileTx func(ctx context.Context, users []uint64, fn func(st store.Store) (Changed, error)) error

// Register adds the routes to mux (paths relative to the API base).
func (h *Handler) Register(mux httpx.Router) {
	mux.HandleFunc("GET /users/@me", h.me)
	mux.HandleFunc("PATCH /users/@me/provisional-display-name", h.rename)
	mux.HandleFunc("GET /users/@me/connections", h.connections)
}

func (h *Handler) auth() token.Auth { return token.Auth{Store: h.Store, Clock: h.Clock} }

func (h *Handler) me(w http.ResponseWriter, r *http.Request) {
	if isBot(r) {
		h.botMe(w, r)
		return
	}
	t, err := h.auth().Bearer(r)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	if !scopes.Has(t.Scopes, scopes.Identify) {
		httpx.Error(w, r, h.Logger, wire.MissingAccess())
		return
	}
	u, app, err := h.load(r, t)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	httpx.JSON(w, http.StatusOK, Object(u, PremiumVisible(app, t.Scopes)))
}

func (h *Handler) load(r *http.Request, t *store.Token) (*store.User, *store.Application, error) {
	u, err := h.Store.GetUser(r.Context(), t.UserID)
	if err != nil {
		return nil, nil, err
	}
	app, err := h.Store.GetApplication(r.Context(), t.AppID)
	if err != nil {
		return nil, nil, err
	}
	return u, app, nil
}

func (h *Handler) rename(w http.ResponseWriter, r *http.Request) {
	t, err := h.auth().Bearer(r)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	var body wire.ProvisionalDisplayNameRequest
	if err := httpx.DecodeJSON(r, &body); err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	if body.GlobalName == nil {
		httpx.Error(w, r, h.Logger, wire.Required("global_name"))
		return
	}
	name, err := ValidGlobalName("global_name", *body.GlobalName)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	u, app, err := h.load(r, t)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	if u, err = h.setName(r.Context(), u.ID, name); err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	h.Logger.InfoContext(r.Context(), "provisional display name updated", "user_id", u.ID)
	httpx.JSON(w, http.StatusOK, Object(u, PremiumVisible(app, t.Scopes)))
}

// setName renames the provisional user id, in a ProfileTx when set: the user's game profiles
// in every application it has some in carry the name, and so change with it.
func (h *Handler) setName(ctx context.Context, id uint64, name string) (*store.User, error) {
	var u *store.User
	rename := func(st store.Store) (Changed, error) {
		var err error
		if u, err = st.GetUser(ctx, id); err != nil {
			return nil, err
		}
		if !u.Provisional {
			return nil, wire.Coded(wire.CodeNotProvisional, "Only a provisional account's display name can be set here")
		}
		u.GlobalName = name
		if err := st.UpdateUser(ctx, u); err != nil {
			return nil, err
		}
		all, err := AllProfiles(ctx, st, u)
		changed := Changed{}
		for app := range all {
			changed.Note(app, id)
		}
		return changed, err
	}
	if h.ProfileTx != nil {
		return u, h.ProfileTx(ctx, []uint64{id}, rename)
	}
	return u, h.Store.WithTx(ctx, func(st store.Store) error {
		_, err := rename(st)
		return err
	})
}
