// Package order keeps the events of a cluster in commit order. A service that commits a change
// and then publishes its events holds, across both, a cluster-wide lock of the thing changed (a
// lobby, a DM channel, each user of a relationship ...): two nodes changing the same thing take
// turns, so the bus carries their events in the order the store committed them, and changes of
// different things do not wait for each other. The lock carries the largest
// id made under it, and the next holder makes its ids above it, so that message ids and lobby
// revisions also increase along that order whichever node made them: the SDK drops a message
// that is not newer than the last one it delivered.
//
// The changes made under a lock are committed on the store the lock hands out (Held.Store): on
// PostgreSQL, the lock's own database session, each commit recording the largest id made so far.
// A node that dies holding the lock frees it with that session, once whatever commit it had sent
// has landed or failed: the next holder sees every change of the last one, and its ids.
package order

import (
	"context"
	"slices"
	"sync"

	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// Lock takes the cluster-wide locks of keys, one or more, at once (store.DB.OrderLockAll). last,
// when not nil, returns an id above every id made so far: each commit made on the held store
// records it as the keys' floor.
type Lock func(ctx context.Context, keys []string, last func() uint64) (Held, error)

// Held is a lock held.
type Held struct {
	// Floor is the largest id recorded under the keys.
	Floor uint64
	// Store is where the holder commits its changes (see the package doc).
	Store store.Store
	// Release releases the lock; the holder no longer uses Store.
	Release func()
}

// Hold takes key's lock and makes ids continue above the largest id made under it; each commit
// on the held store records the ids made so far. With nil ids (a service that makes no ids its
// events are ordered by) the lock only orders. A nil lock (a node alone, whose services keep
// their order with a mutex: Local) holds nothing, and its store is st.
func Hold(ctx context.Context, lock Lock, key string, ids *snowflake.Generator, st store.Store) (Held, error) {
	return HoldAll(ctx, lock, []string{key}, ids, st)
}

// HoldAll is Hold of every key of keys at once: a change whose events are ordered for each of
// several things (a relationship change, for each of its two users) waits for the last holder
// of any of them, and holds back the next.
func HoldAll(ctx context.Context, lock Lock, keys []string, ids *snowflake.Generator, st store.Store) (Held, error) {
	if lock == nil {
		return Held{Store: st, Release: func() {}}, nil
	}
	var last func() uint64
	if ids != nil {
		last = ids.Next
	}
	h, err := lock(ctx, keys, last)
	if err != nil {
		return Held{}, err
	}
	if ids != nil {
		ids.NextAbove(h.Floor)
	}
	return h, nil
}

// Local is a node's own mutexes by key: what a service holds, beside the cluster's lock of the
// same keys (Hold), from a change's transaction until its events are handed on, so that its
// node sends them in commit order for each key. Changes of different keys do not wait for each
// other. The zero value is ready; a key's mutex lives while it is held or waited for.
type Local struct {
	mu   sync.Mutex
	keys map[string]*localKey
}

// localKey is one key's mutex (a token in a channel of one: blocked on, a goroutine is seen
// blocked by testing/synctest) and how many hold it or wait for it.
type localKey struct {
	held chan struct{}
	n    int
}

// Lock locks every key of keys, in their sorted order (as the cluster's locks are taken: two
// changes of overlapping keys never wait for each other), and returns what unlocks them.
func (l *Local) Lock(keys ...string) (unlock func()) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	held := make([]*localKey, len(keys))
	l.mu.Lock()
	if l.keys == nil {
		l.keys = map[string]*localKey{}
	}
	for i, k := range keys {
		m := l.keys[k]
		if m == nil {
			m = &localKey{held: make(chan struct{}, 1)}
			l.keys[k] = m
		}
		m.n++
		held[i] = m
	}
	l.mu.Unlock()
	for _, m := range held {
		m.held <- struct{}{}
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, m := range held {
			<-m.held
			if m.n--; m.n == 0 {
				delete(l.keys, keys[i])
			}
		}
	}
}
