package voice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/gateway"
	"sdkpp/wire"
	vwire "sdkpp/wire/voice"
)

// Claims hold which node relays each call across a cluster (package bus's Claims): one holder
// per key at a time, changed only at the revision seen, lapsing unless renewed.
type Claims interface {
	// Claim claims key for holder unless held: it returns the holder and its revision.
	Claim(ctx context.Context, key, holder string) (string, uint64, error)
	// Replace gives key to holder if its holding is still of revision rev.
	Replace(ctx context.Context, key, holder string, rev uint64) (uint64, error)
	// Release gives key up if its holding is still of revision rev.
	Release(ctx context.Context, key string, rev uint64) error
}

// ClaimTTL is how long a call's claim lasts unless its node renews it (every ClaimTTL/3): a
// node that dies without ending its calls frees their lobbies for another node after this.
const ClaimTTL = 15 * time.Second

// claimTimeout bounds one change of a claim.
const claimTimeout = 5 * time.Second

// Cluster serves the voice signaling of one node of a cluster, so that a lobby's call works
// whichever nodes its players are connected to. Each call is relayed by one node: the first
// that had one of its players join claims the lobby (Claims, in the bus's key-value store) and
// keeps it while the call has participants. That node's Service keeps the call (its state, its
// relay flows, its keys) as on a node alone and tells every participant its relay's endpoint;
// its dispatches reach the participants on other nodes through the bus (package gateway's
// DispatchSession). The other nodes route their players' voice payloads to it over the bus
// (Share, read back by Receive): an op 4 that joins goes to the lobby's holder, and a session's
// later payloads and its end go where it joined. Every node sees a join, so a user who was in a
// call relayed elsewhere leaves it (one call per game). A member who leaves the lobby, and a
// lobby that goes, reach every node.
//
// One goroutine of the Cluster's (Start, Close) applies everything, in the order it came, so that
// a claim and the call it covers change together.
type Cluster struct {
	Service *Service
	Claims  Claims
	// Share sends an op to every other node (package gateway's Hub.Share, kind SharedKind).
	Share func(op Op)
	// Connected tells whether a gateway session, of any node, is attached to a connection
	// (package gateway's Hub.SessionConnected). Every ClaimTTL/3 the participants of the calls
	// relayed here whose session is not leave: a node that dies tells no one its sessions went.
	// Nil: none is checked.
	Connected func(sessionID string) bool
	// Node is this node's id.
	Node   int
	Clock  clock.Clock
	Logger *slog.Logger

	me    string            // this node's holder name: its id and its process's life
	owned map[uint64]uint64 // lobby id -> revision of this node's claim
	route map[string]string // a local session's id -> the holder of the call it joined
	ended []uint64          // calls that ended during the op being applied (Service.OnEnded)

	mu        sync.Mutex
	queue     []func()
	closeOnce sync.Once
	wake      chan struct{}
	closing   chan struct{}
	done      chan struct{}
}

// SharedKind is the kind of the ops the nodes share (package gateway's Hub.Share).
const SharedKind = "voice"

// Op is one voice payload or lobby event as it crosses the bus between nodes.
type Op struct {
	Kind string `json:"k"`
	// To is the holder name of the node that applies it; empty: every node.
	To      string             `json:"to,omitempty"`
	Session gateway.Session    `json:"s,omitzero"`
	State   *vwire.StateUpdate `json:"u,omitempty"`
	Keys    *vwire.Keys        `json:"keys,omitempty"`
	Lobby   uint64             `json:"l,omitempty"`
	User    uint64             `json:"user,omitempty"`
}

// The kinds of Op.
const (
	opState      = "state" // op 4
	opKeys       = "keys"  // op 101
	opGone       = "gone"  // the session's connection ended
	opMemberLeft = "left"  // a member left the lobby
	opLobbyGone  = "lobby" // the lobby went
)

// Start starts the Cluster's goroutine; Close stops it.
func (c *Cluster) Start() {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand's Read never fails
	c.me = strconv.Itoa(c.Node) + "/" + hex.EncodeToString(b[:])
	c.owned, c.route = map[uint64]uint64{}, map[string]string{}
	c.wake, c.closing, c.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	c.Service.OnEnded = func(lobbyID uint64) { c.ended = append(c.ended, lobbyID) }
	go c.run() // owned by the Cluster: Close stops it and waits
}

// Close applies what is queued, stops the Cluster's goroutine, and ends the calls relayed here
// (their participants, on every node, are told they left) and gives up their claims: call it
// once the hub has closed, while the bus still carries dispatches. Later calls do nothing.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		close(c.closing)
		<-c.done
		for lobby := range c.owned {
			c.Service.LobbyGone(lobby)
		}
		c.releaseEnded()
		for lobby, rev := range c.owned {
			c.release(lobby, rev)
		}
	})
}

func (c *Cluster) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

// enqueue hands f to the Cluster's goroutine.
func (c *Cluster) enqueue(f func()) {
	c.mu.Lock()
	c.queue = append(c.queue, f)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Cluster) run() {
	defer close(c.done)
	renew := c.Clock.NewTimer(ClaimTTL / 3)
	defer func() { renew.Stop() }()
	for {
		select {
		case <-c.closing:
			c.applyQueued()
			return
		case <-renew.C():
			if c.Connected != nil {
				c.Service.Prune(c.Connected)
				c.releaseEnded()
			}
			c.renew()
			renew = c.Clock.NewTimer(ClaimTTL / 3)
		case <-c.wake:
			c.applyQueued()
		}
	}
}

// applyQueued applies what is queued, in order.
func (c *Cluster) applyQueued() {
	c.mu.Lock()
	todo := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, f := range todo {
		f()
		c.releaseEnded()
	}
}

// VoiceStateUpdate serves a local session's op 4 (gateway.Voice): a join goes to the node
// that relays the lobby's call, claiming it for this node when no node does.
func (c *Cluster) VoiceStateUpdate(sess gateway.Session, u vwire.StateUpdate) {
	if u.ChannelID == nil {
		c.enqueue(func() { c.toRoute(sess, Op{Kind: opState, Session: sess, State: &u}, true) })
		return
	}
	lobbyID, ok := c.Service.Admit(sess, u) // in the connection's goroutine: it reads the store
	if !ok {
		return
	}
	c.enqueue(func() {
		holder, ok := c.holder(lobbyID)
		if !ok {
			c.Service.refuse(sess, u.ChannelID, wire.CodeGeneral, "internal error: try again")
			return
		}
		c.route[sess.ID] = holder
		op := Op{Kind: opState, To: holder, Session: sess, State: &u}
		if holder == c.me {
			c.join(sess, lobbyID, u)
		} else {
			c.Service.Evict(sess)
		}
		c.Share(op) // the holder joins it; every other node sees the user move
	})
}

// VoiceKeys serves a local session's op 101 (gateway.Voice): it goes where the session joined.
func (c *Cluster) VoiceKeys(sess gateway.Session, k vwire.Keys) {
	c.enqueue(func() { c.toRoute(sess, Op{Kind: opKeys, Session: sess, Keys: &k}, false) })
}

// VoiceSessionGone serves the end of a local session's connection (gateway.Voice).
func (c *Cluster) VoiceSessionGone(sess gateway.Session) {
	c.enqueue(func() { c.toRoute(sess, Op{Kind: opGone, Session: sess}, true) })
}

// MemberLeft takes the user out of the lobby's call, wherever it is relayed.
func (c *Cluster) MemberLeft(lobbyID, userID uint64) {
	c.enqueue(func() {
		c.Service.MemberLeft(lobbyID, userID)
		c.Share(Op{Kind: opMemberLeft, Lobby: lobbyID, User: userID})
	})
}

// LobbyGone ends the lobby's call, wherever it is relayed.
func (c *Cluster) LobbyGone(lobbyID uint64) {
	c.enqueue(func() {
		c.Service.LobbyGone(lobbyID)
		c.Share(Op{Kind: opLobbyGone, Lobby: lobbyID})
	})
}

// Receive takes an op another node shared (package gateway's Config.OnShared, kind SharedKind).
func (c *Cluster) Receive(data json.RawMessage) {
	var op Op
	if err := json.Unmarshal(data, &op); err != nil {
		c.logger().Warn("voice: a shared op cannot be read", "err", err)
		return
	}
	c.enqueue(func() { c.apply(op) })
}

// toRoute applies a local session's op here, or sends it to the node where the session joined;
// end forgets that route.
func (c *Cluster) toRoute(sess gateway.Session, op Op, end bool) {
	to, ok := c.route[sess.ID]
	if end {
		delete(c.route, sess.ID)
	}
	if !ok || to == c.me {
		c.applyHere(op)
		return
	}
	op.To = to
	c.Share(op)
}

// apply applies an op from another node.
func (c *Cluster) apply(op Op) {
	switch {
	case op.To == "":
		c.applyHere(op)
	case op.To != c.me: // for another node: a join there moves the user out of a call here
		if op.Kind == opState && op.State != nil && op.State.ChannelID != nil {
			c.Service.Evict(op.Session)
		}
	case op.Kind == opState && op.State != nil && op.State.ChannelID != nil:
		lobbyID := uint64(*op.State.ChannelID)
		holder, ok := c.holder(lobbyID)
		switch {
		case !ok:
			c.Service.refuse(op.Session, op.State.ChannelID, wire.CodeGeneral, "internal error: try again")
		case holder != c.me: // the call moved meanwhile: on to its node
			op.To = holder
			c.Share(op)
		default:
			c.join(op.Session, lobbyID, *op.State)
		}
	default:
		c.applyHere(op)
	}
}

// join joins the session to the lobby's call here, which this node has claimed; a join refused
// (the call is full, the user left the lobby) may leave the claim without a call, to release.
func (c *Cluster) join(sess gateway.Session, lobbyID uint64, u vwire.StateUpdate) {
	c.Service.Join(sess, lobbyID, u)
	c.ended = append(c.ended, lobbyID) // released unless the call is here (releaseEnded)
}

// applyHere applies an op to this node's calls.
func (c *Cluster) applyHere(op Op) {
	switch op.Kind {
	case opState:
		if op.State != nil && op.State.ChannelID == nil {
			c.Service.Leave(op.Session)
		}
	case opKeys:
		if op.Keys != nil {
			c.Service.VoiceKeys(op.Session, *op.Keys)
		}
	case opGone:
		c.Service.Leave(op.Session)
	case opMemberLeft:
		c.Service.MemberLeft(op.Lobby, op.User)
	case opLobbyGone:
		c.Service.LobbyGone(op.Lobby)
	}
}

// holder returns the holder name of the node that relays the lobby's call, claiming it for
// this node when none does or when this node held it in an earlier life; false when the
// claims cannot be read.
func (c *Cluster) holder(lobbyID uint64) (string, bool) {
	if _, ok := c.owned[lobbyID]; ok {
		return c.me, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	key := strconv.FormatUint(lobbyID, 10)
	holder, rev, err := c.Claims.Claim(ctx, key, c.me)
	if err == nil && holder != c.me && nodeOf(holder) == nodeOf(c.me) { // this node before a restart
		holder = c.me
		rev, err = c.Claims.Replace(ctx, key, c.me, rev)
	}
	if err != nil {
		c.logger().Error("voice: the call's relay cannot be claimed", "lobby_id", lobbyID, "err", err)
		return "", false
	}
	if holder == c.me {
		c.owned[lobbyID] = rev
	}
	return holder, true
}

// nodeOf is the node id part of a holder name.
func nodeOf(holder string) string {
	node, _, _ := strings.Cut(holder, "/")
	return node
}

// releaseEnded gives up the claims of the calls that ended here (or never started).
func (c *Cluster) releaseEnded() {
	for _, lobby := range c.ended {
		if rev, ok := c.owned[lobby]; ok && !c.Service.HasCall(lobby) {
			delete(c.owned, lobby)
			c.release(lobby, rev)
		}
	}
	c.ended = c.ended[:0]
}

func (c *Cluster) release(lobbyID, rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	if err := c.Claims.Release(ctx, strconv.FormatUint(lobbyID, 10), rev); err != nil {
		c.logger().Warn("voice: a call's claim not released (it lapses)", "lobby_id", lobbyID, "err", err)
	}
}

// renew renews the claims of the calls relayed here; a claim that cannot be renewed is given
// up (another node may take the lobby).
func (c *Cluster) renew() {
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	for lobby, rev := range c.owned {
		next, err := c.Claims.Replace(ctx, strconv.FormatUint(lobby, 10), c.me, rev)
		if err != nil {
			c.logger().Warn("voice: a call's claim not renewed", "lobby_id", lobby, "err", err)
			delete(c.owned, lobby)
			continue
		}
		c.owned[lobby] = next
	}
}
