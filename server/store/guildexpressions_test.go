package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// VER-1: a guild's emoji and scheduled events are kept, listed by id and deleted once; another
// guild's are unknown.
func TestGuildExpressions(t *testing.T) { forEachStore(t, testGuildExpressions) }

func testGuildExpressions(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []uint64{2, 1} {
		require.NoError(t, s.InsertGuildEmoji(ctx, &GuildEmoji{ID: id, GuildID: 5, Name: "e", Image: "h", Animated: id == 2, CreatorID: 7, CreatedAt: t0}))
	}
	list, err := s.ListGuildEmojis(ctx, 5)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, uint64(1), list[0].ID)
	assert.True(t, list[1].Animated)
	_, err = s.GetGuildEmoji(ctx, 6, 1)
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.DeleteGuildEmoji(ctx, 5, 1))
	assert.ErrorIs(t, s.DeleteGuildEmoji(ctx, 5, 1), ErrNotFound)

	ev := GuildScheduledEvent{ID: 3, GuildID: 5, CreatorID: 7, Name: "n", PrivacyLevel: 2, Status: 1, EntityType: 3, Location: "l",
		StartAt: t0.Add(time.Hour), EndAt: t0.Add(2 * time.Hour), CreatedAt: t0}
	require.NoError(t, s.InsertGuildScheduledEvent(ctx, &ev))
	require.NoError(t, s.InsertGuildScheduledEvent(ctx, &GuildScheduledEvent{ID: 4, GuildID: 5, ChannelID: 9, CreatorID: 7, Name: "v",
		PrivacyLevel: 2, Status: 1, EntityType: 2, StartAt: t0.Add(time.Hour), CreatedAt: t0}))
	got, err := s.GetGuildScheduledEvent(ctx, 5, 3)
	require.NoError(t, err)
	assert.Equal(t, ev, *got)
	evs, err := s.ListGuildScheduledEvents(ctx, 5)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.True(t, evs[1].EndAt.IsZero(), "no end")
	require.NoError(t, s.DeleteGuildScheduledEvent(ctx, 5, 3))
	assert.ErrorIs(t, s.DeleteGuildScheduledEvent(ctx, 5, 3), ErrNotFound)
}
