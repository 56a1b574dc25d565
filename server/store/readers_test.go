package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Only SELECTs go to SQLite's readers; anything that may write goes to the writer.
func TestIsRead(t *testing.T) {
	for q, want := range map[string]bool{
		`SELECT 1`:                                     true,
		"\n\t\tselect id FROM users":                   true,
		`(SELECT 1) UNION ALL (SELECT 2)`:              true,
		`INSERT INTO t VALUES (1) RETURNING id`:        false,
		`UPDATE t SET a=1 RETURNING a`:                 false,
		`WITH x AS (SELECT 1) DELETE FROM t`:           false,
		`DELETE FROM t WHERE id IN (SELECT id FROM u)`: false,
		`SEL`: false,
	} {
		assert.Equal(t, want, isRead(q), q)
	}
}

// The readers of a SQLite store in a data directory read what the writer has committed, and
// cannot write.
func TestSQLiteReaders(t *testing.T) {
	ctx := context.Background()
	s := openDir(t)
	require.NotNil(t, s.readers)
	require.NoError(t, s.PutAuthorization(ctx, &Authorization{ID: 9, AppID: 1, UserID: 2, Scopes: []string{"identify"}}))
	a, err := s.GetAuthorization(ctx, 9)
	require.NoError(t, err, "a reader does not see the writer's commit")
	assert.Equal(t, uint64(2), a.UserID)
	_, err = s.readers.ExecContext(ctx, `DELETE FROM authorizations`)
	require.Error(t, err, "a reader wrote")
	_, err = s.GetAuthorization(ctx, 9)
	require.NoError(t, err)
}

// A token read on a reader while it is being deleted is not kept in the memo: once DeleteToken
// has returned, no read finds it, however many reads ran beside the delete.
func TestTokenCacheWithReaders(t *testing.T) {
	ctx := context.Background()
	s := openDir(t)
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.PutAuthorization(ctx, &Authorization{ID: 9, AppID: 1, UserID: 2, Scopes: []string{"identify"}}))
	for round := range 50 {
		id := uint64(round + 1)
		require.NoError(t, s.InsertToken(ctx, &Token{ID: id, Hash: []byte{byte(round)}, Kind: AccessToken, AuthorizationID: 9, AppID: 1, UserID: 2, ExpiresAt: exp}))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						_, _ = s.GetToken(ctx, id)
					}
				}
			})
		}
		require.NoError(t, s.DeleteToken(ctx, id))
		_, err := s.GetToken(ctx, id)
		close(stop)
		wg.Wait()
		require.ErrorIs(t, err, ErrNotFound, "round %d: a deleted token was read from the memo", round)
		_, err = s.GetToken(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, "round %d: a deleted token was kept in the memo", round)
	}
}
