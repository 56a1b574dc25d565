// Package rpc is the client side of the platform's desktop RPC over IPC: the local transport
// between a game and the desktop client running on the same machine (rules RPC-1 and RPC-2).
// Link (link.go) is a Client's use of it: the connection made on first use and the named event
// subscriptions that last across restarts of the desktop client.
//
// # Wire
//
// The endpoint is a unix socket, Path(dir, prefix, n) for n = 0..9 ($XDG_RUNTIME_DIR, else
// $TMPDIR, else /tmp, then sdkpp-ipc-N), or on Windows the named pipe \\?\pipe\sdkpp-ipc-N; the
// client takes the first that answers. Each frame is an opcode and a payload length, both
// little-endian uint32, then that many bytes of JSON (see ReadFrame; at most MaxPayload). The
// client sends HANDSHAKE {"v":1,"client_id":"<application id>"}; the peer answers with the event
// READY. Commands are FRAMEs {"cmd","args","nonce"} answered by a FRAME with the same nonce
// (evt ERROR and data {"code","message"} when the command failed); events are FRAMEs
// {"cmd":"DISPATCH","evt","data"}, delivered to subscribers after SUBSCRIBE. PING is answered
// with PONG and the same payload; CLOSE {"code","message"} ends the connection.
//
// # Goroutines and handlers
//
// A Client runs a supervisor goroutine that connects, handshakes, re-sends every active
// subscription, and when the connection drops reconnects with capped exponential backoff; and,
// while connected, one reader goroutine. Handlers (Config.OnReady, Config.OnDisconnect,
// Config.OnError and the handlers given to Subscribe) are called on those goroutines: they must
// not block, and must not call Command or Subscribe of the same Client, which wait for a reply
// that goroutine delivers, nor Close (queue the work instead, as core.Client does). No handler
// runs after Close has returned.
package rpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/internal/backoff"

	"sdkpp/internal/clock"
)

// Errors of Command and Subscribe. A command in flight when the connection drops fails with an
// error wrapping ErrDisconnected (and ErrClosed if Close dropped it).
var (
	ErrClosed       = errors.New("rpc: client closed")
	ErrNotConnected = errors.New("rpc: not connected to the desktop client")
	ErrDisconnected = errors.New("rpc: connection to the desktop client lost")
)

// State is the state of a Client's connection.
type State int32

// The states of a Client.
const (
	Disconnected State = iota // waiting to retry
	Connecting                // dialing, handshaking or re-subscribing
	Connected                 // READY received and subscriptions sent
	Closed                    // Close was called
)

func (s State) String() string {
	switch s {
	case Disconnected:
		return "disconnected"
	case Connecting:
		return "connecting"
	case Connected:
		return "connected"
	case Closed:
		return "closed"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Backoff is the delay between connection attempts (the SDK's one retry policy); a successful
// handshake starts over from Initial.
type Backoff = backoff.Policy

// DefaultBackoff retries after 250 ms, then 0.5 s, 1 s, ... up to 10 s, with 50% jitter.
var DefaultBackoff = Backoff{Initial: 250 * time.Millisecond, Max: 10 * time.Second, Jitter: 0.5}

// Config configures a Client. Only ApplicationID is required.
type Config struct {
	ApplicationID uint64 // sent as client_id in the handshake
	Dir           string // socket directory (Unix); "" is DefaultDir()
	Prefix        string // endpoint name before its index; "" is DefaultPrefix

	Backoff          Backoff       // zero is DefaultBackoff; a zero Initial is 250 ms, a Max below Initial is 10 s (or Initial)
	DialTimeout      time.Duration // per endpoint; 0 is 1 s
	HandshakeTimeout time.Duration // from connect to READY; 0 is 5 s
	CommandTimeout   time.Duration // for commands whose context has no deadline; 0 is 10 s
	WriteTimeout     time.Duration // for one frame, where the connection supports deadlines; 0 is 5 s

	// Sleep waits d or until ctx is done (then returns ctx.Err()); nil is a timer. Tests inject
	// it to control the reconnect delays. Rand returns a number in [0, 1) for the jitter; nil
	// is math/rand/v2.
	Sleep func(ctx context.Context, d time.Duration) error
	Rand  func() float64

	OnReady      func(Ready)  // after each handshake (the first and every reconnect), once subscriptions are sent
	OnDisconnect func(error)  // when an established connection drops, with the reason
	OnError      func(*Error) // an ERROR event that answers no command

	// Logf receives diagnostics; nil discards them. Payloads are never logged.
	Logf func(format string, args ...any)
}

// Client is a connection to the desktop client that keeps itself up. Its methods are safe for
// concurrent use.
type Client struct {
	cfg    Config
	ctx    context.Context // done when Close is called
	cancel context.CancelFunc
	wg     sync.WaitGroup
	state  atomic.Int32

	// subMu orders the SUBSCRIBE and UNSUBSCRIBE frames of concurrent calls as their effect on
	// the subscription table. Lock order: subMu, mu, then a conn's locks.
	subMu sync.Mutex

	mu      sync.Mutex
	cur     *conn // the current connection, nil while disconnected
	ready   *Ready
	changed chan struct{} // closed and replaced at each change of state
	nextID  uint64
	subs    map[string]map[uint64]*sub // by subscription key, then by id
	tried   bool                       // a connection attempt has started

	closeOnce sync.Once
}

// sub is one registration of Subscribe.
type sub struct {
	id      uint64
	evt     string
	handler func(json.RawMessage)
	active  atomic.Bool
}

// New validates cfg and starts connecting in the background; it does not wait for the desktop
// client, which may start later. Use WaitReady to wait for the first READY.
func New(cfg Config) (*Client, error) {
	if cfg.ApplicationID == 0 {
		return nil, errors.New("rpc: Config.ApplicationID is required")
	}
	if b := &cfg.Backoff; *b == (Backoff{}) {
		*b = DefaultBackoff
	} else {
		setDefault(&b.Initial, DefaultBackoff.Initial)
		if b.Max < b.Initial {
			b.Max = max(b.Initial, DefaultBackoff.Max)
		}
	}
	setDefault(&cfg.DialTimeout, time.Second)
	setDefault(&cfg.HandshakeTimeout, 5*time.Second)
	setDefault(&cfg.CommandTimeout, 10*time.Second)
	setDefault(&cfg.WriteTimeout, 5*time.Second)
	if cfg.Sleep == nil {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, clock.Real{}, d) }
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	c := &Client{cfg: cfg, subs: map[string]map[uint64]*sub{}, changed: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.state.Store(int32(Disconnected))
	c.wg.Add(1)
	go c.supervise()
	return c, nil
}

// Dial is New followed by WaitReady: it returns once the handshake is done, or fails (and
// closes the Client) when ctx ends first.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := c.WaitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// State returns the connection's state.
func (c *Client) State() State { return State(c.state.Load()) }

// Ready returns the READY of the current connection, if connected.
func (c *Client) Ready() (Ready, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready == nil {
		return Ready{}, false
	}
	return *c.ready, true
}

// WaitReady waits until the Client is connected and returns its READY, or returns ctx's error,
// or ErrClosed.
func (c *Client) WaitReady(ctx context.Context) (Ready, error) {
	for {
		c.mu.Lock()
		r, st, changed := c.ready, c.State(), c.changed
		c.mu.Unlock()
		switch {
		case st == Connected && r != nil:
			return *r, nil
		case c.ctx.Err() != nil:
			return Ready{}, ErrClosed
		}
		select {
		case <-ctx.Done():
			return Ready{}, ctx.Err()
		case <-c.ctx.Done():
			return Ready{}, ErrClosed
		case <-changed:
		}
	}
}

// Settle waits until the first connection attempt has ended, and any attempt under way, and
// returns the state then: Connected, Disconnected (no desktop client answered) or Closed. It
// returns ctx's error if ctx ends first.
func (c *Client) Settle(ctx context.Context) (State, error) {
	for {
		c.mu.Lock()
		tried, st, changed := c.tried, c.State(), c.changed
		c.mu.Unlock()
		if c.ctx.Err() != nil {
			return Closed, nil
		}
		if tried && st != Connecting {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-c.ctx.Done():
			return Closed, nil
		case <-changed:
		}
	}
}

// setState records a new state and wakes WaitReady; c.mu is held.
func (c *Client) setState(s State) {
	c.state.Store(int32(s))
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) setStateLocked(s State) {
	c.mu.Lock()
	c.setState(s)
	c.mu.Unlock()
}

// Close disconnects, stops reconnecting, fails the commands in flight with ErrClosed, and returns
// once every goroutine of the Client has exited. It may be called more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.setStateLocked(Closed)
	})
	return nil
}

// Command sends cmd with args (any JSON-encodable value; nil sends no args) and returns the
// reply's data. A reply with evt ERROR returns an *Error. Without a connection it fails at once
// with ErrNotConnected; when the connection drops before the reply, with an error wrapping
// ErrDisconnected. A ctx without deadline gets Config.CommandTimeout.
func (c *Client) Command(ctx context.Context, cmd string, args any) (json.RawMessage, error) {
	c.mu.Lock()
	cn := c.cur
	c.mu.Unlock()
	if c.ctx.Err() != nil {
		return nil, ErrClosed
	}
	if cn == nil || c.State() != Connected {
		return nil, ErrNotConnected
	}
	return c.command(ctx, cn, &Message{Cmd: cmd}, args)
}

// GetGuild returns the guild with the given id (GET_GUILD).
func (c *Client) GetGuild(ctx context.Context, guildID string) (Guild, error) {
	var g Guild
	data, err := c.Command(ctx, CmdGetGuild, GuildArgs{GuildID: guildID})
	if err == nil {
		err = json.Unmarshal(data, &g)
	}
	return g, err
}

// SettledVoiceSettings waits for the connection attempt under way (Settle) and returns the user's
// voice settings, or nil when no desktop client answers or the link dropped before the command.
// It returns ctx's error if ctx ends first, and the desktop client's refusal.
func (c *Client) SettledVoiceSettings(ctx context.Context) (*VoiceSettings, error) {
	st, err := c.Settle(ctx)
	if err != nil || st != Connected {
		return nil, err
	}
	vs, err := c.GetVoiceSettings(ctx)
	switch {
	case errors.Is(err, ErrNotConnected): // dropped between Settle and the command
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &vs, nil
}

// GetVoiceSettings returns the user's voice settings (GET_VOICE_SETTINGS).
func (c *Client) GetVoiceSettings(ctx context.Context) (VoiceSettings, error) {
	var vs VoiceSettings
	data, err := c.Command(ctx, CmdGetVoiceSettings, nil)
	if err == nil {
		if err = json.Unmarshal(data, &vs); err != nil {
			err = fmt.Errorf("rpc: %s: %w", CmdGetVoiceSettings, err)
		}
	}
	return vs, err
}

// Subscribe calls handler with the data of every evt event, until the returned function is
// called. The subscription is sent now if connected and again after every reconnect, so it
// lasts across restarts of the desktop client (rule RPC-2). Subscriptions to the same evt with
// the same args share one SUBSCRIBE on the wire; each handler receives every event named evt
// that the connection delivers. Subscribe fails only if the peer refuses the subscription (an
// *Error), or ctx ends or the Client is closed before the reply; without a connection it just
// registers. The returned function may be called more than once; a delivery already under way
// when it is called may still complete.
func (c *Client) Subscribe(ctx context.Context, evt string, args any, handler func(json.RawMessage)) (unsubscribe func(), err error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed
	}
	var raw json.RawMessage
	if args != nil {
		if raw, err = json.Marshal(args); err != nil {
			return nil, fmt.Errorf("rpc: subscribe %s: %w", evt, err)
		}
	}
	key := evt + "\x00" + string(raw)
	c.subMu.Lock()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	s := &sub{id: id, evt: evt, handler: handler}
	s.active.Store(true)
	if c.subs[key] == nil {
		c.subs[key] = map[uint64]*sub{}
	}
	c.subs[key][id] = s
	cn := c.cur
	send := cn != nil && c.State() == Connected && !cn.subscribed[key]
	if send {
		cn.subscribed[key] = true
	}
	c.mu.Unlock()
	m := &Message{Cmd: CmdSubscribe, Evt: evt, Args: raw}
	var ch chan *Message
	if send {
		ch, err = c.request(cn, m)
	}
	c.subMu.Unlock()

	unsub := func() { c.unsubscribe(key, id) }
	if !send {
		return unsub, nil
	}
	if err == nil {
		_, err = c.wait(ctx, cn, m, ch)
	}
	if err == nil || errors.Is(err, ErrDisconnected) && !errors.Is(err, ErrClosed) {
		return unsub, nil // a lost connection re-sends it after the reconnect
	}
	c.mu.Lock()
	c.remove(key, id)
	if len(c.subs[key]) == 0 {
		delete(cn.subscribed, key)
	}
	c.mu.Unlock()
	return nil, err
}

// SubscribeGuildStatus subscribes to GUILD_STATUS of one guild (rule RPC-1); handler receives
// only that guild's statuses.
func (c *Client) SubscribeGuildStatus(ctx context.Context, guildID string, handler func(GuildStatus)) (func(), error) {
	return c.Subscribe(ctx, EvtGuildStatus, GuildArgs{GuildID: guildID}, func(data json.RawMessage) {
		var st GuildStatus
		if err := json.Unmarshal(data, &st); err != nil {
			c.cfg.Logf("rpc: dropped a malformed %s event: %v", EvtGuildStatus, err)
			return
		}
		if st.Guild.ID == guildID {
			handler(st)
		}
	})
}

// SubscribeAuthorizeRequest subscribes to AUTHORIZE_REQUEST: handler runs each time the user
// starts account linking from the desktop client, across reconnects (rule RPC-2).
func (c *Client) SubscribeAuthorizeRequest(ctx context.Context, handler func()) (func(), error) {
	return c.Subscribe(ctx, EvtAuthorizeRequest, nil, func(json.RawMessage) { handler() })
}

func (c *Client) unsubscribe(key string, id uint64) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	c.mu.Lock()
	if !c.remove(key, id) || len(c.subs[key]) > 0 {
		c.mu.Unlock()
		return
	}
	cn := c.cur
	last := cn != nil && cn.subscribed[key]
	if last {
		delete(cn.subscribed, key)
	}
	c.mu.Unlock()
	if last {
		// The reply is not awaited: its buffered channel takes it and is dropped.
		evt, args := splitKey(key)
		if _, err := c.request(cn, &Message{Cmd: CmdUnsubscribe, Evt: evt, Args: args}); err != nil {
			c.cfg.Logf("rpc: unsubscribe %s: %v", evt, err)
		}
	}
}

// remove deletes one registration; c.mu is held. It reports whether it was there.
func (c *Client) remove(key string, id uint64) bool {
	s, ok := c.subs[key][id]
	if !ok {
		return false
	}
	s.active.Store(false)
	delete(c.subs[key], id)
	if len(c.subs[key]) == 0 {
		delete(c.subs, key)
	}
	return true
}

// splitKey is the inverse of the key Subscribe makes: evt, NUL, then the args' JSON.
func splitKey(key string) (evt string, args json.RawMessage) {
	evt, a, _ := strings.Cut(key, "\x00")
	if a != "" {
		args = json.RawMessage(a)
	}
	return evt, args
}

// command sends m (with args) on cn and waits for the reply.
func (c *Client) command(ctx context.Context, cn *conn, m *Message, args any) (json.RawMessage, error) {
	if raw, ok := args.(json.RawMessage); ok {
		m.Args = raw
	} else if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("rpc: %s: %w", m.Cmd, err)
		}
		m.Args = raw
	}
	ch, err := c.request(cn, m)
	if err != nil {
		return nil, err
	}
	return c.wait(ctx, cn, m, ch)
}

// request gives m a fresh nonce and sends it on cn; its reply will arrive on the channel.
func (c *Client) request(cn *conn, m *Message) (chan *Message, error) {
	m.Nonce = NewNonce()
	ch := make(chan *Message, 1)
	if !cn.await(m.Nonce, ch) {
		return nil, cn.lost()
	}
	if err := cn.send(OpFrame, m); err != nil {
		cn.forget(m.Nonce)
		if errors.Is(err, ErrFrameTooLarge) {
			return nil, fmt.Errorf("rpc: %s: %w", m.Cmd, err)
		}
		cn.close(err)
		return nil, cn.lost()
	}
	return ch, nil
}

// wait waits for the reply to m on ch, until ctx ends (after Config.CommandTimeout if it has no
// deadline) or cn does.
func (c *Client) wait(ctx context.Context, cn *conn, m *Message, ch chan *Message) (json.RawMessage, error) {
	defer cn.forget(m.Nonce)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.CommandTimeout)
		defer cancel()
	}
	select {
	case r := <-ch:
		return reply(r)
	case <-cn.done:
		select {
		case r := <-ch:
			return reply(r)
		default:
			return nil, cn.lost()
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("rpc: %s: %w", m.Cmd, ctx.Err())
	}
}

func reply(r *Message) (json.RawMessage, error) {
	if e := ErrorOf(r); e != nil {
		return nil, e
	}
	return r.Data, nil
}

// supervise connects and reconnects until Close.
func (c *Client) supervise() {
	defer c.wg.Done()
	failures := 0
	for c.ctx.Err() == nil {
		c.mu.Lock()
		c.tried = true
		c.setState(Connecting)
		c.mu.Unlock()
		cn, ready, err := c.connect()
		if err == nil {
			failures = 0
			err = c.serve(cn, ready)
			c.mu.Lock()
			c.setState(Disconnected) // the reader has cleared c.cur
			c.mu.Unlock()
			if c.ctx.Err() != nil {
				return
			}
			c.cfg.Logf("rpc: connection lost: %v", err)
			if c.cfg.OnDisconnect != nil {
				c.cfg.OnDisconnect(err)
			}
		} else {
			if c.ctx.Err() != nil {
				return
			}
			c.setStateLocked(Disconnected)
			if failures == 0 {
				c.cfg.Logf("rpc: connect: %v (retrying)", err)
			}
			failures++
		}
		if c.cfg.Sleep(c.ctx, c.cfg.Backoff.Delay(failures, c.cfg.Rand())) != nil {
			return
		}
	}
}

// connect dials the first endpoint that answers, handshakes and waits for READY. On success the
// connection's reader runs; cn is c.cur until the reader exits.
func (c *Client) connect() (*conn, Ready, error) {
	rwc, path, err := c.dialAny()
	if err != nil {
		return nil, Ready{}, err
	}
	cn := newConn(rwc, c.cfg.WriteTimeout)
	c.mu.Lock()
	c.cur = cn // the reader clears it when it exits
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.read(cn)
	}()
	hs, _ := json.Marshal(Handshake{V: Version, ClientID: strconv.FormatUint(c.cfg.ApplicationID, 10)})
	if err := cn.sendRaw(OpHandshake, hs); err != nil {
		cn.close(err)
		<-cn.done
		return nil, Ready{}, fmt.Errorf("handshake on %s: %w", path, err)
	}
	t := time.NewTimer(c.cfg.HandshakeTimeout)
	defer t.Stop()
	select {
	case r := <-cn.ready:
		c.cfg.Logf("rpc: connected to %s", path)
		return cn, r, nil
	case <-cn.done:
		return nil, Ready{}, fmt.Errorf("handshake on %s: %w", path, cn.err)
	case <-t.C:
		err = fmt.Errorf("handshake on %s: no READY within %v", path, c.cfg.HandshakeTimeout)
	case <-c.ctx.Done():
		err = ErrClosed
	}
	cn.close(err)
	<-cn.done
	return nil, Ready{}, err
}

func (c *Client) dialAny() (io.ReadWriteCloser, string, error) {
	var first error
	for n := 0; n < Slots; n++ {
		path := Path(c.cfg.Dir, c.cfg.Prefix, n)
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.DialTimeout)
		rwc, err := dial(ctx, path)
		cancel()
		if err == nil {
			return rwc, path, nil
		}
		if c.ctx.Err() != nil {
			return nil, "", ErrClosed
		}
		if first == nil {
			first = err
		}
	}
	return nil, "", fmt.Errorf("no desktop client on any of %d endpoints: %w", Slots, first)
}

// serve re-sends the subscriptions on cn, then waits until it drops or the Client closes, and
// returns why it ended. The reader has exited when serve returns.
func (c *Client) serve(cn *conn, ready Ready) error {
	if c.resubscribe(cn, ready) && c.cfg.OnReady != nil {
		c.cfg.OnReady(ready)
	}
	select {
	case <-cn.done:
	case <-c.ctx.Done():
		cn.close(ErrClosed)
		<-cn.done
	}
	return cn.err
}

// resubscribe sends SUBSCRIBE for every subscription not yet sent on cn, until none is left,
// then marks the Client connected. It reports false if cn or the Client ended first.
func (c *Client) resubscribe(cn *conn, ready Ready) bool {
	for c.ctx.Err() == nil {
		c.mu.Lock()
		if c.cur != cn { // the reader has exited
			c.mu.Unlock()
			return false
		}
		var todo []string
		for key := range c.subs {
			if !cn.subscribed[key] {
				todo = append(todo, key)
			}
		}
		if len(todo) == 0 {
			c.ready = &ready
			c.setState(Connected)
			c.mu.Unlock()
			return true
		}
		c.mu.Unlock()
		for _, key := range todo {
			if err := c.resubscribeKey(cn, key); err != nil {
				cn.close(err)
				return false
			}
		}
	}
	return false
}

// resubscribeKey sends SUBSCRIBE for key on cn, unless it is sent or unsubscribed meanwhile,
// and waits for the reply. A refusal is logged; the error returned is any other failure.
func (c *Client) resubscribeKey(cn *conn, key string) error {
	evt, args := splitKey(key)
	m := &Message{Cmd: CmdSubscribe, Evt: evt, Args: args}
	c.subMu.Lock()
	c.mu.Lock()
	send := c.subs[key] != nil && !cn.subscribed[key]
	if send {
		cn.subscribed[key] = true // even if refused, so that it is not retried on cn
	}
	c.mu.Unlock()
	var ch chan *Message
	var err error
	if send {
		ch, err = c.request(cn, m)
	}
	c.subMu.Unlock()
	if !send || err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.CommandTimeout)
	defer cancel()
	_, err = c.wait(ctx, cn, m, ch)
	var e *Error
	if errors.As(err, &e) {
		c.cfg.Logf("rpc: re-subscribe %s refused: %v", evt, err)
		return nil
	}
	return err
}

// read runs the connection's reader until the connection ends. Then the Client is marked
// disconnected before the commands in flight fail, so that they never see it connected.
func (c *Client) read(cn *conn) {
	defer func() {
		c.mu.Lock()
		if c.cur == cn {
			c.cur, c.ready = nil, nil
			c.setState(Disconnected)
		}
		c.mu.Unlock()
		cn.finish()
	}()
	readyDone := false
	for {
		op, payload, err := ReadFrame(cn.rwc)
		if err != nil {
			if errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrBadOpcode) {
				c.cfg.Logf("rpc: dropping the connection: %v", err)
			}
			if err == io.EOF {
				err = errors.New("the desktop client closed the connection")
			}
			cn.close(err)
			return
		}
		switch op {
		case OpPing:
			if err := cn.sendRaw(OpPong, payload); err != nil {
				cn.close(err)
				return
			}
		case OpPong:
		case OpClose:
			var cd CloseData
			json.Unmarshal(payload, &cd)
			cn.close(&CloseError{Code: cd.Code, Message: cd.Message})
			return
		case OpHandshake:
			c.cfg.Logf("rpc: dropping the connection: unexpected HANDSHAKE from the peer")
			cn.close(errors.New("protocol error: HANDSHAKE from the peer"))
			return
		case OpFrame:
			m, err := ParseMessage(payload)
			if err != nil {
				c.cfg.Logf("rpc: dropping the connection: %v", err)
				cn.close(err)
				return
			}
			if m.Cmd == CmdDispatch && m.Evt == EvtReady {
				var r Ready
				if err := json.Unmarshal(m.Data, &r); err != nil {
					c.cfg.Logf("rpc: dropping the connection: malformed READY: %v", err)
					cn.close(fmt.Errorf("malformed READY: %w", err))
					return
				}
				if !readyDone {
					readyDone = true
					cn.ready <- r
				}
				continue
			}
			c.dispatch(cn, m)
		}
	}
}

// dispatch hands a reply to its command, or an event to its handlers.
func (c *Client) dispatch(cn *conn, m *Message) {
	if m.Cmd != CmdDispatch {
		if !cn.deliver(m) {
			c.cfg.Logf("rpc: dropped a %s reply nobody waits for", m.Cmd)
		}
		return
	}
	if m.Evt == EvtError {
		if m.Nonce != "" && cn.deliver(m) {
			return
		}
		e := ErrorOf(m)
		c.cfg.Logf("rpc: %v", e)
		if c.cfg.OnError != nil {
			c.cfg.OnError(e)
		}
		return
	}
	c.mu.Lock()
	var hs []*sub
	for _, subs := range c.subs {
		for _, s := range subs {
			if s.evt == m.Evt {
				hs = append(hs, s)
			}
		}
	}
	c.mu.Unlock()
	slices.SortFunc(hs, func(a, b *sub) int { return cmp.Compare(a.id, b.id) })
	for _, s := range hs {
		if s.active.Load() {
			s.handler(m.Data)
		}
	}
}
