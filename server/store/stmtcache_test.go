package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Queries run through prepared statements that are kept: a query first seen inside a
// transaction is prepared once the transaction ends, later transactions reuse it, and a rolled
// back transaction leaves nothing behind even when its statements were cached.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cached := func() int {
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		return len(s.cache.stmts)
	}
	before := cached()
	require.NoError(t, s.WithTx(ctx, func(st Store) error {
		return st.CreateUser(ctx, &User{ID: 1, Username: "a", CreatedAt: now})
	}))
	got := cached()
	require.Equal(t, before+1, got, "after the first transaction %d statements are cached, want %d", got, before+1)
	for i, name := range []string{"b", "c"} {
		require.NoError(t, s.WithTx(ctx, func(st Store) error {
			return st.CreateUser(ctx, &User{ID: uint64(2 + i), Username: name, CreatedAt: now})
		}))
	}
	got = cached()
	require.Equal(t, before+1, got, "the same query was prepared again: %d statements, want %d", got, before+1)
	rollback := errors.New("rollback")
	require.ErrorIs(t, s.WithTx(ctx, func(st Store) error {
		if err := st.CreateUser(ctx, &User{ID: 9, Username: "z", CreatedAt: now}); err != nil {
			return err
		}
		return rollback
	}), rollback)
	_, err = s.GetUser(ctx, 9)
	require.ErrorIs(t, err, ErrNotFound, "a rolled back insert through a cached statement is visible")
	for _, id := range []uint64{1, 2, 3} {
		u, err := s.GetUser(ctx, id)
		require.NoError(t, err, "user %d: %+v", id, u)
		require.Equal(t, id, u.ID, "user %d: %+v", id, u)
	}
	require.ErrorIs(t, s.CreateUser(ctx, &User{ID: 4, Username: "a", CreatedAt: now}), ErrConflict, "a cached insert must still report conflicts")
}
