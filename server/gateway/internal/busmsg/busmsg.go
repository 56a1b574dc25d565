// Package busmsg holds the messages a node's gateway hub exchanges with the other nodes of a
// cluster over the bus: an Envelope, JSON-encoded, carries a dispatch with the filter that picks
// its sessions, or a group of them (Encode, Seq), or news of a session (SessionNote), of a
// node's start, of a node found down (DownNote), a request to end sessions (EndNote), or
// another part's shared state. The JSON field names are fixed, so that nodes of different
// versions read each other's messages, but for groups: nodes older than TypeGroup do not read
// them, nor those older than a group's table of user lists (Lists) its users, and a cluster
// moves to each all at once; Decode reads every earlier form (an upgrade, the outbox's rows).
package busmsg

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"sdkpp/internal/jsonscan"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/server/internal/outbox"
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
	TypeGroup    = "g" // Group: dispatches, in their order, numbered together (Seq)
	TypeSession  = "s" // Session: news of a session
	TypeNode     = "n" // Node, Life: a node's (re)start
	TypeDown     = "d" // Down: a node found down
	TypeEnd      = "x" // End: a request to end sessions
	TypeShared   = "o" // Shared, Node, Life, Data: another part's state (gateway.Hub.Share)
)

// Envelope is what crosses the bus: a dispatch (Type TypeDispatch, the embedded Dispatch), a
// group of them (TypeGroup), or one of the other Types.
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

	// Lists is a group's table of user lists, which its dispatches name by number (List), so
	// that a lobby's members, the users of each of its dispatches, cross the bus once per
	// message. Decode resolves them, and leaves it nil.
	Lists []Users    `json:"ut,omitempty"`
	Group []Dispatch `json:"g,omitempty"`
	Dispatch
}

// Dispatch is an event for users' sessions, with the filter that picks the sessions that get it.
type Dispatch struct {
	Users Users `json:"u,omitempty"`
	// List, on the bus, numbers from 1 the list of the Envelope's table (Lists) that holds
	// Users, instead of Users; 0 when Users are inline. Decode resolves it, and leaves it 0.
	List   int             `json:"ul,omitempty"`
	Kind   FilterKind      `json:"k,omitempty"`
	App    uint64          `json:"a,omitempty"`
	Intent uint64          `json:"i,omitempty"`
	Split  uint64          `json:"s,omitempty"`
	To     string          `json:"to,omitempty"` // ToSession's session id
	Event  string          `json:"e"`
	Data   json.RawMessage `json:"d,omitempty"`
}

// Users are the ids of a dispatch's users. A lobby message's carries every member's, and each
// node decodes each: a list of plain numbers is read without reflection, anything else as
// encoding/json reads it. They encode as []uint64 does.
type Users []uint64

// UnmarshalJSON implements json.Unmarshaler.
func (u *Users) UnmarshalJSON(b []byte) error {
	if ids, ok := plainIDs(b, (*u)[:0]); ok {
		*u = ids
		return nil
	}
	var ids []uint64
	if err := json.Unmarshal(b, &ids); err != nil {
		return err
	}
	*u = ids
	return nil
}

// plainIDs appends to ids the numbers of b, a JSON array of unsigned integers without sign,
// fraction, exponent or leading zero, each within uint64; false when b is anything else.
func plainIDs(b []byte, ids []uint64) ([]uint64, bool) {
	i := jsonscan.Space(b, 0)
	if i == len(b) || b[i] != '[' {
		return nil, false
	}
	if i = jsonscan.Space(b, i+1); i < len(b) && b[i] == ']' {
		if ids == nil {
			ids = []uint64{} // empty, not null, as encoding/json reads it
		}
		return ids, jsonscan.Space(b, i+1) == len(b)
	}
	for {
		start, n := i, uint64(0)
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			d := uint64(b[i] - '0')
			if n > (math.MaxUint64-d)/10 {
				return nil, false // out of range
			}
			n = n*10 + d
		}
		if i == start || (b[start] == '0' && i-start > 1) {
			return nil, false
		}
		ids = append(ids, n)
		if i = jsonscan.Space(b, i); i == len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.Space(b, i+1)
		case ']':
			return ids, jsonscan.Space(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// Dispatches are the dispatches e carries, in their order: its own, or its group's; none when
// it is of another Type.
func (e *Envelope) Dispatches() []Dispatch {
	switch e.Type {
	case TypeDispatch:
		return []Dispatch{e.Dispatch}
	case TypeGroup:
		return e.Group
	}
	return nil
}

// Label names what e carries, for the bus's metrics: the dispatch's event (a group's first),
// or what else it is; never anything that holds an id.
func (e *Envelope) Label() string {
	switch e.Type {
	case TypeDispatch:
		return e.Event
	case TypeGroup:
		if len(e.Group) > 0 {
			return e.Group[0].Event
		}
		return "group"
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
	// Gen counts the session's moves to another node (resumed there). A note of a lower Gen
	// than one already heard of the session is stale: the session moved on since it was sent.
	Gen uint64 `json:"gen,omitempty"`
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

// Shift places a bus sequence number in a session's sequence numbers: the dispatches read from
// the bus in message m are numbered up to m<<Shift (Seq) in every session that gets them, on
// whichever node, and what a node pushes of its own (READY, RESUMED, request results) takes the
// numbers after the last. So a session resumed on another node is replayed from the bus with
// the numbers it had.
const Shift = 20

// Seq is the sequence number of dispatch i of the n that bus message m carries: the last is
// m<<Shift and those before it just below, so that a session's numbers grow along the bus
// whatever each message carries (n is at most MaxGroup), and one that started at m<<Shift
// gets nothing of m.
func Seq(m uint64, i, n int) int64 { return int64(m)<<Shift - int64(n-1-i) }

// Resume is the first bus message a session whose last sequence number is seq may not have had
// all of.
func Resume(seq int64) uint64 { return uint64(seq>>Shift) + 1 }

// MaxGroup and MaxGroupBytes bound the dispatches of one bus message (Encode): Seq's room below
// a message's number, and the bus's largest message (NATS's default is a MiB).
const (
	MaxGroup      = 1024
	MaxGroupBytes = 256 << 10
)

// Encode encodes dispatches sent at sent (Unix nanoseconds) as few bus messages as the bounds
// allow (MaxGroup, MaxGroupBytes), in their order: a dispatch alone as a TypeDispatch Envelope,
// several as a TypeGroup one, whose table (Lists) holds each user list once however many of its
// dispatches have it, and which only Decode reads whole (nodes of builds before the table read
// its dispatches without users: a cluster moves to it all at once). It writes what
// json.Marshal writes of that Envelope, without reflection. A dispatch that cannot be encoded
// is left out, and the first such error returned beside the messages of the others.
func Encode(ds []Dispatch, sent int64) ([][]byte, error) {
	var (
		msgs  [][]byte
		first error
		g     grouper
	)
	for i := range ds {
		d := &ds[i]
		rest, err := appendDispatch(make([]byte, 0, len(d.Data)+len(d.Event)+len(d.To)+80), d)
		if err != nil {
			first = cmp.Or(first, fmt.Errorf("busmsg: dispatch %s: %w", d.Event, err))
			continue
		}
		list, size := g.find(d.Users), len(rest)+len(`{"ul":1000,`)
		if list < 0 && len(d.Users) > 0 {
			size += 21 * len(d.Users)
		}
		if len(g.ds) == MaxGroup || (len(g.ds) > 0 && g.size+size > MaxGroupBytes) {
			msgs, g = append(msgs, g.encode(sent)), grouper{}
			list = -1
		}
		if list < 0 && len(d.Users) > 0 {
			g.lists = append(g.lists, d.Users)
			list = len(g.lists) - 1
		}
		g.ds, g.rests, g.at = append(g.ds, d), append(g.rests, rest), append(g.at, list)
		g.size += size
	}
	if len(g.ds) > 0 {
		msgs = append(msgs, g.encode(sent))
	}
	return msgs, first
}

// grouper gathers the dispatches of one bus message for Encode.
type grouper struct {
	ds    []*Dispatch
	rests [][]byte // each dispatch's members after its users (appendDispatch)
	at    []int    // each dispatch's list in lists, or -1 (no users)
	lists []Users
	size  int // about the bytes of the message
}

// find returns the number in g.lists of users, or -1.
func (g *grouper) find(users Users) int {
	if len(users) == 0 {
		return -1
	}
	for i, l := range g.lists {
		if len(l) == len(users) && (&l[0] == &users[0] || slices.Equal(l, users)) {
			return i
		}
	}
	return -1
}

// encode is the bus message of g's dispatches.
func (g *grouper) encode(sent int64) []byte {
	b := make([]byte, 0, g.size+64)
	b = append(b, '{')
	if len(g.ds) > 1 {
		b = append(b, `"t":"g",`...)
	}
	if sent != 0 {
		b = append(strconv.AppendInt(append(b, `"p":`...), sent, 10), ',')
	}
	if len(g.ds) == 1 { // the Envelope's own fields
		return appendUsers(b, g.ds[0].Users, 0, g.rests[0])
	}
	if len(g.lists) > 0 {
		b = append(b, `"ut":[`...)
		for i, l := range g.lists {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIDs(b, l)
		}
		b = append(b, "],"...)
	}
	b = append(b, `"g":[`...)
	for i := range g.ds {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendUsers(append(b, '{'), nil, g.at[i]+1, g.rests[i])
	}
	return append(b, `],"e":""}`...)
}

// appendUsers appends a dispatch's users, inline or as the number of a list (0: none), and
// then rest, its other members and its closing brace (appendDispatch), without rest's
// leading comma when it comes first.
func appendUsers(b []byte, users Users, list int, rest []byte) []byte {
	switch {
	case list > 0:
		b = strconv.AppendInt(append(b, `"ul":`...), int64(list), 10)
	case len(users) > 0:
		b = appendIDs(append(b, `"u":`...), users)
	default:
		return append(b, rest[1:]...)
	}
	return append(b, rest...)
}

// Of is the Dispatch of d, a change's dispatch staged in the outbox, whose data encodes as data:
// to bot sessions by intent (ToBots), or else by application (ToApp).
func Of(d outbox.Dispatch, data []byte) Dispatch {
	if d.Intent != 0 {
		return Dispatch{Users: d.Users, Kind: ToBots, Intent: d.Intent, Event: d.Event, Data: data}
	}
	return Dispatch{Users: d.Users, Kind: ToApp, App: d.App, Event: d.Event, Data: data}
}
