package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GLD-2: a member's last activity is its last session or its last message in the guild,
// whichever is later, and only moves forward; a user's session touches each of its guilds; a
// former member's activity is not reported.
func TestGuildActivity(t *testing.T) { forEachStore(t, testGuildActivity) }

func testGuildActivity(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, m := range []GuildMember{{GuildID: 5, UserID: 7, JoinedAt: t0}, {GuildID: 6, UserID: 7, JoinedAt: t0}, {GuildID: 5, UserID: 8, JoinedAt: t0}} {
		require.NoError(t, s.PutGuildMember(ctx, &m))
	}
	for i, at := range []time.Time{t0.Add(time.Hour), t0.Add(time.Minute)} { // 7's messages in guild 5
		require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: uint64(100 + i), ChannelID: 50, GuildID: 5, AuthorID: 7,
			Content: "hi", CreatedAt: at}))
	}
	require.NoError(t, s.TouchUserGuilds(ctx, 8, t0.Add(2*time.Hour)))
	require.NoError(t, s.TouchUserGuilds(ctx, 7, t0.Add(30*time.Minute)))
	require.NoError(t, s.TouchUserGuilds(ctx, 7, t0.Add(20*time.Minute))) // earlier: changes nothing
	seen, err := s.GuildMembersLastSeen(ctx, 5)
	require.NoError(t, err)
	assert.Equal(t, map[uint64]time.Time{7: t0.Add(time.Hour), 8: t0.Add(2 * time.Hour)}, seen)
	seen, err = s.GuildMembersLastSeen(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, map[uint64]time.Time{7: t0.Add(30 * time.Minute)}, seen)
	require.NoError(t, s.DeleteGuildMember(ctx, 5, 8))
	seen, err = s.GuildMembersLastSeen(ctx, 5)
	require.NoError(t, err)
	assert.NotContains(t, seen, uint64(8), "a former member")
	require.NoError(t, s.TouchUserGuilds(ctx, 7, t0.Add(3*time.Hour))) // a session after the messages
	seen, err = s.GuildMembersLastSeen(ctx, 5)
	require.NoError(t, err)
	assert.Equal(t, map[uint64]time.Time{7: t0.Add(3 * time.Hour)}, seen)
}
