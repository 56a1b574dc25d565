package core

import "sdkpp/wire"

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
