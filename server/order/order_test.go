package order

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// A lock whose commits record the largest id made so far (last): the next holder, on another
// node, makes ids above every id the previous one made, though its node's bits are lower, and
// though the previous holder never released the lock (its node died after its commit).
func TestHoldCarriesTheLargestID(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	var recorded uint64
	held := false
	var commit func() // a commit on the held store: records last()
	lock := Lock(func(_ context.Context, _ []string, last func() uint64) (Held, error) {
		require.False(t, held)
		held = true
		commit = func() {
			if last != nil {
				recorded = max(recorded, last())
			}
		}
		return Held{Floor: recorded, Release: func() { held = false }}, nil
	})
	hi, lo := snowflake.NewNode(c, 0, 7), snowflake.NewNode(c, 0, 1)
	h, err := Hold(context.Background(), lock, "k", hi, nil)
	require.NoError(t, err)
	a := hi.Next()
	commit()
	assert.Greater(t, recorded, a)
	held = false // its node died: never released
	h, err = Hold(context.Background(), lock, "k", lo, nil)
	require.NoError(t, err)
	b := lo.Next()
	h.Release()
	assert.Greater(t, b, a, "the second node's id is above the first's")
	// Without ids, the commits record nothing.
	h, err = Hold(context.Background(), lock, "k", nil, nil)
	require.NoError(t, err)
	before := recorded
	commit()
	h.Release()
	assert.Equal(t, before, recorded)
	// No lock: nothing held, and the store is the caller's.
	st := &fakeStore{}
	h, err = Hold(context.Background(), nil, "k", lo, st)
	require.NoError(t, err)
	assert.Same(t, st, h.Store)
	h.Release()
}

// fakeStore is a store the test only compares.
type fakeStore struct{ store.Store }

// A node's own locks are each a key's: a key held holds back only the changes of that key, a
// change of several keys waits for each, and a key's mutex is dropped once nobody holds or waits
// for it.
func TestLocalLocksEachKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Local
		unlockA := l.Lock("a")
		unlockC := l.Lock("c") // another key: not held back
		var got []string
		done := make(chan struct{})
		go func() { // owned by this test, which waits for done
			defer close(done)
			unlock := l.Lock("b", "a") // taken in the keys' order: a, then b
			got = append(got, "a b")
			unlock()
		}()
		synctest.Wait()
		assert.Empty(t, got, "a's change waits for a")
		unlockB := l.Lock("b") // not held yet: the waiter takes a first
		unlockC()
		unlockA()
		synctest.Wait()
		assert.Empty(t, got, "and then for b")
		unlockB()
		<-done
		assert.Equal(t, []string{"a b"}, got)
		assert.Empty(t, l.keys, "no mutex kept for keys nobody holds")
		l.Lock("a", "a")() // one key named twice is locked once
	})
}
