package gateway

import (
	"encoding/json"

	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/gateway/internal/payload"
	"sdkpp/server/gateway/internal/wsframe"
	gwire "sdkpp/wire/gateway"
	"sdkpp/wire/voice"
)

// Voice serves voice signaling (Config.Voice): the hub decodes and checks the payloads and
// tells when a session's connection goes; the service keeps the calls. Its methods run on the
// connection's goroutine, outside the hub's lock: they may call the hub's methods, and must not
// block for long.
type Voice interface {
	// VoiceStateUpdate serves a Voice State Update (op 4) of the session.
	VoiceStateUpdate(s Session, u voice.StateUpdate)
	// VoiceKeys serves a Voice Keys payload (op 101) of the session.
	VoiceKeys(s Session, k voice.Keys)
	// VoiceSessionGone tells that the session's connection ended (the session may still be
	// resumed) or that the session moved to another connection: the session leaves its call.
	VoiceSessionGone(s Session)
}

// Session names one gateway session: whose it is and its id (READY's session_id).
type Session struct {
	Identity
	ID string
}

// voiceOp serves ops 4 and 101 of an identified connection: malformed payloads close it with
// 4002, like every other malformed payload.
func (c *conn) voiceOp(op int, d json.RawMessage) (wsframe.Close, bool) {
	if !c.authed {
		return wsframe.Close{Code: gwire.CloseNotAuthenticated, Reason: "not authenticated"}, true
	}
	s := c.session()
	if s.ID == "" { // the session ended under the connection: the loop is being kicked
		return wsframe.Close{}, false
	}
	v := c.h.cfg.Voice
	if op == gwire.OpVoiceStateUpdate {
		var u voice.StateUpdate
		if !payload.DecodeObject(d, &u) || u.Check() != nil {
			return decodeError("invalid voice state update")
		}
		v.VoiceStateUpdate(s, u)
		return wsframe.Close{}, false
	}
	var k voice.Keys
	if !payload.DecodeObject(d, &k) || k.Check() != nil {
		return decodeError("invalid voice keys")
	}
	v.VoiceKeys(s, k)
	return wsframe.Close{}, false
}

// session is the connection's session now (zero ID when none).
func (c *conn) session() Session {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.sess == nil || c.sess.conn != c {
		return Session{}
	}
	return Session{Identity: c.sess.who, ID: c.sess.id}
}

// voiceGone tells Config.Voice that a session left its connection (call without the hub's lock).
func (h *Hub) voiceGone(s Session) {
	if h.cfg.Voice != nil && s.ID != "" {
		h.cfg.Voice.VoiceSessionGone(s)
	}
}

// DispatchSession is Dispatch to one session (for example a call's participant, which is in
// the call with that session only); false when the session does not exist (any more). On a
// cluster, a session connected to (or waiting to be resumed on) another node gets it through
// the bus, in the bus's order.
func (h *Hub) DispatchSession(sessionID, event string, data any) bool {
	d, ok := h.encode(event, data)
	if !ok {
		return false
	}
	ev, _ := json.Marshal(event) // a string always encodes
	h.mu.Lock()
	s := h.sessions[sessionID]
	if s == nil {
		var user uint64
		if n := h.remote[sessionID]; n != nil && h.cfg.Bus != nil {
			user = n.Who.UserID
		}
		h.mu.Unlock()
		if user == 0 {
			return false
		}
		h.publish([]uint64{user}, filter{kind: busmsg.ToSession, session: sessionID}, event, d)
		return true
	}
	if h.expireLocked(s, h.cfg.Clock.Now()) {
		h.mu.Unlock()
		return false
	}
	s.Push(ev, d, h.cfg.ReplayLimit)
	c := s.conn
	h.mu.Unlock()
	h.rate.Add(1)
	if c != nil {
		h.deliver([]*conn{c})
	}
	return true
}

// SessionConnected tells whether the session is attached to a connection, on this node or (with
// a bus) another as that node last told: false once it ended, lost its connection, or its node
// restarted without it.
func (h *Hub) SessionConnected(sessionID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[sessionID]; s != nil {
		return s.conn != nil
	}
	n := h.remote[sessionID]
	return n != nil && n.State == busmsg.NoteLive
}
