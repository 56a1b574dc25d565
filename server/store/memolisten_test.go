package store

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Nodes on one PostgreSQL keep the applications and authorizations they read, for the reads
// that may be a moment behind (MayBeBehind), and forget them when another node changes them
// (migration 16's notifications); while a node does not hear the notifications, it keeps nothing.
func TestClusterMemoFollowsOtherNodes(t *testing.T) {
	ctx := context.Background()
	u := postgresDatabase(t)
	a, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 1})
	require.NoError(t, err)
	defer a.Close()
	b, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 2})
	require.NoError(t, err)
	defer b.Close()
	require.True(t, b.memo.notified.Load(), "the listener listens once the store is open")

	var reads atomic.Int64 // b's statements that read an application or an authorization
	b.ObserveQueries(func(op string, _ time.Duration) {
		if op == "GetApplication" || op == "FindAuthorization" {
			reads.Add(1)
		}
	})
	app := &Application{ID: 7, Name: "first", RedirectURIs: []string{}, ClientSecretHash: []byte("h"), BotTokenHash: []byte("b"), WebhookKey: []byte("k")}
	require.NoError(t, a.CreateApplication(ctx, app))
	auth := &Authorization{ID: 70, AppID: 7, UserID: 9, Scopes: []string{"identify"}}
	require.NoError(t, a.PutAuthorization(ctx, auth))

	behind := MayBeBehind(ctx)
	readBoth := func() (string, []string) {
		got, err := b.GetApplication(behind, 7)
		require.NoError(t, err)
		au, err := b.FindAuthorization(behind, 7, 9)
		require.NoError(t, err)
		return got.Name, au.Scopes
	}
	// Kept: the notifications of a's writes may still be on their way and empty b's memo, so
	// read until two rounds in a row are answered from it.
	require.Eventually(t, func() bool {
		readBoth()
		before := reads.Load()
		readBoth()
		return reads.Load() == before
	}, 10*time.Second, time.Millisecond)

	// Reads not under MayBeBehind are never answered by the memo.
	before := reads.Load()
	_, err = b.GetApplication(ctx, 7)
	require.NoError(t, err)
	assert.Equal(t, before+1, reads.Load(), "read from the database")

	// a changes both: b's plain reads see it at once, and b hears of it and reads them again.
	app.Name = "second"
	require.NoError(t, a.UpdateApplication(ctx, app))
	got, err := b.GetApplication(ctx, 7)
	require.NoError(t, err)
	assert.Equal(t, "second", got.Name)
	auth.Scopes = []string{"identify", "email"}
	require.NoError(t, a.PutAuthorization(ctx, auth))
	require.Eventually(t, func() bool {
		name, scopes := readBoth()
		return name == "second" && len(scopes) == 2
	}, 10*time.Second, time.Millisecond)

	// b's listener loses its connection: b keeps nothing until it listens again.
	_, err = a.db.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+memoChannel+`'`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !b.memo.notified.Load() }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return b.memo.notified.Load() }, 10*time.Second, time.Millisecond)
	app.Name = "third"
	require.NoError(t, a.UpdateApplication(ctx, app))
	require.Eventually(t, func() bool {
		name, _ := readBoth()
		return name == "third"
	}, 10*time.Second, time.Millisecond)

	// Tokens are kept for reads that may be a moment behind (a lobby message's sender), and
	// forgotten when a deletes one (migration 21's notifications); a plain read of b finds a
	// token deleted by a gone at once.
	var tokenReads atomic.Int64
	b.ObserveQueries(func(op string, _ time.Duration) {
		if op == "GetToken" {
			tokenReads.Add(1)
		}
	})
	tok := &Token{ID: 1, Hash: []byte("tok"), Kind: AccessToken, AuthorizationID: 70, AppID: 7, UserID: 9, ExpiresAt: time.Now().Add(time.Hour)}
	require.NoError(t, a.InsertToken(ctx, tok))
	require.Eventually(t, func() bool {
		_, err := b.GetToken(behind, tok.ID)
		require.NoError(t, err)
		before := tokenReads.Load()
		_, err = b.GetToken(behind, tok.ID)
		require.NoError(t, err)
		return tokenReads.Load() == before
	}, 10*time.Second, time.Millisecond, "b answers the token from its memo")
	require.NoError(t, a.DeleteToken(ctx, tok.ID))
	_, err = b.GetToken(ctx, tok.ID)
	assert.ErrorIs(t, err, ErrNotFound, "a plain read")
	require.Eventually(t, func() bool {
		_, err := b.GetToken(behind, tok.ID)
		return errors.Is(err, ErrNotFound)
	}, 10*time.Second, time.Millisecond, "b forgets the deleted token")

	// The shared epoch, likewise: b answers it again under MayBeBehind, and reads it anew once a
	// moves it (its change's notification); a plain read of b sees the move at once.
	var epochReads atomic.Int64
	b.ObserveQueries(func(op string, _ time.Duration) {
		if op == "SharedEpoch" {
			epochReads.Add(1)
		}
	})
	var kept uint64
	require.Eventually(t, func() bool {
		first, err := b.SharedEpoch(behind, "lobbies")
		require.NoError(t, err)
		before := epochReads.Load()
		kept, err = b.SharedEpoch(behind, "lobbies")
		require.NoError(t, err)
		return epochReads.Load() == before && kept == first
	}, 10*time.Second, time.Millisecond, "b answers the epoch from its memo")
	app.Name = "fourth"
	require.NoError(t, a.UpdateApplication(ctx, app))
	before = epochReads.Load()
	now, err := b.SharedEpoch(ctx, "lobbies")
	require.NoError(t, err)
	assert.Greater(t, now, kept, "a plain read")
	assert.Equal(t, before+1, epochReads.Load(), "a plain read reads the database")
	require.Eventually(t, func() bool {
		n, err := b.SharedEpoch(behind, "lobbies")
		require.NoError(t, err)
		return n > kept
	}, 10*time.Second, time.Millisecond, "b follows a's move")
}
