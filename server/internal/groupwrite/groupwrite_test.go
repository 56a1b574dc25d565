package groupwrite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// store is a Flush whose groups block until released, recording what each stored.
type store struct {
	mu      sync.Mutex
	groups  [][]int
	stored  map[int]bool
	release chan error // each flush takes its outcome from here
	fail    map[int]error
}

func newStore() *store {
	return &store{stored: map[int]bool{}, release: make(chan error), fail: map[int]error{}}
}

func (s *store) flush(_ context.Context, items []int, errs []error) error {
	s.mu.Lock()
	s.groups = append(s.groups, append([]int(nil), items...))
	s.mu.Unlock()
	if err := <-s.release; err != nil {
		return err // nothing stored
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, it := range items {
		if err := s.fail[it]; err != nil {
			errs[i] = err
			continue
		}
		s.stored[it] = true
	}
	return nil
}

// flushed returns the groups flushed so far.
func (s *store) flushed() [][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.groups)
}

// writes starts a Write of each item and returns their outcomes' channel.
func writes(w *Writer[int], items ...int) <-chan [2]any {
	out := make(chan [2]any, len(items))
	for _, it := range items {
		go func() { out <- [2]any{it, w.Write(context.Background(), it)} }()
		synctest.Wait() // each queued in turn, in order
	}
	return out
}

func TestGroupsFormWhileTheFlushRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 64, Yields: 2}, s.flush)
		first := writes(w, 1)
		later := writes(w, 2, 3, 4)
		assert.Equal(t, [][]int{{1}}, s.groups, "the first write is flushed at once, alone")

		s.release <- nil
		synctest.Wait()
		got := <-first
		assert.Equal(t, [2]any{1, nil}, got)
		assert.Empty(t, later, "the next group is not answered before its own flush")
		assert.Equal(t, [][]int{{1}, {2, 3, 4}}, s.groups, "the writes that came meanwhile are the next group")

		s.release <- nil
		synctest.Wait()
		for range 3 {
			r := <-later
			assert.Nil(t, r[1])
		}
		assert.Equal(t, map[int]bool{1: true, 2: true, 3: true, 4: true}, s.stored)
	})
}

func TestNoAnswerBeforeTheWholeGroupIsStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 64, Yields: 2}, s.flush)
		head := writes(w, 0)
		group := writes(w, 1, 2, 3, 4, 5)
		s.release <- nil
		synctest.Wait()
		<-head
		require.Len(t, s.groups, 2)
		// The group's flush runs, blocked: none of its callers has returned.
		assert.Empty(t, group)
		s.release <- nil
		synctest.Wait()
		require.Len(t, group, 5)
		s.mu.Lock()
		defer s.mu.Unlock()
		for range 5 {
			r := <-group
			assert.Nil(t, r[1])
			assert.True(t, s.stored[r[0].(int)], "answered only once stored")
		}
	})
}

func TestAFailedFlushFailsItsWholeGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 64, Yields: 2}, s.flush)
		head := writes(w, 0)
		group := writes(w, 1, 2, 3)
		s.release <- nil
		synctest.Wait()
		<-head
		commit := errors.New("disk full")
		s.release <- commit
		synctest.Wait()
		for range 3 {
			r := <-group
			require.ErrorIs(t, r[1].(error), commit)
			assert.Contains(t, r[1].(error).Error(), "a group of 3 writes failed")
		}
		assert.Equal(t, map[int]bool{0: true}, s.stored, "the failed group stored nothing")

		// The writer goes on with the next group.
		after := writes(w, 9)
		s.release <- nil
		synctest.Wait()
		assert.Equal(t, [2]any{9, nil}, <-after)
	})
}

func TestAnItemFailsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		taken := errors.New("taken")
		s.fail[2] = taken
		w := New(Options{Max: 64, Yields: 2}, s.flush)
		head := writes(w, 0)
		group := writes(w, 1, 2, 3)
		s.release <- nil
		s.release <- nil
		synctest.Wait()
		<-head
		for range 3 {
			r := <-group
			if r[0] == 2 {
				assert.Equal(t, taken, r[1])
			} else {
				assert.Nil(t, r[1])
			}
		}
	})
}

func TestGroupsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 2, Yields: 2}, s.flush)
		all := writes(w, 1, 2, 3, 4, 5)
		for range 3 {
			s.release <- nil
			synctest.Wait()
		}
		assert.Equal(t, [][]int{{1}, {2, 3}, {4, 5}}, s.groups)
		assert.Len(t, all, 5)
	})
}

func TestCloseDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 64, Yields: 2}, s.flush)
		pending := writes(w, 1, 2, 3)
		closed := make(chan struct{})
		go func() {
			w.Close()
			close(closed)
		}()
		synctest.Wait()
		assert.ErrorIs(t, w.Write(context.Background(), 4), ErrClosed, "closed to new writes at once")
		select {
		case <-closed:
			t.Fatal("Close returned with writes not flushed")
		default:
		}
		s.release <- nil // {1}
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned with writes not flushed")
		default:
		}
		s.release <- nil // {2, 3}
		synctest.Wait()
		<-closed
		require.Len(t, pending, 3)
		for range 3 {
			assert.Nil(t, (<-pending)[1])
		}
		assert.Equal(t, map[int]bool{1: true, 2: true, 3: true}, s.stored)
		w.Close() // again: nothing to wait for
	})
}

func TestAPanickingFlushFailsTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w2 := New(Options{Max: 64}, func(ctx context.Context, items []int, errs []error) error {
			if items[0] == 1 {
				return s.flush(ctx, items, errs)
			}
			panic("boom")
		})
		head := writes(w2, 1)
		group := make(chan [2]any, 3)
		var recovered any
		go func() {
			defer func() { recovered = recover(); group <- [2]any{2, "panicked"} }()
			w2.Write(context.Background(), 2)
		}()
		synctest.Wait()
		for _, it := range []int{3, 4} {
			go func() { group <- [2]any{it, w2.Write(context.Background(), it)} }()
			synctest.Wait()
		}
		s.release <- nil
		synctest.Wait()
		<-head
		assert.Equal(t, "boom", recovered, "the panic goes on up the flushing caller")
		for range 3 {
			r := <-group
			if r[0] == 2 {
				continue
			}
			assert.ErrorContains(t, r[1].(error), "panicked")
		}
		// The writer is usable after it.
		after := writes(w2, 1)
		s.release <- nil
		synctest.Wait()
		assert.Nil(t, (<-after)[1])
	})
}

// inTurns runs callers that each write rounds times, resting rest after each answer (the time a
// client takes to read an answer and send its next request), through a Writer whose flush takes
// flush, and returns the sizes of the groups flushed.
func inTurns(t *testing.T, opts Options, callers, rounds int, flush, rest time.Duration) []int {
	var mu sync.Mutex
	var sizes []int
	w := New(opts, func(_ context.Context, items []int, _ []error) error {
		time.Sleep(flush)
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(items))
		return nil
	})
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				assert.NoError(t, w.Write(context.Background(), c*rounds+r))
				time.Sleep(rest)
			}
		})
	}
	wg.Wait()
	w.Close()
	return sizes
}

func TestCallersWritingInTurnsSplitWithoutGather(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sizes := inTurns(t, Options{Max: 64}, 8, 20, 100*time.Microsecond, 30*time.Microsecond)
		// The first caller is flushed alone, the 7 others while it is; then each group's
		// callers come back while the other's flush runs: 1 and 7, in turns.
		for i, n := range sizes[:len(sizes)-1] {
			assert.Equal(t, []int{1, 7}[i%2], n, "group %d", i)
		}
	})
}

func TestGatherJoinsCallersWritingInTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		sizes := inTurns(t, Options{Max: 64, Gather: time.Millisecond}, 8, 20, 100*time.Microsecond, 30*time.Microsecond)
		// The first caller is flushed alone, with 7 coming meanwhile: a crowd of 8. From then
		// on each flusher waits for all 8, the first's caller back from its rest included.
		require.Len(t, sizes, 21, "20 rounds of 8 in 21 flushes, where groups of 1 and 7 took 40")
		assert.Equal(t, 1, sizes[0])
		for i, n := range sizes[1:20] {
			assert.Equal(t, 8, n, "group %d", i+1)
		}
		// The first caller wrote its 20 writes one group ahead and stopped: the last group's wait
		// for it ran out, the only one.
		assert.Equal(t, 7, sizes[20])
		assert.Equal(t, 21*(100+30)*time.Microsecond+time.Millisecond, time.Since(start))
	})
}

func TestGatherRunsOutWhenTheCrowdShrinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 64, Gather: time.Millisecond}, s.flush)
		first := writes(w, 1)
		later := writes(w, 2, 3, 4)
		s.release <- nil // {1}, with 3 more come meanwhile: a crowd of 4
		synctest.Wait()
		<-first
		assert.Equal(t, [][]int{{1}}, s.flushed(), "the next flusher waits for a fourth caller")
		start := time.Now()
		time.Sleep(time.Millisecond) // none comes
		synctest.Wait()
		assert.Equal(t, [][]int{{1}, {2, 3, 4}}, s.flushed(), "the wait ran out: the group is flushed as it is")
		s.release <- nil
		synctest.Wait()
		require.Len(t, later, 3)
		assert.Equal(t, time.Millisecond, time.Since(start))

		// The crowd is now 3 (the group of 3, none came meanwhile): a lone write waits for
		// two more, and the group is flushed as the third comes, with no time passed.
		start = time.Now()
		next := writes(w, 5, 6)
		assert.Len(t, s.flushed(), 2, "5 and 6 wait for a third")
		last := writes(w, 7)
		assert.Equal(t, [][]int{{1}, {2, 3, 4}, {5, 6, 7}}, s.flushed())
		assert.Zero(t, time.Since(start))
		s.release <- nil
		synctest.Wait()
		require.Len(t, next, 2)
		require.Len(t, last, 1)
	})
}

func TestCloseEndsAGather(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore()
		w := New(Options{Max: 64, Gather: time.Hour}, s.flush)
		first := writes(w, 1)
		later := writes(w, 2, 3)
		s.release <- nil // a crowd of 3; then 2 wait for a third
		synctest.Wait()
		<-first
		closed := make(chan struct{})
		go func() {
			w.Close()
			close(closed)
		}()
		synctest.Wait()
		assert.Equal(t, [][]int{{1}, {2, 3}}, s.flushed(), "no caller can come: the group is flushed at once")
		s.release <- nil
		synctest.Wait()
		<-closed
		require.Len(t, later, 2)
	})
}

// Each caller gets its own item's outcome, write after write, though the waiters (and their
// channels) are used again from one Write to the next, and one timer times every gathering wait,
// some of which run out (callers resting longer than others).
func TestOutcomesStayTheCallersAcrossWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		failed := func(it int) error { return fmt.Errorf("item %d failed", it) }
		var flushes atomic.Int64
		w := New(Options{Max: 5, Yields: 1, Gather: 50 * time.Microsecond}, func(_ context.Context, items []int, errs []error) error {
			flushes.Add(1)
			time.Sleep(20 * time.Microsecond)
			for i, it := range items {
				if it%3 == 0 {
					errs[i] = failed(it)
				}
			}
			return nil
		})
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Go(func() {
				for r := range 40 {
					it := c*1000 + r
					err := w.Write(context.Background(), it)
					if it%3 == 0 {
						assert.Equal(t, failed(it), err, "caller %d, write %d", c, r)
					} else {
						assert.NoError(t, err, "caller %d, write %d", c, r)
					}
					time.Sleep(time.Duration(c%3) * 30 * time.Microsecond)
				}
			})
		}
		wg.Wait()
		w.Close()
		assert.Less(t, flushes.Load(), int64(8*40), "writes were grouped")
	})
}
