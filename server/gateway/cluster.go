package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/gateway/internal/wsframe"
	gwire "sdkpp/wire/gateway"
)

// Bus carries the hub's dispatches to every node of a cluster (package bus adapts NATS
// JetStream to it). The hub publishes each dispatch once; each node's hub reads every dispatch
// back in the bus's one order (Deliver) and pushes it to its own sessions.
type Bus interface {
	// Publish appends msg to the bus's order and returns its sequence number once stored.
	Publish(ctx context.Context, msg []byte) (uint64, error)
	// PublishID is Publish of a message with its own id: a second message with an id the bus
	// stored recently is not stored again (the first one's sequence number is returned).
	PublishID(ctx context.Context, msg []byte, id string) (uint64, error)
}

// publishTimeout bounds one publish to the bus.
const publishTimeout = 10 * time.Second

// filter picks the sessions of a dispatch's users that get it. It is data, not a function, so
// that it can cross the bus.
type filter struct {
	kind               busmsg.FilterKind
	app, intent, split uint64
	session            string // busmsg.ToSession's session id
}

// keep tells whether s gets the dispatch. Call with h.mu held.
func (f filter) keep(s *session) bool {
	switch f.kind {
	case busmsg.ToApp:
		return f.app == 0 || s.who.AppID == f.app
	case busmsg.ToBots:
		return s.who.Bot && s.intents&f.intent != 0
	case busmsg.ToBotsWith:
		return s.who.Bot && s.intents&f.intent != 0 && s.intents&f.split != 0
	case busmsg.ToBotsWithout:
		return s.who.Bot && s.intents&f.intent != 0 && s.intents&f.split == 0
	case busmsg.ToIntent:
		return s.intents&f.intent != 0
	case busmsg.ToBotSessions:
		return s.who.Bot
	case busmsg.ToSession:
		return s.id == f.session
	}
	return false
}

// filterOf is the filter of a dispatch read from the bus.
func filterOf(e *busmsg.Dispatch) filter {
	return filter{kind: e.Kind, app: e.App, intent: e.Intent, split: e.Split, session: e.To}
}

// publish sends a dispatch to every node through the bus; a failure is logged, and the event is
// lost for every node (the node's /readyz reports the bus).
func (h *Hub) publish(users []uint64, f filter, event string, d []byte) {
	h.send(busmsg.Envelope{Dispatch: busmsg.Dispatch{Users: users, Kind: f.kind, App: f.app, Intent: f.intent,
		Split: f.split, To: f.session, Event: event, Data: d}})
}

// send publishes e on the bus; a failure is logged.
func (h *Hub) send(e busmsg.Envelope) {
	e.Sent = time.Now().UnixNano()
	msg, err := json.Marshal(e)
	if err != nil {
		h.log.Error("gateway: cannot be encoded for the bus", "type", e.Type, "event", e.Event, "err", err)
		return
	}
	h.sendMsg(msg, e.Label())
}

// sendMsg publishes msg, an encoded Envelope that label names, on the bus; a failure is logged.
func (h *Hub) sendMsg(msg []byte, label string) {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	if _, err := h.cfg.Bus.Publish(ctx, msg); err != nil {
		h.log.Error("gateway: lost: the bus refused it", "event", label, "err", err)
	}
}

// note tells the other nodes the state of s (no-op without a bus); call without h.mu, with the
// values read under it.
func (h *Hub) note(n busmsg.SessionNote) {
	if h.cfg.Bus == nil {
		return
	}
	n.Node, n.Life = h.cfg.Node, h.life
	h.send(busmsg.Envelope{Type: busmsg.TypeSession, Session: &n})
}

// noteOf is the note of s in state st. Call with h.mu held. It carries no scopes: every node
// keeps every other node's notes, and a resume takes the resuming token's.
func noteOf(s *session, st busmsg.NoteState) busmsg.SessionNote {
	who := s.who
	who.Scopes = nil
	return busmsg.SessionNote{ID: s.id, Who: who, Intents: s.intents, Capabilities: s.capabilities, Since: s.since,
		State: st, Expires: s.expires, Gen: s.gen}
}

// Announce tells the other nodes that this node (re)started: the sessions of its earlier life
// lost their connections and wait to be resumed. Call once, after the node has read the bus up
// to its current end (CaughtUp).
func (h *Hub) Announce() {
	if h.cfg.Bus != nil {
		h.send(busmsg.Envelope{Type: busmsg.TypeNode, Node: h.cfg.Node, Life: h.life})
	}
}

// Share sends data, encoded as JSON, to Config.OnShared of every other node with kind (for
// example a user's presence). No-op without a bus.
func (h *Hub) Share(kind string, data any) {
	if h.cfg.Bus == nil {
		return
	}
	d, err := json.Marshal(data)
	if err != nil {
		h.log.Error("gateway: shared state cannot be encoded", "kind", kind, "err", err)
		return
	}
	h.send(busmsg.Envelope{Type: busmsg.TypeShared, Shared: kind, Node: h.cfg.Node, Life: h.life,
		Dispatch: busmsg.Dispatch{Data: d}})
}

// Deliver takes a message read from the bus, whose sequence number is seq: it pushes a dispatch
// to this node's sessions, or notes another node's sessions. The bus calls it one message after
// the other in its order; a message at or below the last one delivered is a duplicate and is
// dropped. The sessions keep parts of msg (dispatches' data), which must not change after.
func (h *Hub) Deliver(seq uint64, msg []byte) {
	var e busmsg.Envelope
	if err := busmsg.Decode(msg, &e); err != nil {
		h.log.Error("gateway: malformed message from the bus", "seq", seq, "err", err)
		return
	}
	h.mu.Lock()
	if seq <= h.busSeq {
		h.mu.Unlock()
		return
	}
	h.busSeq = seq
	if f := h.cfg.OnBusDelivered; f != nil && e.Sent != 0 {
		defer f(e.Label(), time.Unix(0, e.Sent), time.Now())
	}
	switch e.Type {
	case busmsg.TypeDispatch, busmsg.TypeGroup:
		h.mu.Unlock()
		h.push(e.Dispatches(), seq)
		return
	case busmsg.TypeSession:
		if n := e.Session; n != nil && !(n.Node == h.cfg.Node && n.Life == h.life) {
			h.remoteNoteLocked(n)
		}
	case busmsg.TypeNode:
		// The node restarted: the sessions of its earlier lives lost their connections. The
		// restarted node itself ends what their connections held.
		gone := h.detachNodeLocked(e.Node, func(life string) bool { return life != e.Life })
		switch {
		case e.Node == h.cfg.Node && e.Life == h.life && len(gone) > 0:
			h.mu.Unlock()
			h.nodeGone(gone)
			return
		case e.Node != h.cfg.Node || e.Life != h.life: // it read only what the stream still holds
			h.mu.Unlock()
			h.retell()
			return
		}
	case busmsg.TypeDown:
		// A node's life stopped: its sessions lost their connections. The node that found it
		// down ends what their connections held, once for the cluster.
		if x := e.Down; x != nil {
			if x.Node == h.cfg.Node && x.Life == h.life { // taken for dead, alive
				h.mu.Unlock()
				h.stillHere()
				return
			}
			gone := h.detachNodeLocked(x.Node, func(life string) bool { return life == x.Life })
			if x.By == h.cfg.Node && x.ByLife == h.life && len(gone) > 0 {
				h.mu.Unlock()
				h.nodeGone(gone)
				return
			}
		}
	case busmsg.TypeShared:
		if f := h.cfg.OnShared; f != nil && !(e.Node == h.cfg.Node && e.Life == h.life) {
			h.mu.Unlock()
			f(e.Shared, e.Data)
			return
		}
	case busmsg.TypeEnd:
		if x := e.End; x != nil {
			h.mu.Unlock()
			h.endSessionsLocal(x)
			return
		}
	}
	h.mu.Unlock()
}

// Life names this hub's process in what it tells the other nodes (a restarted node has a new
// one): the node registry keeps it, so that NodeDown names the life that stopped.
func (h *Hub) Life() string { return h.life }

// NodeDown tells every node that the life of another node stopped without a word (the node
// registry's heartbeats say so; see package server): its sessions that were connected and have
// not been resumed elsewhere lose their connections, and can be resumed elsewhere within the
// resume window from now. This node then ends, once for the cluster, what those connections
// held, as the dead node would have when they closed: Config.Voice hears that each session
// left (its call, its voice states), Config.OnConnection of each user's last connection of an
// application, and Config.OnSession of each (presence goes offline). Call it on one node per
// stopped life (the registry's claim). No-op without a bus.
func (h *Hub) NodeDown(node int, life string) {
	if h.cfg.Bus == nil || node == h.cfg.Node {
		return
	}
	h.send(busmsg.Envelope{Type: busmsg.TypeDown, Down: &busmsg.DownNote{Node: node, Life: life, By: h.cfg.Node, ByLife: h.life}})
}

// detachNodeLocked makes the connected sessions of node's lives that match detached, resumable
// for a resume window from now, and returns their notes.
func (h *Hub) detachNodeLocked(node int, match func(life string) bool) []busmsg.SessionNote {
	expires := h.cfg.Clock.Now().Add(h.cfg.ResumeWindow)
	var gone []busmsg.SessionNote
	for _, n := range h.remote {
		if n.Node == node && match(n.Life) && n.State == busmsg.NoteLive {
			n.State, n.Expires = busmsg.NoteDetached, expires
			gone = append(gone, *n)
		}
	}
	slices.SortFunc(gone, func(a, b busmsg.SessionNote) int { return a.Since.Compare(b.Since) })
	return gone
}

// userApp is a user in an application.
type userApp struct{ user, app uint64 }

// stillHere answers a NodeDown that named this node's life though it is alive (its heartbeats
// did not reach the registry in time): it tells the other nodes again of its connected
// sessions, and runs Config.OnConnection and Config.OnSession of their users again, whose
// presence and lobby states the other node ended. Call without h.mu.
func (h *Hub) stillHere() {
	notes := h.connectedNotes()
	h.log.Warn("gateway: this node was taken for down; its sessions are told again", "sessions", len(notes))
	seen := map[userApp]bool{}
	for _, n := range notes {
		h.note(n)
	}
	for _, n := range notes {
		k := userApp{n.Who.UserID, n.Who.AppID}
		if seen[k] {
			continue
		}
		seen[k] = true
		h.connection(n.Who, true)
		if h.cfg.OnSession != nil {
			h.cfg.OnSession(n.Who)
		}
	}
}

// connectedNotes returns the notes of this node's connected sessions.
func (h *Hub) connectedNotes() []busmsg.SessionNote {
	h.mu.Lock()
	defer h.mu.Unlock()
	var notes []busmsg.SessionNote
	for _, s := range h.sessions {
		if s.conn != nil {
			notes = append(notes, noteOf(s, busmsg.NoteLive))
		}
	}
	return notes
}

// retell answers another node's start: it tells the other nodes again of this node's
// connected sessions, then Config.OnNodeStarted shares again what the other parts share. Call
// without h.mu.
func (h *Hub) retell() {
	for _, n := range h.connectedNotes() {
		h.note(n)
	}
	if h.cfg.OnNodeStarted != nil {
		h.cfg.OnNodeStarted()
	}
}

// nodeGone ends what the connections of a stopped node's sessions held (see NodeDown); call
// without h.mu.
func (h *Hub) nodeGone(gone []busmsg.SessionNote) {
	seen := map[userApp]bool{}
	for _, n := range gone {
		h.voiceGone(Session{Identity: n.Who, ID: n.ID})
	}
	for _, n := range gone {
		k := userApp{n.Who.UserID, n.Who.AppID}
		if seen[k] {
			continue
		}
		seen[k] = true
		if !h.OnlineApp(n.Who.AppID, n.Who.UserID) {
			h.connection(n.Who, false)
		}
		if h.cfg.OnSession != nil {
			h.cfg.OnSession(n.Who)
		}
	}
	h.log.Info("gateway: a stopped node's sessions lost their connections", "sessions", len(gone))
}

// endMatch tells whether s is one of the sessions x ends. Call with h.mu held.
func endMatch(x *busmsg.EndNote, s *session) bool {
	return (x.App == 0 || s.who.AppID == x.App) && (x.Grant == 0 || s.grant == x.Grant) &&
		(x.Intents == 0 || (s.who.Bot && s.conn != nil && s.intents&x.Intents != 0))
}

// remoteNoteLocked records another node's note of a session. A session of this node that
// another node now holds (it was resumed there) is this node's no more. A stale note (sent
// before the session moved on, read after) changes nothing.
func (h *Hub) remoteNoteLocked(n *busmsg.SessionNote) {
	if s, old := h.sessions[n.ID], h.remote[n.ID]; (s != nil && n.Gen < s.gen) || (old != nil && n.Gen < old.Gen) {
		return
	}
	if s := h.sessions[n.ID]; s != nil && n.State != busmsg.NoteEnded {
		s.moved = true
		if s.conn != nil {
			s.conn.kickWith(wsframe.Close{Code: gwire.CloseUnknownError, Reason: "session resumed elsewhere"})
		}
		h.removeLocked(s)
	}
	if old := h.remote[n.ID]; old != nil {
		delete(h.remoteByUser[old.Who.UserID], n.ID)
		if len(h.remoteByUser[old.Who.UserID]) == 0 {
			delete(h.remoteByUser, old.Who.UserID)
		}
		delete(h.remote, n.ID)
	}
	if n.State == busmsg.NoteEnded {
		return
	}
	h.remote[n.ID] = n
	m := h.remoteByUser[n.Who.UserID]
	if m == nil {
		m = map[string]*busmsg.SessionNote{}
		h.remoteByUser[n.Who.UserID] = m
	}
	m[n.ID] = n
}

// remoteLiveLocked counts the user's sessions connected to other nodes, of one application
// (app 0: of any).
func (h *Hub) remoteLiveLocked(appID, userID uint64) int {
	n := 0
	for _, r := range h.remoteByUser[userID] {
		if r.State == busmsg.NoteLive && (appID == 0 || r.Who.AppID == appID) {
			n++
		}
	}
	return n
}

// forgetRemoteLocked forgets another node's note of a session (it is resumed here).
func (h *Hub) forgetRemoteLocked(id string) {
	if n := h.remote[id]; n != nil {
		delete(h.remote, id)
		delete(h.remoteByUser[n.Who.UserID], id)
		if len(h.remoteByUser[n.Who.UserID]) == 0 {
			delete(h.remoteByUser, n.Who.UserID)
		}
	}
}

// Replay reads the bus again from first to last (inclusive), for a session resumed on another
// node than the one it ran on (package bus's Read).
type Replay func(ctx context.Context, first, last uint64, handle func(seq uint64, msg []byte)) error

// resumeRemote re-attaches to this connection a session another node ran (it died, or the
// client's reconnection reached this node): its dispatches after seq are read again from the
// bus, filtered as that node filtered them, numbered as it numbered them, and written before
// RESUMED. It returns the session, or none after answering Invalid Session, or a close.
func (c *conn) resumeRemote(sessionID string, seq int64, who Identity) (attached, wsframe.Close, bool) {
	h := c.h
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	h.mu.Lock()
	now := h.cfg.Clock.Now()
	n := h.remote[sessionID]
	if n == nil || n.Who.UserID != who.UserID || n.Who.AppID != who.AppID ||
		(n.State == busmsg.NoteDetached && !now.Before(n.Expires)) || h.cfg.Replay == nil {
		h.mu.Unlock()
		r, stop := c.invalidSession()
		return attached{}, r, stop
	}
	upto := h.busSeq
	from := busmsg.Resume(seq)
	s := &session{id: n.ID, who: n.Who, intents: n.Intents, capabilities: n.Capabilities, since: n.Since, gen: n.Gen + 1}
	s.who.Grant, s.grant, s.who.Scopes = who.Grant, who.Grant, who.Scopes
	s.SetSeq(max(int64(upto)<<busmsg.Shift, seq))
	base := s.Seq()
	s.Push([]byte(`"`+gwire.EventResumed+`"`), []byte("{}"), h.cfg.ReplayLimit)
	first := h.liveLocked(who.AppID, who.UserID) == 0
	s.conn = c
	c.sess, c.sent = s, base
	h.forgetRemoteLocked(n.ID)
	h.addLocked(s)
	h.mu.Unlock()
	var replay []wsframe.Dispatch
	var err error
	if from <= upto {
		ctx, cancel := context.WithTimeout(h.ctx, publishTimeout)
		err = h.cfg.Replay(ctx, from, upto, func(m uint64, msg []byte) {
			var e busmsg.Envelope
			if busmsg.Decode(msg, &e) != nil {
				return
			}
			ds := e.Dispatches()
			for i := range ds {
				h.mu.Lock()
				keep := slices.Contains(ds[i].Users, s.who.UserID) && filterOf(&ds[i]).keep(s)
				h.mu.Unlock()
				if n := busmsg.Seq(m, i, len(ds)); keep && n > seq {
					ev, _ := json.Marshal(ds[i].Event)
					replay = append(replay, wsframe.Dispatch{Seq: n, Event: ev, Data: ds[i].Data})
				}
			}
		})
		cancel()
	}
	if err != nil { // the bus no longer holds what the client missed
		h.log.Warn("gateway: a session from another node cannot be replayed", "user_id", who.UserID, "err", err)
		h.mu.Lock()
		h.removeLocked(s)
		c.sess = nil
		h.mu.Unlock()
		r, stop := c.invalidSession()
		return attached{}, r, stop
	}
	h.mu.Lock()
	if len(replay) > 0 { // kept for a later resume here, before what came since
		s.Prepend(replay, h.cfg.ReplayLimit)
	}
	note := noteOf(s, busmsg.NoteLive)
	h.mu.Unlock()
	c.authed, c.who = true, s.who
	c.requester.Store(&requester{token: c.token, sess: s})
	if !c.writeAll(replay) {
		return attached{first: first}, wsframe.Gone, true
	}
	h.note(note)
	return attached{s: s, replayed: len(replay), first: first}, wsframe.Close{}, false
}
