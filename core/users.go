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

// user returns a copy of the cached data, or empty data.
func (h *UserHandle) user() users.User {
	if h.c.isClosed() {
		return users.User{}
	}
	u, _ := h.c.users.Get(h.id)
	return u
}

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

// UserApplicationProfileHandle is one game profile, as it was when read.
type UserApplicationProfileHandle struct {
	p *wire.ApplicationProfile // shared with the snapshot; never modified
}
