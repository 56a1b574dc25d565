// Package users is the SDK's one cache of users: what the client knows of each user it has met
// (in READY, relationships, messages, lobby members and DM channels), which of them is signed in,
// and their game profiles, published as snapshots that are read without a lock.
package users

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"sdkpp/wire"
)

// User is what the client knows of a user.
type User struct {
	ID            uint64
	Username      string
	GlobalName    *string
	Avatar        *string
	IsProvisional bool
}

// Of converts a user object of the service (the SDK's one converter); nil for none.
func Of(u *wire.User) *User {
	v, ok := ValueOf(u)
	if !ok {
		return nil
	}
	return &v
}

// ValueOf is Of as a value, for a caller that stores it with something else; false for none.
func ValueOf(u *wire.User) (User, bool) {
	if u == nil || u.ID == 0 {
		return User{}, false
	}
	return User{ID: uint64(u.ID), Username: u.Username, GlobalName: u.GlobalName, Avatar: u.Avatar, IsProvisional: u.IsProvisional}, true
}

// DisplayName is the global name if set, else the username.
func (u User) DisplayName() string {
	if u.GlobalName != nil && strings.TrimSpace(*u.GlobalName) != "" {
		return *u.GlobalName
	}
	return u.Username
}

// Cache holds the users; its methods may be called from any goroutine. Its lock is a leaf: no
// other lock is taken while it is held.
type Cache struct {
	mu      sync.RWMutex
	users   map[uint64]User
	current uint64 // the signed-in user, 0 before READY

	profMu   sync.Mutex // orders the writers of profiles
	profiles atomic.Pointer[Profiles]
}

// Put stores users (nil ones are skipped), replacing what was known of them.
func (c *Cache) Put(us ...*User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range us {
		if u == nil {
			continue
		}
		if c.users == nil {
			c.users = map[uint64]User{}
		}
		c.users[u.ID] = *u
	}
}

// Get returns a copy of what is known of a user.
func (c *Cache) Get(id uint64) (User, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	u, ok := c.users[id]
	return u, ok
}

// SetCurrent stores the signed-in user and marks it current.
func (c *Cache) SetCurrent(u *User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.users == nil {
		c.users = map[uint64]User{}
	}
	c.users[u.ID] = *u
	c.current = u.ID
}

// Current returns the signed-in user's id, 0 before the first READY.
func (c *Cache) Current() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.current
}

// Profiles maps user ids to their game profiles. A published snapshot is never changed: an
// update publishes a new one.
type Profiles map[uint64][]*wire.ApplicationProfile

// SetProfiles publishes users' profiles, by user id. It copies the snapshot once however many
// users change, and reports whether any user's profiles changed.
func (c *Cache) SetProfiles(updates map[uint64][]wire.ApplicationProfile) bool {
	c.profMu.Lock()
	defer c.profMu.Unlock()
	old := c.profiles.Load()
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
	next := Profiles{}
	if old != nil {
		maps.Copy(next, *old)
	}
	for id, profiles := range updates {
		list := make([]*wire.ApplicationProfile, len(profiles))
		for i := range profiles {
			p := profiles[i]
			list[i] = &p
		}
		next[id] = list
	}
	c.profiles.Store(&next)
	return true
}

// ProfilesOf returns a user's profiles from the last published snapshot, without a lock; the
// profiles are shared with the snapshot and must not be changed.
func (c *Cache) ProfilesOf(id uint64) []*wire.ApplicationProfile {
	snap := c.profiles.Load()
	if snap == nil {
		return nil
	}
	return (*snap)[id]
}

// profilesEqual reports whether a published list holds the same profiles as a wire list.
func profilesEqual(published []*wire.ApplicationProfile, profiles []wire.ApplicationProfile) bool {
	if len(published) != len(profiles) {
		return false
	}
	for i := range profiles {
		x, y := *published[i], profiles[i]
		if (x.ProviderID == nil) != (y.ProviderID == nil) || (x.ProviderID != nil && *x.ProviderID != *y.ProviderID) {
			return false
		}
		x.ProviderID, y.ProviderID = nil, nil
		if x != y {
			return false
		}
	}
	return true
}

// Learn stores the users the service sent embedded in other objects (lobby members, say), and
// the game profiles of those that carry them.
func (c *Cache) Learn(ws ...*wire.User) {
	var profiles map[uint64][]wire.ApplicationProfile
	for _, w := range ws {
		u := Of(w)
		if u == nil {
			continue
		}
		c.Put(u)
		if w.ApplicationProfiles != nil {
			if profiles == nil {
				profiles = map[uint64][]wire.ApplicationProfile{}
			}
			profiles[u.ID] = w.ApplicationProfiles
		}
	}
	if profiles != nil {
		c.SetProfiles(profiles)
	}
}

// ApplyReady stores what READY says of users: the users of the session's relationships (others),
// then runs between (the caller applies the relationships), then stores the game profiles of all
// (none for a user that carries none) and the session's user self. So a reader that sees the new
// session's user also sees its relationships and their users.
func (c *Cache) ApplyReady(self *wire.User, others []*wire.User, between func()) {
	profiles := map[uint64][]wire.ApplicationProfile{}
	for _, w := range others {
		if u := Of(w); u != nil {
			c.Put(u)
			profiles[u.ID] = w.ApplicationProfiles
		}
	}
	between()
	u := Of(self)
	if u != nil {
		profiles[u.ID] = self.ApplicationProfiles
	}
	c.SetProfiles(profiles)
	if u != nil {
		c.SetCurrent(u)
	}
}
