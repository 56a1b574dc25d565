// Package order keeps the events of a cluster in commit order. A service that commits a change
// and then publishes its events holds, across both, a cluster-wide lock of the thing changed (a
// lobby, a service's relationships ...): two nodes changing the same thing take turns, so the
// bus carries their events in the order the store committed them. The lock carries the largest
// id made under it, and the next holder makes its ids above it, so that message ids and lobby
// revisions also increase along that order whichever node made them: the SDK drops a message
// that is not newer than the last one it delivered.
package order

import (
	"context"

	"sdkpp/server/snowflake"
)

// Lock takes the cluster-wide lock of key and returns the largest id recorded under it; unlock
// records the largest id used and releases it (store.DB.OrderLock).
type Lock func(ctx context.Context, key string) (floor uint64, unlock func(last uint64), err error)

// Hold takes key's lock and makes ids continue above the largest id made under it; release
// records every id ids has made so far and releases the lock. With nil ids (a service that
// makes no ids its events are ordered by) the lock only orders. A nil lock (a node alone, whose
// services keep their order with a mutex) holds nothing.
func Hold(ctx context.Context, lock Lock, key string, ids *snowflake.Generator) (release func(), err error) {
	if lock == nil {
		return func() {}, nil
	}
	floor, unlock, err := lock(ctx, key)
	if err != nil {
		return nil, err
	}
	if ids == nil {
		return func() { unlock(0) }, nil
	}
	ids.NextAbove(floor)
	return func() { unlock(ids.Next()) }, nil
}
