package core

import (
	"sync/atomic"

	"sdkpp/wire"
)

// profileSnapshot maps user ids to their game profiles. It is never changed once published:
// an update publishes a new map, so GetUserApplicationProfilesNoLock reads without any lock.
type profileSnapshot map[uint64][]*wire.ApplicationProfile

// profileState holds the published snapshot.
type profileState struct {
	snap atomic.Pointer[profileSnapshot]
}

// setProfilesLocked publishes users' profiles, by user id (c.mu held, which orders the
// writers). It copies the snapshot once however many users change, and reports whether any
// user's profiles changed.
func (c *Client) setProfilesLocked(updates map[uint64][]wire.ApplicationProfile) bool {
	old := c.profiles.snap.Load()
	changed := false
	for id, profiles := range updates {
		var cur []*wire.ApplicationProfile
		known := false
		if old != nil {
			cur, known = (*old)[id]
		}
		if !known || !profilesEqual(cur, profiles) {
			changed = true
			break
		}
	}
	if !changed {
		return false
	}
	next := profileSnapshot{}
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	for id, profiles := range updates {
		list := make([]*wire.ApplicationProfile, len(profiles))
		for i := range profiles {
			p := profiles[i]
			list[i] = &p
		}
		next[id] = list
	}
	c.profiles.snap.Store(&next)
	return true
}

// profilesEqual reports whether a published list holds the same profiles as a wire list.
func profilesEqual(published []*wire.ApplicationProfile, profiles []wire.ApplicationProfile) bool {
	if len(published) != len(profiles) {
		return false
	}
	for i := range profiles {
		x, y := *published[i], profiles[i]
		if !equalPtr(x.ProviderID, y.ProviderID) {
			return false
		}
		x.ProviderID, y.ProviderID = nil, nil
		if x != y {
			return false
		}
	}
	return true
}

// profileHandles returns views of a user's profiles from the published snapshot.
func (c *Client) profileHandles(userID uint64) []*UserApplicationProfileHandle {
	snap := c.profiles.snap.Load()
	if snap == nil {
		return nil
	}
	var out []*UserApplicationProfileHandle
	for _, p := range (*snap)[userID] {
		out = append(out, &UserApplicationProfileHandle{p: p})
	}
	return out
}

// GetUserApplicationProfiles returns the game profiles of a cached user from external identity
// providers; none for an unknown user.
func (c *Client) GetUserApplicationProfiles(userId uint64) []*UserApplicationProfileHandle {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	return c.profileHandles(userId)
}

// GetUserApplicationProfilesNoLock is GetUserApplicationProfiles without the client's lock: it
// reads the last published snapshot, so it is safe inside any callback and may miss an update
// made at the same moment.
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
