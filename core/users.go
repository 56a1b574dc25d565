package core

// The Client's views of users: UserHandle (a live view of a cached user, core/users) and the
// game profiles of a user (UserApplicationProfileHandle).

import (
	"sdkpp/core/users"
	"sdkpp/wire"
)

// GetCurrentUserV2 returns the signed-in user once the client is Ready, else nil.
func (c *Client) GetCurrentUserV2() *UserHandle {
	if id := c.users.Current(); id != 0 && !c.isClosed() {
		return &UserHandle{c: c, id: id}
	}
	return nil
}

// GetUser returns a user from the cache, or nil; it makes no request.
func (c *Client) GetUser(userId uint64) *UserHandle {
	if _, ok := c.users.Get(userId); !ok || c.isClosed() {
		return nil
	}
	return &UserHandle{c: c, id: userId}
}

// UserHandle is a live view of a cached user: it reads the newest values, and defaults once the
// Client is closed.
type UserHandle struct {
	c  *Client
	id uint64
}

// Clone returns another view of the same user.
func (h *UserHandle) Clone() *UserHandle { v := *h; return &v }

// user returns a copy of the cached data, or empty data.
func (h *UserHandle) user() users.User {
	if h.c.isClosed() {
		return users.User{}
	}
	u, _ := h.c.users.Get(h.id)
	return u
}

// Id returns the user's id, 0 once the Client is gone.
func (h *UserHandle) Id() uint64 { return h.user().ID }

// Username returns the unique username.
func (h *UserHandle) Username() string { return h.user().Username }

// GlobalName returns the display name the user chose, if any.
func (h *UserHandle) GlobalName() (string, bool) { return optOf(h.user().GlobalName) }

// DisplayName returns GlobalName if set, else Username.
func (h *UserHandle) DisplayName() string { return h.user().DisplayName() }

// Avatar returns the avatar hash, if any.
func (h *UserHandle) Avatar() (string, bool) { return optOf(h.user().Avatar) }

// IsProvisional reports whether the user is a provisional account.
func (h *UserHandle) IsProvisional() bool { return h.user().IsProvisional }

// profileHandles returns views of a user's profiles from the published snapshot.
func (c *Client) profileHandles(userID uint64) []*UserApplicationProfileHandle {
	var out []*UserApplicationProfileHandle
	for _, p := range c.users.ProfilesOf(userID) {
		out = append(out, &UserApplicationProfileHandle{p: p})
	}
	return out
}

// GetUserApplicationProfiles returns the game profiles of a cached user from external identity
// providers; none for an unknown user.
func (c *Client) GetUserApplicationProfiles(userId uint64) []*UserApplicationProfileHandle {
	if c.isClosed() {
		return nil
	}
	return c.profileHandles(userId)
}

// GetUserApplicationProfilesNoLock is GetUserApplicationProfiles without any lock: it reads the
// last published snapshot, so it is safe inside any callback and may miss an update made at the
// same moment.
func (c *Client) GetUserApplicationProfilesNoLock(userId uint64) []*UserApplicationProfileHandle {
	return c.profileHandles(userId)
}

// UserApplicationProfiles returns the user's game profiles from external identity providers.
func (h *UserHandle) UserApplicationProfiles() []*UserApplicationProfileHandle {
	return h.c.GetUserApplicationProfiles(h.id)
}

// UserApplicationProfileHandle is one game profile, as it was when read.
type UserApplicationProfileHandle struct {
	p *wire.ApplicationProfile // shared with the snapshot; never modified
}

// Clone returns another view of the same profile.
func (h *UserApplicationProfileHandle) Clone() *UserApplicationProfileHandle { v := *h; return &v }

// Username returns the in-game name.
func (h *UserApplicationProfileHandle) Username() string { return h.p.Username }

// AvatarHash returns the avatar hash, empty when none.
func (h *UserApplicationProfileHandle) AvatarHash() string { return h.p.AvatarHash }

// Metadata returns the developer metadata, empty when none.
func (h *UserApplicationProfileHandle) Metadata() string { return h.p.Metadata }

// ProviderId returns the provider's id, where it has one.
func (h *UserApplicationProfileHandle) ProviderId() (string, bool) { return optOf(h.p.ProviderID) }

// ProviderIssuedUserId returns the user's id at the provider.
func (h *UserApplicationProfileHandle) ProviderIssuedUserId() string { return h.p.ProviderIssuedUserID }

// ProviderType returns the kind of provider.
func (h *UserApplicationProfileHandle) ProviderType() ExternalIdentityProviderType {
	switch h.p.ProviderType {
	case "OIDC":
		return ExternalIdentityProviderTypeOIDC
	case "EPIC_ONLINE_SERVICES_ACCESS_TOKEN", "EPIC_ONLINE_SERVICES_ID_TOKEN":
		return ExternalIdentityProviderTypeEpicOnlineServices
	case "STEAM_SESSION_TICKET":
		return ExternalIdentityProviderTypeSteam
	case "UNITY_SERVICES_ID_TOKEN":
		return ExternalIdentityProviderTypeUnity
	case "BOT", "DISCORD_BOT_ISSUED_ACCESS_TOKEN":
		return ExternalIdentityProviderTypeDiscordBot
	case "":
		return ExternalIdentityProviderTypeNone
	}
	return ExternalIdentityProviderTypeUnknown
}
