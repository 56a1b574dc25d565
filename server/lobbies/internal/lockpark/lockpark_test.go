package lockpark

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/order"
)

// A lock put back is handed out again while it lingers, and released once it has been idle for
// the linger, or at once when it has been held for the maximum; Close releases what is kept.
func TestParkKeepsLocksALinger(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	p := New(c, 2*time.Millisecond, 20*time.Millisecond)
	released := map[uint64]int{}
	release := func(key uint64) order.Held { return order.Held{Release: func() { released[key]++ }} }

	_, _, ok := p.Take(1)
	require.False(t, ok, "nothing kept yet")
	taken := c.Now()
	p.Put(1, taken, release(1))
	c.Advance(time.Millisecond)
	r, since, ok := p.Take(1)
	require.True(t, ok, "kept within the linger")
	require.Equal(t, taken, since, "with when it was taken")
	require.Zero(t, released[1])
	_, _, ok = p.Take(1)
	require.False(t, ok, "handed out once")

	p.Put(1, since, r)
	c.Advance(2 * time.Millisecond)
	require.Equal(t, 1, released[1], "released after the linger")
	_, _, ok = p.Take(1)
	require.False(t, ok, "released: no more kept")

	// Held for the maximum already: released at once.
	p.Put(2, c.Now().Add(-20*time.Millisecond), release(2))
	require.Equal(t, 1, released[2])
	_, _, ok = p.Take(2)
	require.False(t, ok)

	// Close releases what is kept, and from then on what is put back.
	p.Put(3, c.Now(), release(3))
	p.Put(4, c.Now(), release(4))
	p.Close()
	require.Equal(t, 1, released[3])
	require.Equal(t, 1, released[4])
	p.Put(5, c.Now(), release(5))
	require.Equal(t, 1, released[5])
	c.Advance(time.Second)
	require.Equal(t, map[uint64]int{1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, released, "each released once")
}
