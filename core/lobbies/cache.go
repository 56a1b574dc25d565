// Package lobbies keeps the SDK's cache of the lobbies the player is in, and applies what it
// learns of them (snapshots from API answers, LOBBY_* events from the gateway) in the order the
// service produced them, so that lobby and member state never goes back in time.
//
// The service stamps every lobby change with a revision (wire.Lobby.Revision): a snapshot or
// event is applied only if it is not older than what the cache holds. A member event for a lobby
// the cache does not hold yet (it raced ahead of the join's answer) is kept until the snapshot
// comes, then replayed if it is newer. A service that sends no revisions (zero) gets the old
// behaviour: the last thing received wins.
//
// It also builds the lobby requests (requests.go): create or join, leave, send a message, link a
// channel, and the guild invite of a linked channel.
package lobbies

import (
	"slices"
	"sync"

	"sdkpp/wire"
)

// Member event kinds, as ApplyMember takes them.
const (
	MemberAdded = iota
	MemberUpdated
	MemberRemoved
)

// Limits on what is kept of events for lobbies not yet cached: they come only in the moment
// between a join and its answer, so a few suffice; beyond them the oldest are dropped.
const (
	maxEarlyLobbies = 64
	maxEarlyEvents  = 64
)

// Cache is the player's lobbies; its methods may be called from any goroutine.
type Cache struct {
	mu      sync.Mutex
	lobbies map[uint64]*wire.Lobby
	// gone is the revision at which a lobby left the cache (deleted, or the player left):
	// snapshots up to it are stale.
	gone map[uint64]uint64
	// early holds member events of lobbies not cached yet, in arrival order.
	early      map[uint64][]memberEvent
	earlyOrder []uint64 // lobby ids of early, oldest first
}

type memberEvent struct {
	kind int
	ev   wire.LobbyMemberEvent
}

// stale tells whether something at revision rev is older than what is held at revision held.
// Zero revisions (a service without them) are never stale.
func stale(rev, held uint64) bool { return rev != 0 && held != 0 && rev < held }

// Apply stores a snapshot of a lobby unless the cache holds a newer state of it, or the lobby left
// the cache at a later revision. applied reports whether it was stored; added whether the lobby
// was not cached before.
func (c *Cache) Apply(l wire.Lobby) (applied, added bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, rev := uint64(l.ID), uint64(l.Revision)
	if g, ok := c.gone[id]; ok && (rev == 0 || rev <= g) {
		return false, false
	}
	old := c.lobbies[id]
	if old != nil && stale(rev, uint64(old.Revision)) {
		return false, false
	}
	if c.lobbies == nil {
		c.lobbies = map[uint64]*wire.Lobby{}
	}
	cp := clone(l)
	c.lobbies[id] = &cp
	delete(c.gone, id)
	if evs, ok := c.early[id]; ok {
		c.dropEarlyLocked(id)
		for _, e := range evs {
			c.applyMemberLocked(&cp, e.kind, e.ev)
		}
	}
	return true, old == nil
}

// ApplyMember applies a member event (MemberAdded, MemberUpdated or MemberRemoved) unless it is
// older than the cached lobby. An event for a lobby that is not cached is kept for the snapshot
// that will follow it. applied reports whether the cached lobby changed.
func (c *Cache) ApplyMember(kind int, ev wire.LobbyMemberEvent) (applied bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := uint64(ev.LobbyID)
	l := c.lobbies[id]
	if l == nil {
		if g, ok := c.gone[id]; ok && (ev.Revision == 0 || uint64(ev.Revision) <= g) {
			return false
		}
		c.keepEarlyLocked(id, memberEvent{kind, ev})
		return false
	}
	return c.applyMemberLocked(l, kind, ev)
}

func (c *Cache) applyMemberLocked(l *wire.Lobby, kind int, ev wire.LobbyMemberEvent) bool {
	if stale(uint64(ev.Revision), uint64(l.Revision)) {
		return false
	}
	l.Members = slices.DeleteFunc(l.Members, func(x wire.LobbyMember) bool { return x.ID == ev.Member.ID })
	if kind != MemberRemoved {
		l.Members = append(l.Members, ev.Member)
	}
	if ev.Revision > l.Revision {
		l.Revision = ev.Revision
	}
	return true
}

func (c *Cache) keepEarlyLocked(id uint64, e memberEvent) {
	if c.early == nil {
		c.early = map[uint64][]memberEvent{}
	}
	if _, ok := c.early[id]; !ok {
		if len(c.earlyOrder) == maxEarlyLobbies {
			c.dropEarlyLocked(c.earlyOrder[0])
		}
		c.earlyOrder = append(c.earlyOrder, id)
	}
	evs := c.early[id]
	if len(evs) == maxEarlyEvents {
		evs = slices.Delete(evs, 0, 1)
	}
	c.early[id] = append(evs, e)
}

func (c *Cache) dropEarlyLocked(id uint64) {
	delete(c.early, id)
	c.earlyOrder = slices.DeleteFunc(c.earlyOrder, func(x uint64) bool { return x == id })
}

// Remove takes a lobby out of the cache: it was deleted, or the player left it, at revision rev
// (zero when unknown: then the cached revision is used). Snapshots and events up to that revision
// that arrive later are stale. known reports whether the lobby was cached.
func (c *Cache) Remove(id, rev uint64) (known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lobbies[id]
	if l != nil && uint64(l.Revision) > rev {
		rev = uint64(l.Revision)
	}
	if rev != 0 {
		if c.gone == nil {
			c.gone = map[uint64]uint64{}
		}
		c.gone[id] = rev
	}
	delete(c.lobbies, id)
	c.dropEarlyLocked(id)
	return l != nil
}

// Get returns a deep copy of a cached lobby.
func (c *Cache) Get(id uint64) (wire.Lobby, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lobbies[id]
	if l == nil {
		return wire.Lobby{}, false
	}
	return clone(*l), true
}

// Has tells whether a lobby is cached.
func (c *Cache) Has(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lobbies[id] != nil
}

// IDs returns the cached lobbies' ids in ascending order.
func (c *Cache) IDs() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]uint64, 0, len(c.lobbies))
	for id := range c.lobbies {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// clone copies a lobby deeply enough that the copy and the cache share nothing they change.
func clone(l wire.Lobby) wire.Lobby {
	l.Members = slices.Clone(l.Members)
	return l
}

// MemberIDs returns the user ids of l's members, in order.
func MemberIDs(l wire.Lobby) []uint64 {
	var ids []uint64
	for _, m := range l.Members {
		ids = append(ids, uint64(m.ID))
	}
	return ids
}

// Member returns l's member with user id, if it is one.
func Member(l wire.Lobby, id uint64) (wire.LobbyMember, bool) {
	for _, m := range l.Members {
		if uint64(m.ID) == id {
			return m, true
		}
	}
	return wire.LobbyMember{}, false
}
