package store

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

// A window counts up to its limit, refuses past it without counting, and starts again when it
// ends; an event refused by one of its windows counts in none of them.
func TestHitWindows(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		route := counters.Hit{Key: "r", Limit: 2, Window: time.Second}
		global := counters.Hit{Key: "g", Limit: 3, Window: 10 * time.Second}
		for i := range 2 {
			ok, ws, err := s.HitWindows(ctx, t0.Add(time.Duration(i)*time.Millisecond), []counters.Hit{global, route})
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, i+1, ws[1].Count)
			assert.True(t, ws[1].Start.Equal(t0), "the window starts at its first event")
			assert.True(t, ws[1].End.Equal(t0.Add(time.Second)))
		}
		ok, ws, err := s.HitWindows(ctx, t0.Add(500*time.Millisecond), []counters.Hit{global, route})
		require.NoError(t, err)
		assert.False(t, ok, "the route window is full")
		assert.Equal(t, []int{2, 2}, []int{ws[0].Count, ws[1].Count}, "a refused event counts nowhere")
		w, err := s.PeekWindow(ctx, "g", t0.Add(time.Second))
		require.NoError(t, err)
		assert.Equal(t, 2, w.Count)

		ok, ws, err = s.HitWindows(ctx, t0.Add(time.Second), []counters.Hit{global, route})
		require.NoError(t, err)
		require.True(t, ok, "the route window ended")
		assert.Equal(t, []int{3, 1}, []int{ws[0].Count, ws[1].Count})
		ok, _, err = s.HitWindows(ctx, t0.Add(2*time.Second), []counters.Hit{global, {Key: "other", Limit: 5, Window: time.Second}})
		require.NoError(t, err)
		assert.False(t, ok, "the global window is full")
		w, err = s.PeekWindow(ctx, "other", t0.Add(2*time.Second))
		require.NoError(t, err)
		assert.Equal(t, 0, w.Count, "the window the refusal started counts nothing")

		w, err = s.PeekWindow(ctx, "g", t0.Add(10*time.Second))
		require.NoError(t, err)
		assert.Equal(t, counters.Window{}, w, "an ended window is none")
		require.NoError(t, s.SweepWindows(ctx, t0.Add(10*time.Second)))
		w, err = s.PeekWindow(ctx, "other", t0.Add(2*time.Second))
		require.NoError(t, err)
		assert.Equal(t, counters.Window{}, w, "swept")
	})
}

// Concurrent events never count more than the limit in one window, and every refusal is taken
// back: the window ends holding exactly the events admitted.
func TestHitWindowsConcurrent(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		const limit, callers, each = 25, 8, 10
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					ok, _, err := s.HitWindows(ctx, t0, []counters.Hit{{Key: "k", Limit: limit, Window: time.Minute}})
					if !assert.NoError(t, err) {
						return
					}
					if ok {
						admitted.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		assert.LessOrEqual(t, admitted.Load(), int64(limit))
		assert.Positive(t, admitted.Load())
		w, err := s.PeekWindow(ctx, "k", t0)
		require.NoError(t, err)
		assert.Equal(t, int(admitted.Load()), w.Count)
	})
}

// TakeWindows hands out a window's events a share at a time: what it asks while there is room,
// the rest when there is less, nothing once full; concurrent takes never hand out more than the
// limit, and a new window starts afresh.
func TestTakeWindows(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		h := counters.Hit{Key: "k", Limit: 10, Window: time.Second}
		var got []int
		for range 4 {
			ws, taken, err := s.TakeWindows(ctx, t0, []counters.Hit{h}, []int{4})
			require.NoError(t, err)
			got = append(got, taken[0])
			assert.Equal(t, min(10, 4*len(got)), ws[0].Count)
		}
		assert.Equal(t, []int{4, 4, 2, 0}, got)
		ws, taken, err := s.TakeWindows(ctx, t0.Add(time.Second), []counters.Hit{h}, []int{4})
		require.NoError(t, err)
		assert.Equal(t, []int{4}, taken, "a new window")
		assert.True(t, ws[0].Start.Equal(t0.Add(time.Second)))

		const limit = 25
		var handed atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 5 {
					_, taken, err := s.TakeWindows(ctx, t0, []counters.Hit{{Key: "c", Limit: limit, Window: time.Minute}}, []int{3})
					if !assert.NoError(t, err) {
						return
					}
					handed.Add(int64(taken[0]))
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(limit), handed.Load(), "the limit, handed out whole and no more")
		w, err := s.PeekWindow(ctx, "c", t0)
		require.NoError(t, err)
		assert.Equal(t, limit, w.Count)
	})
}

// The n-th most recent failure of a key within the lockout decides a lock; a success clears a
// key, a sweep forgets old failures.
func TestLoginFailures(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		for i := range 3 {
			require.NoError(t, s.AddLoginFailure(ctx, []string{"user:a", "ip:1"}, t0.Add(time.Duration(i)*time.Minute)))
		}
		at, ok, err := s.NthLoginFailure(ctx, "user:a", t0.Add(-time.Hour), 3)
		require.NoError(t, err)
		require.True(t, ok)
		assert.True(t, at.Equal(t0), "the third most recent is the first")
		at, ok, err = s.NthLoginFailure(ctx, "ip:1", t0, 2)
		require.NoError(t, err)
		require.True(t, ok, "two after t0")
		assert.True(t, at.Equal(t0.Add(time.Minute)))
		_, ok, err = s.NthLoginFailure(ctx, "user:a", t0, 3)
		require.NoError(t, err)
		assert.False(t, ok, "only failures after since count")

		require.NoError(t, s.ClearLoginFailures(ctx, "user:a"))
		_, ok, err = s.NthLoginFailure(ctx, "user:a", t0.Add(-time.Hour), 1)
		require.NoError(t, err)
		assert.False(t, ok, "cleared")
		require.NoError(t, s.SweepLoginFailures(ctx, t0.Add(time.Minute)))
		_, ok, err = s.NthLoginFailure(ctx, "ip:1", t0.Add(-time.Hour), 2)
		require.NoError(t, err)
		assert.False(t, ok, "two swept, one left")
	})
}
