package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An observer sees each statement under the store method that ran it (closures and
// transactions included), commits as "commit", and nothing once removed.
func TestObserveQueries(t *testing.T) { forEachStore(t, testObserveQueries) }

func testObserveQueries(t *testing.T, s *DB) {
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[string]int{}
	s.ObserveQueries(func(op string, took time.Duration) {
		require.GreaterOrEqual(t, took, time.Duration(0))
		mu.Lock()
		seen[op]++
		mu.Unlock()
	})
	_, err := s.GetUser(ctx, 42)
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.PutNode(ctx, &Node{ID: 1, Address: "http://a"}))
	require.NoError(t, s.CreateOperator(ctx, &Operator{ID: 7, Username: "ann", PasswordHash: []byte("h"), Role: RoleViewer}))
	require.NoError(t, s.DeleteOperator(ctx, 7)) // its statements run in a closure of its own transaction
	require.NoError(t, s.WithTx(ctx, func(tx Store) error {
		_, err := tx.ListNodes(ctx)
		return err
	}))
	mu.Lock()
	require.Equal(t, map[string]int{"GetUser": 1, "PutNode": 1, "CreateOperator": 1, "DeleteOperator": 2, "ListNodes": 1,
		"commit": 2}, seen)
	clear(seen)
	mu.Unlock()

	s.ObserveQueries(nil)
	_, err = s.ListNodes(ctx)
	require.NoError(t, err)
	require.Empty(t, seen)
}

// BenchmarkObserveQueries measures what observing costs a statement: a SQLite point read,
// without and with an observer (the caller's method looked up from the stack).
func BenchmarkObserveQueries(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, "")
	require.NoError(b, err)
	defer s.Close()
	require.NoError(b, s.PutNode(ctx, &Node{ID: 1, Address: "http://a"}))
	for _, observed := range []bool{false, true} {
		name := "off"
		if observed {
			name = "on"
			s.ObserveQueries(func(string, time.Duration) {})
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.ListNodes(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
