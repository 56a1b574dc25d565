package gateway

import (
	"context"
	"strconv"

	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/internal/outbox"
)

// Outbox keeps the dispatches a hub on a bus stages (Stage): each stored in the transaction
// that commits its change, published after the commit, and deleted once published, with the
// release of the order lock (Published; package store's outbox). A node that dies between the
// commit and the publish leaves its dispatch there, and the next holder of its order lock
// publishes it (Relay).
type Outbox = outbox.Tx

// Staged is a dispatch stored in an outbox: its id there and what the bus carries.
type Staged struct {
	ID   uint64
	Data []byte
}

// OutboxMsgID is the bus's message id of the staged dispatch id: the bus stores a message
// once per id (within its duplicate window), so a dispatch published by its node and again by
// a relay, the node having died before it deleted it, reaches every session once.
func OutboxMsgID(id uint64) string { return "outbox-" + strconv.FormatUint(id, 10) }

// Stage stages ds, the dispatches of a change committed in tx under the order lock key
// (package outbox): on a bus, they are stored in tx, as few messages of the bus as fit
// (busmsg.Encode), and publish, called once tx has committed and before the lock is released,
// publishes them (PublishStaged). Without a bus, publish dispatches them, and nothing is
// stored. A dispatch that cannot be encoded is left out (logged).
func (h *Hub) Stage(ctx context.Context, tx Outbox, key string, ds []outbox.Dispatch) (publish func(), err error) {
	if h.cfg.Bus == nil { // encoded after the commit, as a dispatch is
		return func() { h.push(h.encodeAll(ds), 0) }, nil
	}
	msgs, now := h.encodeBus(h.encodeAll(ds)), h.cfg.Clock.Now()
	ss := make([]Staged, len(msgs))
	for i, m := range msgs {
		if ss[i].ID, err = tx.AddOutbox(ctx, key, m, now); err != nil {
			return nil, err
		}
		ss[i].Data = m
	}
	return func() { h.PublishStaged(ss) }, nil
}

// encodeAll encodes ds for push or the bus, leaving out (logged) those that cannot be.
func (h *Hub) encodeAll(ds []outbox.Dispatch) []busmsg.Dispatch {
	bd := make([]busmsg.Dispatch, 0, len(ds))
	for _, d := range ds {
		if data, ok := h.encode(d.Event, d.Data); ok {
			bd = append(bd, busmsg.Of(d, data))
		}
	}
	return bd
}

// StageEach is Stage for the dispatches of one application's change, in their order, left to
// the caller to store (lobbies' group commit): it returns what to store in the outbox (package store's OutboxRows), in the change's
// transaction under its order lock key, and to publish with PublishStaged once it has
// committed, before the lock is released: one message of the bus for all of them when they fit
// (busmsg.Encode). A dispatch that cannot be encoded is left out (logged). Nil without a bus:
// DispatchAppEach them after the commit.
func (h *Hub) StageEach(appID uint64, ds []AppDispatch) [][]byte {
	if h.cfg.Bus == nil || appID == 0 {
		return nil
	}
	return h.group(appID, ds)
}

// Relay publishes, in order, the dispatches a node staged under an order lock and left
// unpublished (it died after its commit) (Published); call it holding that lock, before
// publishing anything else under it. A dispatch its node did publish before dying is stored
// once by the bus (OutboxMsgID). When one cannot be published it stays, with those after it,
// for the next holder, and Relay returns false: the caller must then publish nothing under the
// lock, which would overtake it.
func (h *Hub) Relay(left []Staged) bool {
	if !h.PublishStaged(left) {
		return false
	}
	if len(left) > 0 {
		h.log.Info("gateway: dispatches a node left unpublished were relayed", "dispatches", len(left))
	}
	return true
}

// PublishStaged publishes dispatches staged in the outbox (Stage, StageEach), in their order,
// each with its outbox message id and once the bus has stored the one before it; their ids
// are then Published, for the order lock's release to delete. It returns false when the bus
// refused one: it stays in the outbox with those after it, none of them published, for the
// next holder of the order lock to publish (Relay), so that no dispatch reaches a session after
// one staged later under the lock; the bus stores once one it took though it answered with an
// error (OutboxMsgID).
func (h *Hub) PublishStaged(ss []Staged) bool {
	ctx, cancel := context.WithTimeout(h.ctx, publishTimeout)
	defer cancel()
	for i, s := range ss {
		if _, err := h.cfg.Bus.PublishID(ctx, s.Data, OutboxMsgID(s.ID)); err != nil {
			h.log.Error("gateway: staged dispatches wait: the bus refused one", "outbox_id", s.ID,
				"dispatches", len(ss)-i, "err", err)
			h.published(ss[:i])
			return false
		}
	}
	h.published(ss)
	return true
}

// published notes the ids of published dispatches for Published.
func (h *Hub) published(ss []Staged) {
	h.pubMu.Lock()
	defer h.pubMu.Unlock()
	for _, s := range ss {
		h.pub = append(h.pub, s.ID)
	}
}

// Published returns, and forgets, the outbox ids of the dispatches published since the last
// call: an order lock's release deletes them in its own transaction (package store's
// OrderHold.Unlock), which saves the delete's round trip after each publish. They may include
// what was published under other locks meanwhile: deleted sooner, which is no harm. One that
// stays (the node died first) is published again by the next holder of its lock, and stored
// once by the bus (OutboxMsgID).
func (h *Hub) Published() []uint64 {
	h.pubMu.Lock()
	defer h.pubMu.Unlock()
	ids := h.pub
	h.pub = nil
	return ids
}
