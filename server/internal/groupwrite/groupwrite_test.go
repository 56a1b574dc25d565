package groupwrite

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

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
