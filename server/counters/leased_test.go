package counters_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/counters"
)

// countingStore counts the takes a Store is asked for.
type countingStore struct {
	counters.Store
	takes atomic.Int64
}

func (c *countingStore) TakeWindows(ctx context.Context, now time.Time, hits []counters.Hit, n []int) ([]counters.Window, []int, error) {
	c.takes.Add(1)
	return c.Store.TakeWindows(ctx, now, hits, n)
}

// On one node a Leased counts as Stored does: exactly the limit, each window's count as the
// events came, and afresh in the next window; a refused event takes nothing from its other
// windows.
func TestLeasedOneNode(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{Store: openSQLite(t)}
	c := counters.NewLeased(st)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	global := counters.Hit{Key: "g", Limit: 100, Window: time.Second}
	route := counters.Hit{Key: "r", Limit: 50, Window: time.Second}
	for i := range 50 {
		ok, ws, err := c.Hit(ctx, t0.Add(time.Duration(i)*time.Millisecond), global, route)
		require.NoError(t, err)
		require.True(t, ok, "event %d", i)
		assert.Equal(t, []int{i + 1, i + 1}, []int{ws[0].Count, ws[1].Count})
		assert.True(t, ws[1].End.Equal(t0.Add(time.Second)))
	}
	ok, ws, err := c.Hit(ctx, t0.Add(100*time.Millisecond), global, route)
	require.NoError(t, err)
	assert.False(t, ok, "the route's window is full")
	assert.Equal(t, 50, ws[1].Count)
	assert.Equal(t, 50, ws[0].Count, "the refused event took nothing from the global window")
	assert.LessOrEqual(t, st.takes.Load(), int64(15), "a write per lease (6 of the route's, 12 of the global), not per event")

	ok, ws, err = c.Hit(ctx, t0.Add(time.Second), global, route)
	require.NoError(t, err)
	assert.True(t, ok, "a new window")
	assert.Equal(t, 1, ws[1].Count)
}

// Leases taken by three nodes from one window never exceed its limit, however the events
// spread over the nodes and however many run at once; the slack is the other way, bounded.
func TestLeasedAcrossNodes(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{Store: openSQLite(t)}
	nodes := []counters.Counter{counters.NewLeased(st), counters.NewLeased(st), counters.NewLeased(st)}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const limit = 50
	lease := limit / counters.LeaseShare
	h := counters.Hit{Key: "r", Limit: limit, Window: time.Minute}

	var served atomic.Int64
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Go(func() {
			for range 3 * limit / 12 {
				ok, _, err := nodes[w%3].Hit(ctx, t0, h)
				if !assert.NoError(t, err) {
					return
				}
				if ok {
					served.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, served.Load(), int64(limit), "never more than the limit")
	assert.GreaterOrEqual(t, served.Load(), int64(limit-2*(lease-1)), "at most (nodes-1)*(lease-1) early")
	assert.Less(t, st.takes.Load(), int64(limit), "fewer writes than events")
	w, err := nodes[0].Peek(ctx, "r", t0)
	require.NoError(t, err)
	assert.Equal(t, limit, w.Count, "the store's window handed out its limit")

	// A limit below LeaseShare leases one event at a time: exact across nodes.
	small := counters.Hit{Key: "s", Limit: 6, Window: time.Minute}
	got := 0
	for i := range 18 {
		ok, _, err := nodes[i%3].Hit(ctx, t0, small)
		require.NoError(t, err)
		if ok {
			got++
		}
	}
	assert.Equal(t, 6, got)
}

// ForRequests leases where nodes share the store, and counts in memory where they do not.
func TestForRequests(t *testing.T) {
	assert.IsType(t, &counters.Memory{}, counters.ForRequests(openSQLite(t)))
}
