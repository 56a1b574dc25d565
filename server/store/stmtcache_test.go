package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Queries run through prepared statements that are kept: a query first seen inside a
// transaction is prepared once the transaction ends, later transactions reuse it, and a rolled
// back transaction leaves nothing behind even when its statements were cached.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cached := func() int {
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		return len(s.cache.stmts)
	}
	before := cached()
	if err := s.WithTx(ctx, func(st Store) error {
		return st.CreateUser(ctx, &User{ID: 1, Username: "a", CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	if got := cached(); got != before+1 {
		t.Fatalf("after the first transaction %d statements are cached, want %d", got, before+1)
	}
	for i, name := range []string{"b", "c"} {
		if err := s.WithTx(ctx, func(st Store) error {
			return st.CreateUser(ctx, &User{ID: uint64(2 + i), Username: name, CreatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := cached(); got != before+1 {
		t.Fatalf("the same query was prepared again: %d statements, want %d", got, before+1)
	}
	rollback := errors.New("rollback")
	if err := s.WithTx(ctx, func(st Store) error {
		if err := st.CreateUser(ctx, &User{ID: 9, Username: "z", CreatedAt: now}); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if _, err := s.GetUser(ctx, 9); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a rolled back insert through a cached statement is visible: %v", err)
	}
	for _, id := range []uint64{1, 2, 3} {
		if u, err := s.GetUser(ctx, id); err != nil || u.ID != id {
			t.Fatalf("user %d: %+v %v", id, u, err)
		}
	}
	if err := s.CreateUser(ctx, &User{ID: 4, Username: "a", CreatedAt: now}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a cached insert must still report conflicts: %v", err)
	}
}
