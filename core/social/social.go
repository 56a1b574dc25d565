// Package social keeps what the client knows of the player's social graph: the relationships
// (platform and in-game), the presences of other users, and the player's own presence as it is
// sent to the service. The Client applies gateway events to it and reads its answers from it:
// among them the friends-list groups and the friend search. It also builds the relationship and
// activity-invite requests (requests.go).
package social

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"sdkpp/wire"
)

// Relationship types as the service sends them (wire.Relationship.Type).
const (
	TypeNone            = 0
	TypeFriend          = 1
	TypeBlocked         = 2
	TypePendingIncoming = 3
	TypePendingOutgoing = 4
)

// Rel is what one user is to the player.
type Rel struct {
	Platform, Game int // relationship types
	Spam           bool
}

// Friend reports whether the user is a friend on the platform or in the game.
func (r Rel) Friend() bool { return r.Platform == TypeFriend || r.Game == TypeFriend }

// State is the social cache; its methods may be called from any goroutine. Its lock is a leaf:
// no other lock is taken while it is held.
type State struct {
	mu        sync.RWMutex
	appID     uint64 // the application of the gateway session (READY)
	rels      map[uint64]Rel
	presences map[uint64]wire.PresenceUpdate

	status   string         // the player's chosen status, as op 3 sends it
	activity *wire.Activity // the player's rich presence, nil when cleared
	waits    []*Taken       // AwaitOwn's
}

// ApplyReady replaces the relationships and presences with a new session's (READY).
func (s *State) ApplyReady(appID uint64, platform, game []wire.Relationship, presences []wire.PresenceUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appID = appID
	s.rels = map[uint64]Rel{}
	s.presences = map[uint64]wire.PresenceUpdate{}
	for _, r := range platform {
		s.applyLocked(r, true, false)
	}
	for _, r := range game {
		s.applyLocked(r, false, false)
	}
	for _, p := range presences {
		s.presences[uint64(p.User.ID)] = p
	}
}

// Apply applies a relationship object, on the platform or in the game; removed says it went
// away. It reports whether the user was a friend before and is one after.
func (s *State) Apply(r wire.Relationship, platform, removed bool) (wasFriend, isFriend bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := uint64(r.ID)
	wasFriend = s.rels[id].Friend()
	s.applyLocked(r, platform, removed)
	return wasFriend, s.rels[id].Friend()
}

func (s *State) applyLocked(r wire.Relationship, platform, removed bool) {
	if s.rels == nil {
		s.rels = map[uint64]Rel{}
	}
	id := uint64(r.ID)
	d := s.rels[id]
	typ := r.Type
	if removed {
		typ = TypeNone
	}
	if platform {
		d.Platform, d.Spam = typ, r.IsSpamRequest && !removed
	} else {
		d.Game = typ
	}
	if d.Platform == TypeNone && d.Game == TypeNone {
		delete(s.rels, id)
		return
	}
	s.rels[id] = d
}

// ApplyPresence stores a user's presence and reports whether the user is a friend.
func (s *State) ApplyPresence(p wire.PresenceUpdate) (friend bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.presences == nil {
		s.presences = map[uint64]wire.PresenceUpdate{}
	}
	id := uint64(p.User.ID)
	s.presences[id] = p
	s.tookLocked(&p)
	return s.rels[id].Friend()
}

// Rel returns what a user is to the player (zero when nothing).
func (s *State) Rel(id uint64) Rel {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rels[id]
}

// IDs returns the ids of the users the player has a relationship with, in order.
func (s *State) IDs() []uint64 {
	s.mu.RLock()
	ids := make([]uint64, 0, len(s.rels))
	for id := range s.rels {
		ids = append(ids, id)
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	return ids
}

// Friends returns the ids of the player's friends, in order.
func (s *State) Friends() []uint64 {
	s.mu.RLock()
	var ids []uint64
	for id, r := range s.rels {
		if r.Friend() {
			ids = append(ids, id)
		}
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	return ids
}

// Status returns a user's status as the service names it (online, idle, dnd, invisible,
// offline), "" when no presence is known.
func (s *State) Status(id uint64) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.presences[id].Status
}

// Online reports whether a user's presence shows them online (online, idle or dnd).
func (s *State) Online(id uint64) bool {
	switch s.Status(id) {
	case "", "offline", "invisible":
		return false
	}
	return true
}

// GameActivity returns a copy of the user's activity in the session's game, or nil. fallback is
// the game's id when the session has not named one yet.
func (s *State) GameActivity(id, fallback uint64) *wire.Activity {
	s.mu.RLock()
	defer s.mu.RUnlock()
	app := s.appID
	if app == 0 {
		app = fallback
	}
	for _, a := range s.presences[id].Activities {
		if a.Type != wire.ActivityCustomStatus && a.ApplicationID != nil && uint64(*a.ApplicationID) == app {
			return &a
		}
	}
	return nil
}

// SetStatus sets the player's own status, as op 3 names it.
func (s *State) SetStatus(status string) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

// SetActivity sets the player's rich presence; nil clears it.
func (s *State) SetActivity(a *wire.Activity) {
	s.mu.Lock()
	s.activity = a
	s.mu.Unlock()
}

// Own returns the player's presence as op 3 sends it, and whether the player changed it from
// the default (online, no activity).
func (s *State) Own() (p wire.Presence, set bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	status := s.status
	if status == "" {
		status = "online"
	}
	p = wire.Presence{Status: status, Activities: []wire.Activity{}}
	if s.activity != nil {
		p.Activities = append(p.Activities, *s.activity)
	}
	return p, s.activity != nil || status != "online"
}

// Group is a friends-list group; its values are those of the public RelationshipGroupType.
type Group int32

// The groups of a friends list.
const (
	OnlinePlayingGame Group = iota
	OnlineElsewhere
	Offline
)

// GroupOf is the friends-list group of a friend; appID is the game's id when the session has not
// named one yet.
func (s *State) GroupOf(id, appID uint64) Group {
	switch {
	case !s.Online(id):
		return Offline
	case s.GameActivity(id, appID) != nil:
		return OnlinePlayingGame
	}
	return OnlineElsewhere
}

// Names are the names a friend is known by: the unique username and the name shown.
type Names struct{ Username, Display string }

// FriendsIn returns the friends (platform or game) of group g, sorted by shown name, ignoring
// case, then id. names looks a user up; a user it does not know is named by id.
func (s *State) FriendsIn(g Group, appID uint64, names func(id uint64) (Names, bool)) []uint64 {
	type entry struct {
		name string
		id   uint64
	}
	var list []entry
	for _, id := range s.Friends() {
		if s.GroupOf(id, appID) != g {
			continue
		}
		name := strconv.FormatUint(id, 10)
		if n, ok := names(id); ok {
			name = n.Display
		}
		list = append(list, entry{strings.ToLower(name), id})
	}
	slices.SortFunc(list, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.id, b.id))
	})
	out := make([]uint64, len(list))
	for i, e := range list {
		out[i] = e.id
	}
	return out
}

// SearchFriends returns the known friends whose username or shown name contains text, ignoring
// case, sorted by shown name.
func (s *State) SearchFriends(text string, names func(id uint64) (Names, bool)) []uint64 {
	needle := strings.ToLower(strings.TrimSpace(text))
	type entry struct {
		name string
		id   uint64
	}
	var list []entry
	for _, id := range s.Friends() {
		n, ok := names(id)
		if !ok {
			continue
		}
		if strings.Contains(strings.ToLower(n.Username), needle) || strings.Contains(strings.ToLower(n.Display), needle) {
			list = append(list, entry{strings.ToLower(n.Display), id})
		}
	}
	slices.SortStableFunc(list, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	out := make([]uint64, len(list))
	for i, e := range list {
		out[i] = e.id
	}
	return out
}
