package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PIN-1: pins are kept per channel, the most recent first; pinning twice keeps the first time,
// a message's pin goes with it, and a message of another channel is unknown.
func TestGuildPins(t *testing.T) { forEachStore(t, testGuildPins) }

func testGuildPins(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for id := uint64(1); id <= 3; id++ {
		require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: id, ChannelID: 10, GuildID: 5, AuthorID: 7, Content: "m", CreatedAt: t0}))
	}
	require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: 4, ChannelID: 11, GuildID: 5, AuthorID: 7, Content: "m", CreatedAt: t0}))

	for i, id := range []uint64{2, 1, 3} {
		pinned, err := s.PinGuildMessage(ctx, 10, id, t0.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
		assert.True(t, pinned, "message %d", id)
	}
	pinned, err := s.PinGuildMessage(ctx, 10, 2, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, pinned, "pinned already")
	at, err := s.GuildMessagePinnedAt(ctx, 10, 2)
	require.NoError(t, err)
	assert.True(t, at.Equal(t0), "the first pin's time stays: %v", at)

	_, err = s.PinGuildMessage(ctx, 10, 4, t0)
	assert.ErrorIs(t, err, ErrNotFound, "message 4 is another channel's")
	_, err = s.UnpinGuildMessage(ctx, 10, 99)
	assert.ErrorIs(t, err, ErrNotFound)

	ids := func(pins []GuildPin) (out []uint64) {
		for _, p := range pins {
			out = append(out, p.Message.ID)
		}
		return out
	}
	all, err := s.ListGuildPins(ctx, 10, time.Time{}, 10)
	require.NoError(t, err)
	assert.Equal(t, []uint64{3, 1, 2}, ids(all), "the most recent pin first")
	assert.Equal(t, "m", all[0].Message.Content)
	older, err := s.ListGuildPins(ctx, 10, all[1].PinnedAt, 10)
	require.NoError(t, err)
	assert.Equal(t, []uint64{2}, ids(older), "pins made before the given time")
	n, err := s.CountGuildPins(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	unpinned, err := s.UnpinGuildMessage(ctx, 10, 3)
	require.NoError(t, err)
	assert.True(t, unpinned)
	unpinned, err = s.UnpinGuildMessage(ctx, 10, 3)
	require.NoError(t, err)
	assert.False(t, unpinned, "not pinned any more")
	require.NoError(t, s.DeleteGuildMessage(ctx, 10, 1))
	all, err = s.ListGuildPins(ctx, 10, time.Time{}, 10)
	require.NoError(t, err)
	assert.Equal(t, []uint64{2}, ids(all), "a deleted message's pin goes with it")
	at, err = s.GuildMessagePinnedAt(ctx, 10, 3)
	require.NoError(t, err)
	assert.True(t, at.IsZero(), "unpinned")
}

// Id lists read back as they were written.
func TestParseIDs(t *testing.T) {
	for _, ids := range [][]uint64{{}, {7}, {1, 18446744073709551615, 3}} {
		raw, err := mentionsJSON(ids)
		require.NoError(t, err)
		got, err := parseIDs(raw)
		require.NoError(t, err)
		require.Equal(t, ids, got)
	}
	for _, bad := range []string{"", "[", "[1,]", "[x]", "{}"} {
		_, err := parseIDs(bad)
		require.Error(t, err, bad)
	}
}

// GuildMessagesPinnedAt gives the pins of the asked messages of a channel only: not those of
// the messages between them that were not asked for, nor another channel's.
func TestGuildMessagesPinnedAt(t *testing.T) { forEachStore(t, testGuildMessagesPinnedAt) }

func testGuildMessagesPinnedAt(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for id := uint64(1); id <= 9; id++ {
		ch := uint64(10)
		if id == 5 {
			ch = 11
		}
		require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: id, ChannelID: ch, GuildID: 5, AuthorID: 7, Content: "m", CreatedAt: t0}))
	}
	for _, p := range []struct{ ch, id uint64 }{{10, 2}, {10, 3}, {11, 5}, {10, 6}, {10, 9}} {
		_, err := s.PinGuildMessage(ctx, p.ch, p.id, t0.Add(time.Duration(p.id)*time.Second))
		require.NoError(t, err)
	}
	for _, c := range []struct {
		ids  []uint64
		want []uint64
	}{
		{nil, nil},
		{[]uint64{3}, []uint64{3}},
		{[]uint64{8, 1, 6}, []uint64{6}},       // 2 and 3 lie between, not asked for
		{[]uint64{1, 5, 9, 2}, []uint64{2, 9}}, // 5 is another channel's
		{[]uint64{4, 7}, nil},
	} {
		got, err := s.GuildMessagesPinnedAt(ctx, 10, c.ids)
		require.NoError(t, err)
		want := map[uint64]time.Time{}
		for _, id := range c.want {
			want[id] = t0.Add(time.Duration(id) * time.Second)
		}
		assert.Equal(t, want, got, "ids %v", c.ids)
	}
}
