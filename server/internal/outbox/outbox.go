// Package outbox names what a service hands to the gateway to keep a change's realtime events
// in the transactional outbox (package gateway's Hub.Stage): the events (Dispatch), the
// transaction they are stored in (Tx), and the gateway that stages them (Stager). On a cluster,
// the events are stored in the transaction that commits their change and published after the
// commit under the change's order lock (package order); should the node die between the two,
// the next holder of the lock, on any node, publishes them first. A node alone dispatches them
// after the commit, storing nothing.
package outbox

import (
	"context"
	"time"
)

// Dispatch is one realtime event of a change, for the gateway sessions of Users (each once):
// with Intent, only their bot sessions whose intents include one of its bits; else with App,
// only their sessions identified with a token of that application; else every session.
type Dispatch struct {
	Users  []uint64
	App    uint64
	Intent uint64
	Event  string
	Data   any
}

// Tx is the transaction that commits a change, where its dispatches are stored (package
// store's OutboxStore.AddOutbox).
type Tx interface {
	AddOutbox(ctx context.Context, key string, data []byte, at time.Time) (uint64, error)
}

// Stager stages a change's dispatches, in their order, in tx under the order lock key held
// for the change; publish, called once tx has committed and before the lock is released,
// delivers them. An error (they could not be stored) must fail tx.
type Stager interface {
	Stage(ctx context.Context, tx Tx, key string, ds []Dispatch) (publish func(), err error)
}
