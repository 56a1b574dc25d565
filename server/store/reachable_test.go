package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LIM-4: a bot reaches the distinct members of every guild it is in, itself excepted; members of
// guilds it is not in do not count.
func TestCountReachableUsers(t *testing.T) { forEachStore(t, testCountReachableUsers) }

func testCountReachableUsers(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const bot = 100
	put := func(guildID uint64, users ...uint64) {
		for _, u := range users {
			require.NoError(t, s.PutGuildMember(ctx, &GuildMember{GuildID: guildID, UserID: u, JoinedAt: t0}))
		}
	}
	n, err := s.CountReachableUsers(ctx, bot)
	require.NoError(t, err)
	assert.Zero(t, n, "a bot in no guild")

	put(1, bot, 1, 2, 3)
	put(2, bot, 3, 4)  // user 3 is in both guilds: counted once
	put(3, 5, 6, 7, 8) // a guild without the bot
	n, err = s.CountReachableUsers(ctx, bot)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "users 1 to 4")
}
