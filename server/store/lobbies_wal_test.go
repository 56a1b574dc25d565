package store

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/snowflake"
)

// On SQLite, a lobby's messages stored alone (no webhook rows, no outbox) are one statement:
// a transaction of its own, without BEGIN and COMMIT statements, when no group commit is open;
// one under way they join, stored by its commit. Messages with webhook rows take a
// transaction, as before.
func TestLobbyMessagesAloneOrInAGroup(t *testing.T) {
	s := openDir(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: 100, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	counts := countOps(s)
	id := snowflake.At(now)
	msg := func(n uint64) *LobbyMessage {
		return &LobbyMessage{ID: id + n, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "m", Nonce: "n", CreatedAt: now}
	}
	stored := func(n uint64) bool {
		_, err := s.GetLobbyMessage(ctx, 100, id+n)
		if err == nil {
			return true
		}
		require.ErrorIs(t, err, ErrNotFound)
		return false
	}

	require.NoError(t, s.StoreLobbyMessages(ctx, 100, []*LobbyMessage{msg(1), msg(2)}, nil, nil))
	assert.True(t, stored(1) && stored(2), "stored alone")
	assert.Zero(t, counts()["commit"], "alone: no COMMIT of its own")
	require.ErrorIs(t, s.StoreLobbyMessages(ctx, 999, []*LobbyMessage{{ID: id + 3, LobbyID: 999, AppID: 1,
		AuthorID: 7, Content: "x", CreatedAt: now}}, nil, nil), ErrNotFound, "a lobby that is gone")
	assert.False(t, stored(3), "nothing stored for a lobby that is gone")

	release := make(chan struct{})
	var wg sync.WaitGroup
	var txErr, storeErr error
	wg.Go(func() {
		txErr = s.WithTx(ctx, func(st Store) error {
			<-release
			return st.PutAuthorization(ctx, &Authorization{ID: 9, AppID: 9, UserID: 2, Scopes: []string{"identify"}})
		})
	})
	require.Eventually(t, func() bool { return s.group.members() == 1 }, 10*time.Second, time.Millisecond)
	wg.Go(func() { storeErr = s.StoreLobbyMessages(ctx, 100, []*LobbyMessage{msg(4), msg(5)}, nil, nil) })
	require.Eventually(t, func() bool { return s.group.members() == 2 }, 10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	require.NoError(t, txErr)
	require.NoError(t, storeErr)
	assert.True(t, stored(4) && stored(5), "stored in the group")
	assert.Equal(t, 1, counts()["commit"], "in the group: stored by its one commit")

	hook := &WebhookDelivery{ID: 300, AppID: 1, EventType: "LOBBY_MESSAGE_CREATE", Body: []byte(`{}`),
		State: WebhookPending, NextAttemptAt: now, CreatedAt: now}
	require.NoError(t, s.StoreLobbyMessages(ctx, 100, []*LobbyMessage{msg(6)}, []*WebhookDelivery{hook}, nil))
	assert.True(t, stored(6), "stored with its webhook row")
	assert.Equal(t, 2, counts()["commit"], "with a webhook row: a transaction of its own")
}

// countOps observes s's queries and returns how many of each operation it has seen so far.
func countOps(s *DB) func() map[string]int {
	var mu sync.Mutex
	seen := map[string]int{}
	s.ObserveQueries(func(op string, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		seen[op]++
	})
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}
