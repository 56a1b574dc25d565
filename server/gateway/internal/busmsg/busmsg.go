// Package busmsg holds the messages a node's gateway hub exchanges with the other nodes of a
// cluster over the bus: an Envelope, JSON-encoded, carries a dispatch with the filter that picks
// its sessions, or news of a session (SessionNote), of a node's start, of a node found down
// (DownNote), a request to end sessions (EndNote), or another part's shared state. Nodes of
// different versions read each other's messages: the JSON field names are fixed.
package busmsg

import (
	"encoding/json"
	"time"

	"sdkpp/server/gateway/internal/wsframe"
	gwire "sdkpp/wire/gateway"
)

// Identity is who a bearer token speaks for (gateway.Identity). Session notes carry it.
type Identity struct {
	// Capabilities are the Identify's capabilities bits (0 before an Identify): 1<<15 opts a
	// bot into channel obfuscation (rule GW-1).
	Capabilities int64

	UserID uint64
	AppID  uint64
	// Scopes are the token's granted scopes; the hub expands the SDK scopes itself. Session
	// notes leave them out.
	Scopes []string
	// Bot is set for an application's bot user, identified with its bot token (UserID is the
	// bot user, AppID its application).
	Bot bool
	// Grant is the token grant of a user's access token (0 for none), so that the sessions of a
	// revoked grant can be ended (gateway.Hub.EndGrantSessions).
	Grant uint64
}

// FilterKind says which of a user's sessions a dispatch is for.
type FilterKind uint8

// The filter kinds; an Envelope's App, Intent, Split and To are their parameters.
const (
	ToApp         FilterKind = iota // every session (App 0), or those of one application
	ToBots                          // bot sessions with one of the Intent bits
	ToBotsWith                      // bot sessions with one of the Intent bits and one of the Split bits
	ToBotsWithout                   // bot sessions with one of the Intent bits and none of the Split bits
	ToIntent                        // any session with one of the Intent bits
	ToBotSessions                   // every bot session
	ToSession                       // one session, by its id (To)
)

// The types of Envelope.
const (
	TypeDispatch = ""  // a dispatch to users' sessions
	TypeSession  = "s" // Session: news of a session
	TypeNode     = "n" // Node, Life: a node's (re)start
	TypeDown     = "d" // Down: a node found down
	TypeEnd      = "x" // End: a request to end sessions
	TypeShared   = "o" // Shared, Node, Life, Data: another part's state (gateway.Hub.Share)
)

// Envelope is what crosses the bus: a dispatch (Type TypeDispatch), or one of the other Types.
type Envelope struct {
	Type    string       `json:"t,omitempty"`
	Shared  string       `json:"o,omitempty"`
	Session *SessionNote `json:"ss,omitempty"`
	End     *EndNote     `json:"x,omitempty"`
	Down    *DownNote    `json:"dn,omitempty"`
	Node    int          `json:"n,omitempty"`
	Life    string       `json:"l,omitempty"`
	// Sent is when the publishing node sent it (Unix nanoseconds by its clock), for the bus's lag.
	Sent int64 `json:"p,omitempty"`

	Users  []uint64        `json:"u,omitempty"`
	Kind   FilterKind      `json:"k,omitempty"`
	App    uint64          `json:"a,omitempty"`
	Intent uint64          `json:"i,omitempty"`
	Split  uint64          `json:"s,omitempty"`
	To     string          `json:"to,omitempty"` // ToSession's session id
	Event  string          `json:"e"`
	Data   json.RawMessage `json:"d,omitempty"`
}

// Label names what e carries, for the bus's metrics: the dispatch's event, or what else it is;
// never anything that holds an id.
func (e *Envelope) Label() string {
	switch e.Type {
	case TypeDispatch:
		return e.Event
	case TypeSession:
		return "session"
	case TypeNode:
		return "node"
	case TypeEnd:
		return "end_sessions"
	case TypeDown:
		return "node_down"
	case TypeShared:
		return e.Shared
	}
	return "unknown"
}

// SessionNote tells the other nodes of a session of this one: what resuming it elsewhere needs,
// and whether it is connected, waiting to be resumed (until Expires) or ended.
type SessionNote struct {
	ID           string    `json:"id"`
	Node         int       `json:"node"`
	Life         string    `json:"life"` // the node process's life (a restarted node has a new one)
	Who          Identity  `json:"who"`
	Intents      uint64    `json:"intents"`
	Capabilities int64     `json:"caps,omitempty"`
	Since        time.Time `json:"since"`
	State        NoteState `json:"state"`
	Expires      time.Time `json:"expires,omitzero"`
}

// NoteState is the state of a session a SessionNote tells.
type NoteState uint8

// The states of a session.
const (
	NoteLive     NoteState = iota + 1 // attached to a connection
	NoteDetached                      // waiting to be resumed until Expires
	NoteEnded                         // gone for good
)

// EndNote asks every node to end the user's sessions that match (gateway.Hub.EndSessions and
// its kin).
type EndNote struct {
	User  uint64 `json:"user"`
	App   uint64 `json:"app,omitempty"`   // only this application's sessions (0: all)
	Grant uint64 `json:"grant,omitempty"` // only this token grant's sessions (0: all)
	// Intents, when not 0: only a bot's connected sessions that use one of these intents, which
	// its application may use no more; they close with gwire.CloseDisallowedIntents.
	Intents uint64 `json:"intents,omitempty"`
}

// Closing is how x closes the connected sessions it ends.
func (x *EndNote) Closing() wsframe.Close {
	if x.Intents != 0 {
		return wsframe.Close{Code: gwire.CloseDisallowedIntents, Reason: "disallowed intent(s)", End: true}
	}
	return wsframe.Close{Code: gwire.CloseAuthenticationFailed, Reason: "session ended", End: true}
}

// DownNote tells that a node's life stopped without a word (it missed its heartbeats, see
// gateway.Hub.NodeDown), and which node's life takes over its sessions' ends.
type DownNote struct {
	Node   int    `json:"node"`
	Life   string `json:"life"`
	By     int    `json:"by"`
	ByLife string `json:"by_life"`
}
