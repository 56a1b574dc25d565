package snowflake

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
)

func TestIDsIncreaseWhenTheClockStandsStill(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g := New(clock.NewFake(at), 0)
	a, b := g.Next(), g.Next()
	require.Greater(t, b, a, "ids not increasing: %d then %d", a, b)
	require.True(t, Time(a).Equal(at), "Time(%d) = %v, want %v", a, Time(a), at)
	// After a restart with an older clock, ids continue above the stored floor.
	g2 := New(clock.NewFake(at.Add(-time.Hour)), b)
	c := g2.Next()
	require.Greater(t, c, b, "id %d not above floor %d", c, b)
}

// Ids carry their node: two nodes minting in the same millisecond, with the clock standing still
// or a floor from the other node ahead, never make the same id, and each node's ids increase.
func TestNodesNeverCollide(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := clock.NewFake(at)
	a, b := NewNode(c, 0, 1), NewNode(c, 0, MaxNode)
	seen := map[uint64]bool{}
	var lastA, lastB uint64
	for range 3 * maxIncrement { // past an increment's overflow
		x, y := a.Next(), b.Next()
		require.Greater(t, x, lastA)
		require.Greater(t, y, lastB)
		lastA, lastB = x, y
		require.False(t, seen[x] || seen[y], "id made twice")
		seen[x], seen[y] = true, true
		require.Equal(t, 1, Node(x))
		require.Equal(t, MaxNode, Node(y))
	}
	// A node restarting behind the other's floor, with a clock gone back, keeps its bits.
	for _, floor := range []uint64{lastA, lastB} {
		g := NewNode(clock.NewFake(at.Add(-time.Hour)), floor, 5)
		id := g.Next()
		require.Greater(t, id, floor)
		require.Equal(t, 5, Node(id))
	}
	id := NewNode(c, 0, 3).Next()
	require.Equal(t, 3, Node(id))
	require.True(t, Time(id).Equal(at))
}

// Nodes taking turns under a lock that carries the last id: each id is above the one before,
// whichever node made it, though the higher node made its ids first in the same millisecond.
func TestNextAboveOrdersTurnsAcrossNodes(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	nodes := []*Generator{NewNode(c, 0, 9), NewNode(c, 0, 2), NewNode(c, 0, 5)}
	var last uint64
	for i := range 30 {
		g := nodes[i%len(nodes)]
		id := g.NextAbove(last)
		require.Greater(t, id, last, "turn %d", i)
		require.Equal(t, int(g.node), Node(id))
		last = id
	}
}
