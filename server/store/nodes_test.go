package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The node registry: a heartbeat writes a node's row, a later one replaces it, rows list by id.
func TestNodes(t *testing.T) { forEachStore(t, testNodes) }

func testNodes(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	nodes, err := s.ListNodes(ctx)
	require.NoError(t, err)
	require.Empty(t, nodes)
	two := Node{ID: 2, Address: "http://10.0.0.2:7710", StartedAt: t0, Sessions: 5, Calls: 1, UpdatedAt: t0}
	one := Node{ID: 1, Address: "http://10.0.0.1:7710", StartedAt: t0, UpdatedAt: t0}
	require.NoError(t, s.PutNode(ctx, &two))
	require.NoError(t, s.PutNode(ctx, &one))
	two.Sessions, two.Calls, two.UpdatedAt = 7, 0, t0.Add(10*time.Second)
	require.NoError(t, s.PutNode(ctx, &two))
	nodes, err = s.ListNodes(ctx)
	require.NoError(t, err)
	require.Equal(t, []Node{one, two}, nodes)

	// A restarted node replaces its row, the new start time with it.
	one.StartedAt, one.UpdatedAt, one.Address = t0.Add(time.Hour), t0.Add(time.Hour), "http://10.0.0.9:7710"
	require.NoError(t, s.WithTx(ctx, func(tx Store) error { return tx.PutNode(ctx, &one) }))
	nodes, err = s.ListNodes(ctx)
	require.NoError(t, err)
	require.Equal(t, []Node{one, two}, nodes)
}
