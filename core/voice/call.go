package voice

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/voice/e2ee"
	"sdkpp/internal/clock"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	wvoice "sdkpp/wire/voice"
)

// Defaults of Config's timing fields.
const (
	// DefaultJoinTimeout is how long the service has to admit a join and the relay to bind it.
	DefaultJoinTimeout = 10 * time.Second
	// DefaultTick is how often a call reports loss, retries a bind and checks the relay's liveness.
	DefaultTick = time.Second
	// DefaultRelayTimeout is how long a bound flow may hear nothing from the relay (it echoes a
	// keepalive every KeepaliveInterval) before the call goes Reconnecting and binds again.
	DefaultRelayTimeout = 2*wvoice.KeepaliveInterval + DefaultTick
)

// maxFrame is the largest Opus payload a media packet can carry once sealed.
const maxFrame = wvoice.MaxPayloadBytes - e2ee.FrameOverhead

// framePool is how many captured frames may wait between the audio thread and the sender.
const framePool = 16

// Events are what a call reports to its owner. They run on the call's goroutines (never on the
// audio thread), with the call's lock held: they must not block nor call back into the Call.
// core queues each as a game callback. Any may be nil.
type Events struct {
	Status      func(s Status, e Error, detail int32)
	Participant func(userID uint64, added bool)
	VoiceState  func(userID uint64)
	Speaking    func(userID uint64, speaking bool)
}

// Config is what a Call needs from its owner.
type Config struct {
	// LobbyID is the lobby whose call to join; UserID the local user.
	LobbyID, UserID uint64
	// Send writes a gateway payload on the owner's session (op 4 and op 101).
	Send func(ctx context.Context, op int, d any) error
	// NewEngine makes the audio engine; nil is the registered factory (NewEngine).
	NewEngine func(EngineConfig) (Engine, error)
	// Engine is passed to NewEngine with OnPacket and OnSpeaking replaced by the call's.
	Engine EngineConfig
	Events Events
	// Clock times binds, reports and the replay window's grace; nil is the real clock.
	Clock clock.Clock
	// Rand is the randomness of identities and keys; nil is crypto/rand.
	Rand io.Reader
	// Dial opens the UDP flow to the relay; nil is net.Dialer.DialContext. Tests wrap it to
	// capture or disturb the traffic.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logf writes diagnostics; nil discards them.
	Logf func(format string, args ...any)
	// SelfMute and SelfDeaf are the initial voice state.
	SelfMute, SelfDeaf bool
	// JoinTimeout, Tick and RelayTimeout: zero is the default.
	JoinTimeout, Tick, RelayTimeout time.Duration
}

// Stats counts a call's media; every field is cumulative.
type Stats struct {
	Sent          uint64 // media packets sealed and sent
	Received      uint64 // media packets opened and handed to the engine
	Replayed      uint64 // dropped: a frame already opened, or older than the replay window
	Undecryptable uint64 // dropped: unknown sender or key, bad signature, failed decryption
	Dropped       uint64 // captured frames not sent: muted, not bound, or the sender fell behind
}

// participant is another player in the call.
type participant struct {
	userID             uint64
	keys               e2ee.PublicKeys
	ssrc               uint32
	selfMute, selfDeaf bool
}

// outFrame is a captured frame on its way from the audio thread to the sender goroutine.
type outFrame struct {
	seq  uint16
	ts   uint32
	eos  bool
	n    int
	data [maxFrame]byte
}

// speakingChange is a speaking status on its way from the audio thread to the events.
type speakingChange struct {
	user     uint64
	speaking bool
}

// pendingOp is a gateway payload waiting to be sent, in order.
type pendingOp struct {
	op int
	d  any
}

// Call is the local player's side of one lobby's voice call: signaling over the owner's gateway
// session, media sealed end to end over a UDP flow to the service's relay, and the audio engine.
//
// Goroutines: the signaling sender (ops, in order), and once the service admits the call, the
// relay reader, the media sender and the ticker (binds, keepalives, loss reports). The Call
// owns them all; End stops them and returns once they have ended.
type Call struct {
	cfg     Config
	callID  []byte
	engine  Engine
	session *e2ee.Session
	epoch   time.Time

	ctx    context.Context // the network goroutines; cancelled on failure and by End
	cancel context.CancelFunc
	wg     sync.WaitGroup

	speaking chan speakingChange // from the audio thread to the media sender
	free     chan *outFrame      // frames the audio thread may fill
	out      chan *outFrame      // frames to seal and send

	opsWake chan struct{}
	opsDone chan struct{}

	gate atomic.Bool // self mute or deafen: the audio thread drops frames at once

	stats struct{ sent, received, replayed, undecryptable, dropped atomic.Uint64 }

	mu        sync.Mutex
	status    Status
	ended     bool // End was called
	joined    bool // the service has the local player in the call
	ops       []pendingOp
	opsClosed bool
	parts     map[uint64]*participant
	bySSRC    map[uint32]*participant
	self      participant
	selfMute  bool
	selfDeaf  bool
	server    wvoice.ServerUpdate
	conn      net.Conn
	bound     bool
	binds     int       // bind attempts since the last answer
	heard     time.Time // the relay's last packet
	joinTimer clock.Timer
	mode      Mode
	ptt       bool
	pttDelay  uint32
	vadAuto   bool
	vadDBFS   float32
	localMute map[uint64]bool
	volume    map[uint64]float32
	pos       positional
	// lowLatency: the low-latency mode as last set (SetLowLatency).
	lowLatency bool
}

// Start makes the call's keys and engine, sends the join (op 4 with the public keys) and
// returns the call in Joining. Its status then moves on through Events.Status.
func Start(cfg Config) (*Call, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.NewEngine == nil {
		cfg.NewEngine = NewEngine
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = DefaultJoinTimeout
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.RelayTimeout <= 0 {
		cfg.RelayTimeout = DefaultRelayTimeout
	}
	if cfg.Send == nil || cfg.LobbyID == 0 {
		return nil, errors.New("voice: start call: no lobby or no signaling")
	}
	c := &Call{
		cfg:       cfg,
		callID:    []byte("sdkpp lobby call " + strconv.FormatUint(cfg.LobbyID, 10)),
		epoch:     cfg.Clock.Now(),
		speaking:  make(chan speakingChange, 32),
		free:      make(chan *outFrame, framePool),
		out:       make(chan *outFrame, framePool),
		opsWake:   make(chan struct{}, 1),
		opsDone:   make(chan struct{}),
		parts:     map[uint64]*participant{},
		bySSRC:    map[uint32]*participant{},
		selfMute:  cfg.SelfMute,
		selfDeaf:  cfg.SelfDeaf,
		mode:      ModeVoiceActivity,
		vadAuto:   true,
		vadDBFS:   -60,
		localMute: map[uint64]bool{},
		volume:    map[uint64]float32{},
		pos:       newPositional(),
	}
	for range framePool {
		c.free <- new(outFrame)
	}
	id, err := e2ee.NewIdentity(c.callID, cfg.Rand)
	if err != nil {
		return nil, fmt.Errorf("voice: start call: %w", err)
	}
	if c.session, err = e2ee.NewSession(id, cfg.Rand, 0); err != nil {
		return nil, fmt.Errorf("voice: start call: %w", err)
	}
	ecfg := cfg.Engine
	ecfg.OnPacket = c.onPacket
	ecfg.OnSpeaking = c.onSpeaking
	if c.engine, err = cfg.NewEngine(ecfg); err != nil {
		return nil, fmt.Errorf("voice: start call: %w", err)
	}
	c.engine.SetSelfMute(c.selfMute)
	c.engine.SetSelfDeaf(c.selfDeaf)
	if err := c.engine.Start(); err != nil {
		_ = c.engine.Close()
		return nil, fmt.Errorf("voice: start call: engine: %w", err)
	}
	c.gate.Store(c.selfMute || c.selfDeaf)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.self = participant{userID: cfg.UserID, keys: id.Public()}
	go c.sendOps()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = StatusJoining
	c.sendStateLocked()
	c.joinTimer = cfg.Clock.AfterFunc(cfg.JoinTimeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.status == StatusJoining || c.status == StatusConnecting {
			c.failLocked(ErrorJoinTimeout, 0, "the call was not admitted and bound within %v", cfg.JoinTimeout)
		}
	})
	return c, nil
}

// LobbyID returns the lobby whose call this is.
func (c *Call) LobbyID() uint64 { return c.cfg.LobbyID }

// Engine returns the call's audio engine.
func (c *Call) Engine() Engine { return c.engine }

// Session returns the call's encryption state (tests and diagnostics read it).
func (c *Call) Session() *e2ee.Session { return c.session }

// Status returns the call's state.
func (c *Call) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Stats returns the call's media counters.
func (c *Call) Stats() Stats {
	return Stats{Sent: c.stats.sent.Load(), Received: c.stats.received.Load(), Replayed: c.stats.replayed.Load(),
		Undecryptable: c.stats.undecryptable.Load(), Dropped: c.stats.dropped.Load()}
}

// VerificationCode returns the code that every participant sees for the participants the
// local player knows of now (e2ee.VerificationCode).
func (c *Call) VerificationCode() string { return c.session.VerificationCode() }

// Participants returns the user ids in the call, the local player's included once admitted,
// in ascending order.
func (c *Call) Participants() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []uint64
	if c.joined {
		ids = append(ids, c.cfg.UserID)
	}
	for id := range c.parts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// VoiceState returns a participant's self mute and deafen, and whether it is in the call.
func (c *Call) VoiceState(userID uint64) (selfMute, selfDeaf, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if userID == c.cfg.UserID && c.joined {
		return c.selfMute, c.selfDeaf, true
	}
	p := c.parts[userID]
	if p == nil {
		return false, false, false
	}
	return p.selfMute, p.selfDeaf, true
}

// logf writes a diagnostic naming the call.
func (c *Call) logf(format string, args ...any) {
	c.cfg.Logf("call %d: %s", c.cfg.LobbyID, fmt.Sprintf(format, args...))
}

// setStatusLocked records a status and reports it if it changed (or carries an error).
func (c *Call) setStatusLocked(s Status, e Error, detail int32) {
	if c.status == s && e == ErrorNone {
		return
	}
	c.status = s
	c.logf("status %s (error %s, detail %d)", s, e, detail)
	if c.cfg.Events.Status != nil {
		c.cfg.Events.Status(s, e, detail)
	}
}

// failLocked ends the call's network side after an error: the status goes Disconnected with
// the error, the flow closes, and the game must End the call (and may start it again).
func (c *Call) failLocked(e Error, detail int32, format string, args ...any) {
	if c.ended || c.status == StatusDisconnected {
		return
	}
	c.logf("failed: "+format, args...)
	c.stopNetLocked()
	c.joined = false
	c.setStatusLocked(StatusDisconnected, e, detail)
}

// stopNetLocked cancels the network goroutines and closes the flow; End waits for them.
func (c *Call) stopNetLocked() {
	c.cancel()
	if c.conn != nil {
		_ = c.conn.Close()
	}
	c.bound = false
	if c.joinTimer != nil {
		c.joinTimer.Stop()
	}
}

// End leaves the call (op 4 with no channel), stops every goroutine of the call, closes the
// flow and the engine, and returns when they have ended. It is idempotent.
func (c *Call) End() {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		<-c.opsDone
		return
	}
	if c.status != StatusDisconnected { // the join was sent and not refused: leave
		c.setStatusLocked(StatusDisconnecting, ErrorNone, 0)
		c.pushOpLocked(gwire.OpVoiceStateUpdate, wvoice.StateUpdate{})
	}
	c.ended = true
	c.opsClosed = true
	c.wakeOps()
	c.stopNetLocked()
	c.mu.Unlock()
	<-c.opsDone
	c.wg.Wait()
	if err := c.engine.Close(); err != nil {
		c.logf("closing the engine: %v", err)
	}
	c.mu.Lock()
	c.joined = false
	c.setStatusLocked(StatusDisconnected, ErrorNone, 0)
	c.mu.Unlock()
}

// SignalingLost tells the call that the owner's gateway session dropped. The service ends a
// participant's call with its gateway connection, so the call goes Disconnected with
// SignalingUnexpectedClose; the game ends it and starts it again (rule ST-4).
func (c *Call) SignalingLost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(ErrorSignalingUnexpectedClose, 0, "the gateway connection dropped")
}

// ---- signaling ----

// pushOpLocked queues a gateway payload for the signaling sender.
func (c *Call) pushOpLocked(op int, d any) {
	if c.opsClosed {
		return
	}
	c.ops = append(c.ops, pendingOp{op: op, d: d})
	c.wakeOps()
}

func (c *Call) wakeOps() {
	select {
	case c.opsWake <- struct{}{}:
	default:
	}
}

// sendOps is the signaling sender: it writes queued payloads in order until End has queued the
// last one (the leave), then ends. It gives up a payload the gateway cannot take.
func (c *Call) sendOps() {
	defer close(c.opsDone)
	for range c.opsWake {
		c.mu.Lock()
		ops, closed := c.ops, c.opsClosed
		c.ops = nil
		c.mu.Unlock()
		for _, o := range ops {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := c.cfg.Send(ctx, o.op, o.d); err != nil {
				c.logf("sending op %d: %v", o.op, err)
			}
			cancel()
		}
		if closed {
			return
		}
	}
}

// sendStateLocked queues op 4 with the call's lobby, the local voice state and public keys.
func (c *Call) sendStateLocked() {
	lobby := wire.Snowflake(c.cfg.LobbyID)
	c.pushOpLocked(gwire.OpVoiceStateUpdate, wvoice.StateUpdate{ChannelID: &lobby, SelfMute: c.selfMute,
		SelfDeaf: c.selfDeaf, E2EEPublicKeys: c.self.keys.Bytes()})
}

// sendKeysLocked queues op 101 with key messages for the participants they are sealed to.
func (c *Call) sendKeysLocked(ds []e2ee.KeyDelivery) {
	keys := wvoice.Keys{ChannelID: wire.Snowflake(c.cfg.LobbyID)}
	for _, d := range ds {
		for _, p := range c.parts {
			if p.keys == d.To {
				keys.Keys = append(keys.Keys, wvoice.SealedKey{UserID: wire.Snowflake(p.userID), Sealed: d.Message})
			}
		}
	}
	if len(keys.Keys) > 0 {
		c.pushOpLocked(gwire.OpVoiceKeys, keys)
	}
}

// HandleDispatch takes a voice dispatch of the owner's gateway session and reports whether it
// concerned this call. It does not block: what must be sent is queued.
func (c *Call) HandleDispatch(event string, data json.RawMessage) bool {
	switch event {
	case gwire.EventVoiceStateUpdate:
		var s wvoice.State
		if err := json.Unmarshal(data, &s); err != nil {
			c.logf("malformed %s: %v", event, err)
			return false
		}
		return c.onState(s)
	case gwire.EventVoiceServerUpdate:
		var s wvoice.ServerUpdate
		if err := json.Unmarshal(data, &s); err != nil || uint64(s.ChannelID) != c.cfg.LobbyID {
			return false
		}
		c.onServer(s)
		return true
	case gwire.EventVoiceKeys:
		var k wvoice.KeyDelivery
		if err := json.Unmarshal(data, &k); err != nil || uint64(k.ChannelID) != c.cfg.LobbyID {
			return false
		}
		c.onKey(k)
		return true
	case gwire.EventVoiceError:
		var e wvoice.Error
		if err := json.Unmarshal(data, &e); err != nil {
			return false
		}
		if e.ChannelID != nil && uint64(*e.ChannelID) != c.cfg.LobbyID {
			return false
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.failLocked(ErrorForbidden, int32(e.Code), "refused: %d %s", e.Code, e.Message)
		return true
	}
	return false
}

// onState applies a participant's voice state.
func (c *Call) onState(s wvoice.State) bool {
	here := s.ChannelID != nil && uint64(*s.ChannelID) == c.cfg.LobbyID
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	if uint64(s.UserID) == c.cfg.UserID {
		switch {
		case here:
			c.joined = true
			c.self.ssrc = s.SSRC
			return true
		case c.joined:
			c.failLocked(ErrorNone, 0, "the service removed the local player from the call")
			return true
		}
		return false
	}
	p := c.parts[uint64(s.UserID)]
	if !here {
		if p == nil {
			return false
		}
		c.removeLocked(p)
		return true
	}
	keys, err := e2ee.ParsePublicKeys(s.E2EEPublicKeys)
	if err != nil {
		c.logf("participant %d has unusable public keys: %v", s.UserID, err)
		if p != nil {
			c.removeLocked(p)
		}
		return true
	}
	if p != nil && p.keys != keys { // came back with new keys: a new participant
		c.removeLocked(p)
		p = nil
	}
	if p == nil {
		p = &participant{userID: uint64(s.UserID), keys: keys, ssrc: s.SSRC, selfMute: s.SelfMute, selfDeaf: s.SelfDeaf}
		c.parts[p.userID] = p
		c.bySSRC[p.ssrc] = p
		ds, err := c.session.Join(keys)
		if err != nil {
			c.logf("key rotation for %d: %v", p.userID, err)
		}
		c.sendKeysLocked(ds)
		if c.cfg.Events.Participant != nil {
			c.cfg.Events.Participant(p.userID, true)
		}
		return true
	}
	if p.selfMute != s.SelfMute || p.selfDeaf != s.SelfDeaf {
		p.selfMute, p.selfDeaf = s.SelfMute, s.SelfDeaf
		if c.cfg.Events.VoiceState != nil {
			c.cfg.Events.VoiceState(p.userID)
		}
	}
	return true
}

// removeLocked forgets a participant that left and rotates the local key away from it.
func (c *Call) removeLocked(p *participant) {
	delete(c.parts, p.userID)
	if c.bySSRC[p.ssrc] == p {
		delete(c.bySSRC, p.ssrc)
	}
	ds, err := c.session.Leave(p.keys)
	if err != nil {
		c.logf("key rotation after %d left: %v", p.userID, err) // the sealer refuses until Rotate
	}
	c.sendKeysLocked(ds)
	c.pos.forgetLocked(p.userID)
	c.engine.RemoveSender(p.userID)
	if c.cfg.Events.Participant != nil {
		c.cfg.Events.Participant(p.userID, false)
	}
}

// onKey installs a sender key that a participant sealed to the local player.
func (c *Call) onKey(k wvoice.KeyDelivery) {
	c.mu.Lock()
	p := c.parts[uint64(k.SenderID)]
	c.mu.Unlock()
	if p == nil {
		c.logf("a key from %d, who is not in the call", k.SenderID)
		return
	}
	if err := c.session.ReceiveKey(p.keys, k.Sealed, c.now()); err != nil {
		c.logf("key from %d: %v", k.SenderID, err)
	}
}

// now is the call's time scale for the e2ee package.
func (c *Call) now() time.Duration { return c.cfg.Clock.Now().Sub(c.epoch) }

// onServer opens the flow to the relay and starts the network goroutines.
func (c *Call) onServer(s wvoice.ServerUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.conn != nil || c.status == StatusDisconnected {
		return
	}
	c.server = s
	c.setStatusLocked(StatusConnecting, ErrorNone, 0)
	conn, err := c.cfg.Dial(c.ctx, "udp", s.Endpoint)
	if err != nil {
		c.failLocked(ErrorVoiceConnectionFailed, 0, "dialing the relay %s: %v", s.Endpoint, err)
		return
	}
	c.conn = conn
	c.sendBindLocked()
	c.wg.Add(3)
	go c.readRelay(conn)
	go c.sendMedia(conn)
	go c.tick(conn)
}

// sendBindLocked sends a bind packet with the flow token.
func (c *Call) sendBindLocked() {
	c.binds++
	pkt := wvoice.AppendPacket(make([]byte, 0, wvoice.HeaderBytes+wvoice.TokenBytes),
		wvoice.Header{Type: wvoice.TypeBind, SSRC: c.server.SSRC}, c.server.Token[:])
	if _, err := c.conn.Write(pkt); err != nil {
		c.logf("bind: %v", err)
	}
}

// ---- media ----

// onPacket takes an encoded frame from the audio thread: it copies it into a free buffer and
// queues it for the sender, dropping it if none is free. It neither blocks nor allocates.
func (c *Call) onPacket(p Packet) {
	if len(p.Payload) > maxFrame || c.gate.Load() {
		c.stats.dropped.Add(1)
		return
	}
	select {
	case f := <-c.free:
		f.seq, f.ts, f.eos = p.Seq, p.Timestamp, p.EndOfSpeech
		f.n = copy(f.data[:], p.Payload)
		c.out <- f // out has room for every buffer of the pool
	default:
		c.stats.dropped.Add(1)
	}
}

// onSpeaking passes the engine's speaking changes on; sender 0 is the local player.
func (c *Call) onSpeaking(sender uint64, speaking bool) {
	if sender == 0 {
		sender = c.cfg.UserID
	}
	if c.cfg.Events.Speaking == nil {
		return
	}
	select { // to the media sender, off the audio thread; dropped if it falls behind
	case c.speaking <- speakingChange{sender, speaking}:
	default:
	}
}

// sendMedia seals each captured frame, with the packet header as authenticated data, and sends
// it to the relay.
func (c *Call) sendMedia(conn net.Conn) {
	defer c.wg.Done()
	pkt := make([]byte, 0, wvoice.MaxPacketBytes)
	plain := make([]byte, 0, maxFrame+wvoice.PositionBytes)
	for {
		var f *outFrame
		select {
		case <-c.ctx.Done():
			return
		case f = <-c.out:
		case sc := <-c.speaking:
			c.mu.Lock()
			if !c.ended && c.cfg.Events.Speaking != nil {
				c.cfg.Events.Speaking(sc.user, sc.speaking)
			}
			c.mu.Unlock()
			continue
		}
		c.mu.Lock()
		send := c.bound && !c.selfMute && !c.selfDeaf
		ssrc := c.server.SSRC
		var pos Vec3
		withPos := false
		if send {
			pos, withPos = c.pos.positionDueLocked(f.eos)
			withPos = withPos && f.n+wvoice.PositionBytes <= maxFrame
		}
		c.mu.Unlock()
		if send {
			var flags wvoice.Flags
			if f.eos {
				flags = wvoice.FlagEndOfSpeech
			}
			if withPos {
				flags |= wvoice.FlagPosition // authenticated with the header: the relay cannot strip it
			}
			plain = appendPlain(plain[:0], pos, withPos, f.data[:f.n])
			pkt = wvoice.AppendPacket(pkt[:0], wvoice.Header{Type: wvoice.TypeMedia, Flags: flags, SSRC: ssrc,
				Sequence: uint32(f.seq), Timestamp: f.ts}, nil)
			sealed, err := c.session.Seal(pkt, pkt[:wvoice.HeaderBytes], plain)
			if err != nil {
				c.logf("seal: %v", err)
				c.stats.dropped.Add(1)
			} else if _, err := conn.Write(sealed); err != nil {
				c.stats.dropped.Add(1)
			} else {
				c.stats.sent.Add(1)
			}
		} else {
			c.stats.dropped.Add(1)
		}
		c.free <- f
	}
}

// readRelay reads the relay's packets until the flow closes: answers to binds and keepalives,
// other participants' media (opened and handed to the engine) and loss reports.
func (c *Call) readRelay(conn net.Conn) {
	defer c.wg.Done()
	buf := make([]byte, wvoice.MaxPacketBytes+1)
	plain := make([]byte, 0, wvoice.MaxPacketBytes)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			if c.ctx.Err() == nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				// A refused datagram (ICMP) reads as an error on a connected socket; the ticker
				// notices the silence and binds again.
				if c.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
					continue
				}
			}
			return
		}
		h, payload, err := wvoice.Parse(buf[:n])
		if err != nil {
			continue
		}
		c.mu.Lock()
		c.heard = c.cfg.Clock.Now()
		var from *participant
		if h.Type == wvoice.TypeMedia || h.Type == wvoice.TypeLossReport {
			from = c.bySSRC[h.SSRC]
		}
		if h.Type == wvoice.TypeBind && h.Flags&wvoice.FlagReply != 0 && !c.bound {
			c.bound, c.binds = true, 0
			if c.joinTimer != nil {
				c.joinTimer.Stop()
			}
			c.setStatusLocked(StatusConnected, ErrorNone, 0)
		}
		mine := c.server.SSRC
		c.mu.Unlock()
		switch {
		case from == nil:
		case h.Type == wvoice.TypeMedia:
			plain, err = c.session.Open(from.keys, plain[:0], buf[:wvoice.HeaderBytes], payload, c.now())
			switch {
			case errors.Is(err, e2ee.ErrReplay) || errors.Is(err, e2ee.ErrTooOld):
				c.stats.replayed.Add(1)
			case err != nil:
				c.stats.undecryptable.Add(1)
			default:
				frame := plain
				if h.Flags&wvoice.FlagPosition != 0 {
					x, y, z, rest, ok := wvoice.CutPosition(plain)
					if !ok {
						c.stats.undecryptable.Add(1)
						continue
					}
					c.receivedPosition(from.userID, Vec3{x, y, z})
					frame = rest
				}
				c.stats.received.Add(1)
				c.engine.Receive(from.userID, Packet{Seq: uint16(h.Sequence), Timestamp: h.Timestamp,
					EndOfSpeech: h.Flags&wvoice.FlagEndOfSpeech != 0, Payload: frame})
			}
		case h.Type == wvoice.TypeLossReport:
			for i := range wvoice.ReportBlocks(payload) {
				if b := wvoice.ReportBlockAt(payload, i); b.SSRC == mine {
					c.engine.SetExpectedLoss(int(b.FractionLost) * 100 / 256)
				}
			}
		}
	}
}

// tick runs every Tick: it binds again until the relay answers (failing the call after the
// join timeout), notices a relay gone silent (Reconnecting, then bind again), sends keepalives
// and reports the engine's measured loss to the other participants.
func (c *Call) tick(conn net.Conn) {
	defer c.wg.Done()
	var seq uint32
	lastKeepalive := c.cfg.Clock.Now()
	report := make([]byte, 0, wvoice.MaxPacketBytes)
	for {
		t := c.cfg.Clock.NewTimer(c.cfg.Tick)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		now := c.cfg.Clock.Now()
		c.mu.Lock()
		switch {
		case !c.bound && c.binds*int(c.cfg.Tick) > int(c.cfg.JoinTimeout):
			c.failLocked(ErrorVoiceConnectionFailed, 0, "the relay did not answer %d binds", c.binds)
			c.mu.Unlock()
			return
		case !c.bound:
			c.sendBindLocked()
		case now.Sub(c.heard) > c.cfg.RelayTimeout:
			c.bound, c.binds = false, 0
			c.setStatusLocked(StatusReconnecting, ErrorNone, 0)
			c.sendBindLocked()
		}
		bound, ssrc := c.bound, c.server.SSRC
		var others []uint32
		for s := range c.bySSRC {
			others = append(others, s)
		}
		c.mu.Unlock()
		if !bound {
			continue
		}
		seq++
		if now.Sub(lastKeepalive) >= wvoice.KeepaliveInterval || now.Sub(lastKeepalive) >= c.cfg.RelayTimeout/2 {
			lastKeepalive = now
			report = wvoice.AppendPacket(report[:0], wvoice.Header{Type: wvoice.TypeKeepalive, SSRC: ssrc, Sequence: seq}, nil)
			_, _ = conn.Write(report)
		}
		if len(others) == 0 {
			continue
		}
		lost := min(max(c.engine.LossReport(), 0), 1)
		report = wvoice.AppendPacket(report[:0], wvoice.Header{Type: wvoice.TypeLossReport, SSRC: ssrc, Sequence: seq}, nil)
		for _, s := range others {
			report = wvoice.AppendReportBlock(report, wvoice.ReportBlock{SSRC: s, FractionLost: uint8(min(lost*256, 255))})
		}
		_, _ = conn.Write(report)
	}
}
