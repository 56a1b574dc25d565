package lobbies

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
)

// hotOf is the hot entry hotEntry makes of members, without its lobby and application.
func hotOf(members ...uint64) *hotLobby {
	ms := make([]store.LobbyMember, len(members))
	for i, id := range members {
		ms[i] = store.LobbyMember{UserID: id}
	}
	return newHotLobby(store.Lobby{}, nil, ms, 0)
}

// A member's message goes to every member of its lobby once, the author last (rule LOB-2's
// LOBBY_MESSAGE_CREATE to the members), in a slice every message of the author shares, which an
// append cannot change; a sender the entry does not hold as a member gets the members as they
// are.
func TestRecipientsEveryMemberOnceTheAuthorLast(t *testing.T) {
	members := []uint64{11, 12, 13, 14, 15}
	h := hotOf(members...)
	for _, author := range members {
		got := recipients(h, author)
		require.Len(t, got, len(members), "author %d", author)
		assert.Equal(t, author, got[len(got)-1], "the author last")
		assert.ElementsMatch(t, members, got, "every member once")
		assert.Equal(t, len(got), cap(got), "an append copies")
		again := recipients(h, author)
		assert.Same(t, &got[0], &again[0], "shared by the author's messages")
	}
	assert.Equal(t, members, recipients(h, 99), "not a member of the entry")
	assert.Equal(t, members, h.ids, "the members' ids unchanged")

	_ = append(recipients(h, 13), 99)
	assert.Equal(t, []uint64{14, 15, 11, 12, 13}, recipients(h, 13), "an append left them as they were")

	assert.Empty(t, recipients(hotOf(), 11), "a lobby without members")
	assert.Equal(t, []uint64{11}, recipients(hotOf(11), 11), "the author alone")
}

// A message's recipients cost no allocation.
func TestRecipientsAllocateNothing(t *testing.T) {
	h := hotOf(slices.Collect(func(yield func(uint64) bool) {
		for id := uint64(1); id <= 10 && yield(id); id++ {
		}
	})...)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = recipients(h, 7) }))
}

// BenchmarkRecipients times a 10-member lobby's recipients of one message.
func BenchmarkRecipients(b *testing.B) {
	h := hotOf(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	b.ReportAllocs()
	for b.Loop() {
		_ = recipients(h, 7)
	}
}
