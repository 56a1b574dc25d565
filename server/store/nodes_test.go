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

	// Node 1 misses its heartbeats: of two nodes that find it down, one claims it; a claim of
	// a row the node has written since fails, and a heartbeat clears the claim.
	one.Life = "life-a"
	require.NoError(t, s.PutNode(ctx, &one))
	won, err := s.ClaimDownNode(ctx, 1, one.UpdatedAt, 2)
	require.NoError(t, err)
	require.True(t, won)
	won, err = s.ClaimDownNode(ctx, 1, one.UpdatedAt, 3)
	require.NoError(t, err)
	require.False(t, won, "claimed once")
	nodes, err = s.ListNodes(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, nodes[0].DownBy)
	require.Equal(t, "life-a", nodes[0].Life)
	won, err = s.ClaimDownNode(ctx, 2, t0, 3)
	require.NoError(t, err)
	require.False(t, won, "node 2 wrote its row since")
	one.UpdatedAt, one.Life = one.UpdatedAt.Add(time.Minute), "life-b"
	require.NoError(t, s.PutNode(ctx, &one))
	nodes, err = s.ListNodes(ctx)
	require.NoError(t, err)
	require.Equal(t, []Node{one, two}, nodes, "back: no claim")
}
