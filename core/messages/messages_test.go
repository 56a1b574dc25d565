package messages

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func msg(id, channel uint64) *Message {
	return &Message{ID: id, ChannelID: channel, LobbyID: channel, Content: "m", Sent: t0.Add(time.Duration(id) * time.Second)}
}

func TestConvert(t *testing.T) {
	ts, edited := t0.Format(time.RFC3339Nano), "not a time"
	name := "extra"
	l := FromLobby(&wire.LobbyMessage{ID: 5, LobbyID: 9, Author: wire.User{ID: 3}, ApplicationID: 4, Content: "hi",
		Timestamp: ts, EditedTimestamp: &edited, LobbyMember: wire.LobbyMessageMember{AdditionalName: &name}})
	assert.Equal(t, Message{ID: 5, ChannelID: 9, LobbyID: 9, AuthorID: 3, AppID: 4, Content: "hi", Sent: t0, AdditionalName: &name}, *l,
		"a malformed edit time is no edit")
	d := FromDirect(&wire.Message{ID: 6, ChannelID: 8, Author: wire.User{ID: 3}, RecipientID: 2, Content: "yo", Timestamp: ts})
	assert.Equal(t, Message{ID: 6, ChannelID: 8, AuthorID: 3, RecipientID: 2, Content: "yo", Sent: t0}, *d)
}

// A live message is delivered once, in id order per channel.
func TestCreatedOnceInOrder(t *testing.T) {
	var c Cache
	assert.True(t, c.Created(msg(10, 1)))
	assert.False(t, c.Created(msg(10, 1)), "a duplicate")
	assert.False(t, c.Created(msg(9, 1)), "an older message after a newer one")
	assert.True(t, c.Created(msg(9, 2)), "another channel has its own order")
	assert.True(t, c.Created(msg(11, 1)))
	m, ok := c.Get(11)
	require.True(t, ok)
	assert.Equal(t, uint64(1), m.ChannelID)
	c.Forget(11, 1)
	_, ok = c.Get(11)
	assert.False(t, ok)
	assert.False(t, c.Created(msg(11, 1)), "a forgotten message is still delivered")
}

func TestCacheKeepsTheNewest(t *testing.T) {
	var c Cache
	for id := uint64(1); id <= CacheSize+10; id++ {
		c.Store(msg(id, 1))
	}
	_, ok := c.Get(10)
	assert.False(t, ok, "the oldest leave the cache")
	_, ok = c.Get(11)
	assert.True(t, ok)
}

// History is answered from the cache only when the cache is known to hold it without a gap.
func TestHistory(t *testing.T) {
	var c Cache
	_, ok := c.History(1, 5, t0)
	assert.False(t, ok, "nothing known")
	ids := c.StoreHistory(1, []*Message{msg(3, 1), msg(1, 1), msg(2, 1), msg(7, 99)}, 3)
	assert.Equal(t, []uint64{1, 2, 3}, ids, "oldest first; another channel's message is ignored")
	got, ok := c.History(1, 3, t0)
	require.True(t, ok)
	assert.Equal(t, []uint64{1, 2, 3}, got)
	_, ok = c.History(1, 4, t0)
	assert.False(t, ok, "a full page: more may exist on the service")
	assert.True(t, c.Created(msg(4, 1)))
	got, ok = c.History(1, 4, t0)
	require.True(t, ok, "a live message extends the gap-free window")
	assert.Equal(t, []uint64{1, 2, 3, 4}, got)
	got, _ = c.History(1, 4, t0.Add(2*time.Second))
	assert.Equal(t, []uint64{3, 4}, got, "older than the window")

	c.StoreHistory(2, []*Message{msg(5, 2)}, 10)
	got, ok = c.History(2, 50, t0)
	require.True(t, ok, "a short answer is the whole window")
	assert.Equal(t, []uint64{5}, got)

	c.NewSession(nil)
	_, ok = c.History(1, 1, t0)
	assert.False(t, ok, "after a new session, nothing is known to be gap-free")
}

func TestDMChannels(t *testing.T) {
	var c Cache
	assert.Zero(t, c.DMChannel(5))
	c.SetDMChannel(5, 50)
	assert.Equal(t, uint64(50), c.DMChannel(5))
}

// A new session catches up the lobbies with a known last message; live messages of those lobbies
// are held until the catch-up takes them, and a newer session takes over an older one.
func TestCatchUp(t *testing.T) {
	var c Cache
	last := wire.Snowflake(20)
	c.NoteLobby(1, &last)
	c.NoteLobby(1, nil) // only the first sight counts
	c.NoteLobby(2, nil)
	assert.True(t, c.Created(msg(30, 3)))
	gen, todo := c.NewSession([]uint64{3, 1, 2, 4})
	assert.Equal(t, []uint64{1, 2, 3}, todo, "lobby 4 was never seen; 2 has a known empty history")
	assert.Equal(t, uint64(20), c.CatchUpFrom(1))
	assert.Equal(t, uint64(0), c.CatchUpFrom(2))
	assert.Equal(t, uint64(30), c.CatchUpFrom(3))

	assert.True(t, c.Hold(Held{M: msg(40, 1)}))
	assert.True(t, c.Hold(Held{M: msg(41, 1)}))
	assert.False(t, c.Hold(Held{M: msg(42, 4)}), "a lobby not catching up is not held")
	list, done, ok := c.TakeHeld(gen, 1)
	require.True(t, ok)
	assert.False(t, done)
	require.Len(t, list, 2)
	assert.Equal(t, uint64(40), list[0].M.ID, "in arrival order")
	list, done, ok = c.TakeHeld(gen, 1)
	assert.True(t, ok)
	assert.True(t, done)
	assert.Empty(t, list)
	assert.False(t, c.Hold(Held{M: msg(43, 1)}), "caught up: live messages go straight through")

	assert.True(t, c.Hold(Held{M: msg(31, 3)}))
	gen2, _ := c.NewSession([]uint64{3})
	assert.False(t, c.Current(gen))
	assert.True(t, c.Current(gen2))
	_, _, ok = c.TakeHeld(gen, 3)
	assert.False(t, ok, "the older session gives way")
	list, _, ok = c.TakeHeld(gen2, 3)
	require.True(t, ok)
	assert.Len(t, list, 1, "what the interrupted catch-up held is kept for the newer one")
}
