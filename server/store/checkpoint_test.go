package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The writer of a SQLite database in a data directory makes no checkpoint of its own; the
// checkpointer makes one every checkpointCommits commits, beside it, and the WAL's pages reach
// the database file.
func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	require.NotNil(t, s.checkpoints)

	var auto int
	require.NoError(t, s.db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto))
	assert.Zero(t, auto, "the writer checkpoints nothing itself")

	dbFile := filepath.Join(dir, DatabaseFile)
	before, err := os.Stat(dbFile)
	require.NoError(t, err)
	exp := time.Now().Add(time.Hour)
	insert := func(i int) {
		require.NoError(t, s.InsertToken(ctx, &Token{ID: uint64(i + 1), Hash: fmt.Appendf(nil, "token-%04d", i), Kind: AccessToken,
			AuthorizationID: 1, AppID: 1, UserID: 2, ExpiresAt: exp}))
	}
	s.checkpoints.commits.Store(0)
	for i := range checkpointCommits - 1 {
		insert(i)
	}
	assert.Zero(t, s.checkpoints.ran.Load(), "no checkpoint before checkpointCommits commits")
	insert(checkpointCommits)
	require.Eventually(t, func() bool { return s.checkpoints.ran.Load() == 1 }, 10*time.Second, time.Millisecond)
	assert.Nil(t, s.checkpoints.failed.Load())
	after, err := os.Stat(dbFile)
	require.NoError(t, err)
	assert.Greater(t, after.Size(), before.Size(), "the checkpoint copied the tokens' pages into the database file")

	require.NoError(t, s.Close())
	// The store opens again with every token.
	s, err = OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	var n int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tokens`).Scan(&n))
	assert.Equal(t, checkpointCommits, n)
}
