package lobbies

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

func lobby(id, rev uint64, members ...uint64) wire.Lobby {
	l := wire.Lobby{ID: wire.Snowflake(id), Revision: wire.Snowflake(rev)}
	for _, m := range members {
		l.Members = append(l.Members, wire.LobbyMember{ID: wire.Snowflake(m)})
	}
	return l
}

func member(lobbyID, rev, user uint64) wire.LobbyMemberEvent {
	return wire.LobbyMemberEvent{LobbyID: wire.Snowflake(lobbyID), Revision: wire.Snowflake(rev),
		Member: wire.LobbyMember{ID: wire.Snowflake(user)}}
}

func memberIDs(c *Cache, id uint64) []uint64 {
	l, ok := c.Get(id)
	if !ok {
		return nil
	}
	var ids []uint64
	for _, m := range l.Members {
		ids = append(ids, uint64(m.ID))
	}
	return ids
}

// step is one thing the cache learns: a snapshot, a member event or a removal.
type step struct {
	snapshot *wire.Lobby
	kind     int
	event    *wire.LobbyMemberEvent
	remove   *[2]uint64 // lobby id, revision
}

func snap(l wire.Lobby) step                    { return step{snapshot: &l} }
func ev(kind int, e wire.LobbyMemberEvent) step { return step{kind: kind, event: &e} }
func gone(id, rev uint64) step                  { return step{remove: &[2]uint64{id, rev}} }

func TestCacheOrdersByRevision(t *testing.T) {
	const l = 7
	tests := []struct {
		name  string
		steps []step
		want  []uint64 // members of lobby l at the end; nil when not cached
	}{
		// The demo's race: alice created the lobby (revision 10); bob's join (revision 11) reaches
		// her as LOBBY_MEMBER_ADD before her own create answer.
		{"member event before the creator's answer", []step{ev(MemberAdded, member(l, 11, 2)), snap(lobby(l, 10, 1))}, []uint64{1, 2}},
		{"member event before an older snapshot of a cached lobby", []step{snap(lobby(l, 9, 1)), ev(MemberAdded, member(l, 11, 2)), snap(lobby(l, 10, 1))}, []uint64{1, 2}},
		{"newer snapshot replaces", []step{snap(lobby(l, 10, 1)), snap(lobby(l, 12, 1, 2, 3))}, []uint64{1, 2, 3}},
		{"older event ignored", []step{snap(lobby(l, 12, 1, 2)), ev(MemberRemoved, member(l, 11, 2))}, []uint64{1, 2}},
		{"event of the snapshot's own change applied again harmlessly", []step{snap(lobby(l, 11, 1, 2)), ev(MemberAdded, member(l, 11, 2))}, []uint64{1, 2}},
		{"early event older than the snapshot dropped", []step{ev(MemberRemoved, member(l, 9, 1)), snap(lobby(l, 10, 1))}, []uint64{1}},
		{"removal then a stale answer", []step{snap(lobby(l, 10, 1)), gone(l, 12), snap(lobby(l, 11, 1))}, nil},
		{"removal then a later join", []step{snap(lobby(l, 10, 1)), gone(l, 12), snap(lobby(l, 13, 1))}, []uint64{1}},
		{"service without revisions: last wins", []step{snap(lobby(l, 0, 1, 2)), snap(lobby(l, 0, 1))}, []uint64{1}},
		{"service without revisions: events apply", []step{snap(lobby(l, 0, 1)), ev(MemberAdded, member(l, 0, 2))}, []uint64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Cache
			for _, s := range tt.steps {
				switch {
				case s.snapshot != nil:
					c.Apply(*s.snapshot)
				case s.event != nil:
					c.ApplyMember(s.kind, *s.event)
				default:
					c.Remove(s.remove[0], s.remove[1])
				}
			}
			assert.Equal(t, tt.want, memberIDs(&c, l))
		})
	}
}

func TestCacheApplyReports(t *testing.T) {
	var c Cache
	applied, added := c.Apply(lobby(1, 5, 1))
	assert.True(t, applied)
	assert.True(t, added)
	applied, added = c.Apply(lobby(1, 6, 1))
	assert.True(t, applied)
	assert.False(t, added)
	applied, _ = c.Apply(lobby(1, 4, 1))
	assert.False(t, applied, "an older snapshot is stale")
	assert.True(t, c.Remove(1, 0))
	assert.False(t, c.Remove(1, 0))
	applied, _ = c.Apply(lobby(1, 6, 1))
	assert.False(t, applied, "a snapshot up to the cached revision at removal is stale")
}

func TestCacheEarlyEventsBounded(t *testing.T) {
	var c Cache
	for id := uint64(1); id <= maxEarlyLobbies+10; id++ {
		for i := uint64(0); i < maxEarlyEvents+5; i++ {
			c.ApplyMember(MemberAdded, member(id, 100+i, 1000+i))
		}
	}
	require.Len(t, c.early, maxEarlyLobbies)
	require.Len(t, c.earlyOrder, maxEarlyLobbies)
	for _, evs := range c.early {
		assert.Len(t, evs, maxEarlyEvents)
	}
	_, kept := c.early[1]
	assert.False(t, kept, "the oldest lobby's early events are dropped first")
}

func TestCacheGetIsACopy(t *testing.T) {
	var c Cache
	c.Apply(lobby(1, 1, 1, 2))
	l, ok := c.Get(1)
	require.True(t, ok)
	l.Members[0].ID = 99
	assert.Equal(t, []uint64{1, 2}, memberIDs(&c, 1))
	assert.Equal(t, []uint64{1}, c.IDs())
}
