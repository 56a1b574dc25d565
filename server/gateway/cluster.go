package gateway

import (
	"context"
	"encoding/json"
	"time"
)

// Bus carries the hub's dispatches to every node of a cluster (package bus adapts NATS
// JetStream to it). The hub publishes each dispatch once; each node's hub reads every dispatch
// back in the bus's one order (Deliver) and pushes it to its own sessions.
type Bus interface {
	// Publish appends msg to the bus's order and returns its sequence number once stored.
	Publish(ctx context.Context, msg []byte) (uint64, error)
}

// publishTimeout bounds one publish to the bus.
const publishTimeout = 10 * time.Second

// filterKind says which of a user's sessions a dispatch is for.
type filterKind uint8

const (
	toApp         filterKind = iota // every session (app 0), or those of one application
	toBots                          // bot sessions with one of the intent bits
	toBotsWith                      // bot sessions with one of the intent bits and one of the split bits
	toBotsWithout                   // bot sessions with one of the intent bits and none of the split bits
	toIntent                        // any session with one of the intent bits
	toBotSessions                   // every bot session
)

// filter picks the sessions of a dispatch's users that get it. It is data, not a function, so
// that it can cross the bus.
type filter struct {
	kind               filterKind
	app, intent, split uint64
}

// keep tells whether s gets the dispatch. Call with h.mu held.
func (f filter) keep(s *session) bool {
	switch f.kind {
	case toApp:
		return f.app == 0 || s.who.AppID == f.app
	case toBots:
		return s.who.Bot && s.intents&f.intent != 0
	case toBotsWith:
		return s.who.Bot && s.intents&f.intent != 0 && s.intents&f.split != 0
	case toBotsWithout:
		return s.who.Bot && s.intents&f.intent != 0 && s.intents&f.split == 0
	case toIntent:
		return s.intents&f.intent != 0
	case toBotSessions:
		return s.who.Bot
	}
	return false
}

// envelope is a dispatch as it crosses the bus.
type envelope struct {
	Users  []uint64        `json:"u"`
	Kind   filterKind      `json:"k,omitempty"`
	App    uint64          `json:"a,omitempty"`
	Intent uint64          `json:"i,omitempty"`
	Split  uint64          `json:"s,omitempty"`
	Event  string          `json:"e"`
	Data   json.RawMessage `json:"d"`
}

func (e *envelope) filter() filter {
	return filter{kind: e.Kind, app: e.App, intent: e.Intent, split: e.Split}
}

// publish sends a dispatch to every node through the bus; a failure is logged, and the event is
// lost for every node (the node's /readyz reports the bus).
func (h *Hub) publish(users []uint64, f filter, event string, d []byte) {
	msg, err := json.Marshal(envelope{Users: users, Kind: f.kind, App: f.app, Intent: f.intent, Split: f.split,
		Event: event, Data: d})
	if err != nil {
		h.log.Error("gateway: dispatch cannot be encoded for the bus", "event", event, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, publishTimeout)
	defer cancel()
	if _, err := h.cfg.Bus.Publish(ctx, msg); err != nil {
		h.log.Error("gateway: dispatch lost: the bus refused it", "event", event, "err", err)
	}
}

// Deliver pushes a dispatch read from the bus, whose sequence number is seq, to this node's
// sessions. The bus calls it one message after the other in its order; a message at or below the
// last one delivered is a duplicate and is dropped.
func (h *Hub) Deliver(seq uint64, msg []byte) {
	h.mu.Lock()
	if seq <= h.busSeq {
		h.mu.Unlock()
		return
	}
	h.busSeq = seq
	h.mu.Unlock()
	var e envelope
	if err := json.Unmarshal(msg, &e); err != nil {
		h.log.Error("gateway: malformed message from the bus", "seq", seq, "err", err)
		return
	}
	ev, _ := json.Marshal(e.Event) // a string always encodes
	h.push(e.Users, ev, e.Event, e.Data, e.filter())
}
