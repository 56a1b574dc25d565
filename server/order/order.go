// Package order keeps the events of a cluster in commit order. A service that commits a change
// and then publishes its events holds, across both, a cluster-wide lock of the thing changed (a
// lobby, a service's relationships ...): two nodes changing the same thing take turns, so the
// bus carries their events in the order the store committed them. The lock carries the largest
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

	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// Lock takes the cluster-wide lock of key (store.DB.OrderLock). last, when not nil, returns an id
// above every id made so far: each commit made on the held store records it as the key's floor.
type Lock func(ctx context.Context, key string, last func() uint64) (Held, error)

// Held is a lock held.
type Held struct {
	// Floor is the largest id recorded under the key.
	Floor uint64
	// Store is where the holder commits its changes (see the package doc).
	Store store.Store
	// Release releases the lock; the holder no longer uses Store.
	Release func()
}

// Hold takes key's lock and makes ids continue above the largest id made under it; each commit
// on the held store records the ids made so far. With nil ids (a service that makes no ids its
// events are ordered by) the lock only orders. A nil lock (a node alone, whose services keep
// their order with a mutex) holds nothing, and its store is st.
func Hold(ctx context.Context, lock Lock, key string, ids *snowflake.Generator, st store.Store) (Held, error) {
	if lock == nil {
		return Held{Store: st, Release: func() {}}, nil
	}
	var last func() uint64
	if ids != nil {
		last = ids.Next
	}
	h, err := lock(ctx, key, last)
	if err != nil {
		return Held{}, err
	}
	if ids != nil {
		ids.NextAbove(h.Floor)
	}
	return h, nil
}
