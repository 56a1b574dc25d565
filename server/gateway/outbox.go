package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"sdkpp/server/gateway/internal/busmsg"
)

// Outbox keeps the dispatches a hub on a bus stages (Stage): each stored in the transaction
// that commits its change, published after the commit, and deleted once published (package
// store's outbox). A node that dies between the commit and the publish leaves its dispatch
// there, and the next holder of its order lock publishes it (Relay).
type Outbox interface {
	AddOutbox(ctx context.Context, key string, data []byte, at time.Time) (uint64, error)
	DeleteOutbox(ctx context.Context, id uint64) error
}

// Staged is a dispatch stored in an outbox: its id there and what the bus carries.
type Staged struct {
	ID   uint64
	Data []byte
}

// OutboxMsgID is the bus's message id of the staged dispatch id: the bus stores a message
// once per id (within its duplicate window), so a dispatch published by its node and again by
// a relay, the node having died before it deleted it, reaches every session once.
func OutboxMsgID(id uint64) string { return "outbox-" + strconv.FormatUint(id, 10) }

// Stage is DispatchAppMany for a change committed in tx under the order lock key (package
// order): on a bus, the dispatch is stored in tx (tx's Outbox) and publish, called once tx has
// committed and before the lock is released, publishes and deletes it. Without a bus, publish
// dispatches, and nothing is stored. An error (the dispatch could not be stored) fails the
// change's transaction.
func (h *Hub) Stage(ctx context.Context, tx Outbox, key string, appID uint64, userIDs []uint64, event string, data any) (publish func(), err error) {
	f := filter{kind: busmsg.ToApp, app: appID}
	if h.cfg.Bus == nil {
		return func() { h.dispatchTo(userIDs, event, data, f) }, nil
	}
	d, ok := h.encode(event, data)
	if !ok {
		return func() {}, nil
	}
	msg, err := json.Marshal(busmsg.Envelope{Users: userIDs, Kind: f.kind, App: f.app, Event: event, Data: d,
		Sent: time.Now().UnixNano()})
	if err != nil {
		return nil, err
	}
	id, err := tx.AddOutbox(ctx, key, msg, h.cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	return func() { h.publishStaged(Staged{ID: id, Data: msg}) }, nil
}

// Relay publishes, in order, the dispatches a node staged under an order lock and left
// unpublished (it died after its commit), and deletes them; call it holding that lock, before
// publishing anything else under it. A dispatch its node did publish before dying is stored
// once by the bus (OutboxMsgID). It stops at the first that cannot be published, which stays
// for the next holder, and returns false: the caller must then publish nothing under the lock,
// which would overtake it.
func (h *Hub) Relay(left []Staged) bool {
	for _, s := range left {
		if !h.publishStaged(s) {
			return false
		}
	}
	if len(left) > 0 {
		h.log.Info("gateway: dispatches a node left unpublished were relayed", "dispatches", len(left))
	}
	return true
}

// publishStaged publishes a staged dispatch with its outbox message id and deletes it from the
// outbox; false when the bus refused it (it stays, for a relay).
func (h *Hub) publishStaged(s Staged) bool {
	ctx, cancel := context.WithTimeout(h.ctx, publishTimeout)
	defer cancel()
	if _, err := h.cfg.Bus.PublishID(ctx, s.Data, OutboxMsgID(s.ID)); err != nil {
		h.log.Error("gateway: a staged dispatch waits: the bus refused it", "outbox_id", s.ID, "err", err)
		return false
	}
	if err := h.cfg.Outbox.DeleteOutbox(ctx, s.ID); err != nil { // published again by a relay: stored once
		h.log.Warn("gateway: a published dispatch stays in the outbox", "outbox_id", s.ID, "err", err)
	}
	return true
}
