// Package gateway is the SDK's connection to the service's WebSocket gateway. It identifies with
// the player's token, keeps the connection alive with heartbeats, and after a drop reconnects with
// jittered backoff and resumes the session, so that the handler sees every dispatch exactly once and
// in order. Close codes the service marks final (4004 and 4010-4014) stop it.
//
// A Client owns one supervisor goroutine, plus one heartbeat goroutine per connection; Close stops
// both and returns once they have exited. Handlers run on the supervisor goroutine and must not
// block: the SDK queues them for the game's thread.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/internal/backoff"

	"github.com/gobwas/ws"

	"sdkpp/internal/clock"
	gwire "sdkpp/wire/gateway"
)

// Status is the connection's state; its values are those of Client::Status.
type Status int32

// The states of a Client.
const (
	Disconnected  Status = 0
	Connecting    Status = 1
	Connected     Status = 2 // the socket is open; waiting for READY or RESUMED
	Ready         Status = 3
	Reconnecting  Status = 4
	Disconnecting Status = 5
)

// Payload is one gateway message.
type Payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// ReadyData is what the client reads from the READY dispatch.
type ReadyData struct {
	SessionID        string          `json:"session_id"`
	ResumeGatewayURL string          `json:"resume_gateway_url"`
	User             json.RawMessage `json:"user"`
}

// CloseError is a connection the service closed with a code.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("gateway closed the connection: %d %s", e.Code, e.Reason)
}

// Final reports whether reconnecting cannot help (authentication failed, bad shard or intents).
func (e *CloseError) Final() bool { return gwire.IsFinal(e.Code) }

// Backoff is the delay between connection attempts (the SDK's one retry policy).
type Backoff = backoff.Policy

// Config configures a Client. URL and Token are required.
type Config struct {
	URL        string        // ws(s)://host/gateway; v=10&encoding=json are added
	Token      func() string // read at each Identify and Resume, so that a refreshed token is used
	Properties map[string]string
	Intents    int
	Backoff    Backoff // zero is 500 ms doubling to 30 s with 50% jitter

	OnStatus func(s Status, err error) // each change, with the reason of a drop
	// OnDispatch gets every dispatch, READY and RESUMED included, on the client's goroutine.
	// data is the client's read buffer: it is valid only until OnDispatch returns (decode it,
	// or copy it to keep it).
	OnDispatch func(event string, data json.RawMessage)
	// DataChecked, when set, reports whether OnDispatch checks the data of event itself, decoding
	// it with a decoder that fails on what is not valid JSON: such data is then not checked before
	// (once is enough), and data that is not valid JSON reaches OnDispatch rather than ending the
	// session. READY's and RESUMED's data are always checked.
	DataChecked func(event string) bool
	// OnDrained, when set, runs on the client's goroutine each time the client is about to read
	// from the connection again (a read that may wait), having handed OnDispatch everything it
	// read before, and when a connection ends: the dispatches between two calls are the frames
	// that arrived together, and a handler that wakes another thread for them (the SDK's
	// callback queue) can wake it once, here, instead of once per dispatch.
	OnDrained func()

	HelloTimeout time.Duration // from connect to Hello; 0 is 10 s
	WriteTimeout time.Duration // one write's limit, after which the connection is closed; 0 is 10 s
	MaxMessage   int64         // read limit; 0 is 4 MiB

	// HTTPClient is for the WebSocket handshake; nil is the default. The Client uses a copy whose
	// transport (when it is an *http.Transport) wraps what it dials, so that concurrent sends
	// share system calls (holdConn).
	HTTPClient *http.Client
	Sleep      func(ctx context.Context, d time.Duration) error // nil is a timer; tests shorten it
	Rand       func() float64                                   // nil is math/rand/v2
	Logf       func(format string, args ...any)                 // diagnostics; payloads are never logged
}

// Client is a self-healing gateway connection.
type Client struct {
	cfg    Config
	status atomic.Int32
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	start  sync.Once

	scratch []byte   // the read buffer, reused between messages by the session's goroutine
	recv    received // the last payload read, decoded; reused like scratch

	mu        sync.Mutex // guards the session and the current connection
	sessionID string
	resumeURL string
	seq       int64
	conn      *wsConn
	held      *holdConn    // conn's connection (under TLS, if any); nil when it could not be wrapped
	dialed    *holdConn    // the connection the handshake's client dialed last, until session takes it
	http      *http.Client // the handshake's: its connections are holdConns (holdingClient)
	ownHTTP   bool         // http is the client's own copy, whose idle connections Close closes

	writeMu sync.Mutex
	// The current connection's write timer, guarded by writeMu (writeRaw), when it is not a
	// holdConn (which has write deadlines of its own).
	writeTimer *time.Timer
	renewing   atomic.Bool // Renew closed the connection: reconnect at once, without an error
	closing    atomic.Bool // Close began: the connection that ends is not replaced
}

// Discover asks the service, with do (a GET of path /gateway and its JSON answer), where its
// gateway is, and returns a Client for it configured by cfg (whose URL it sets).
func Discover(ctx context.Context, do func(ctx context.Context, path string, out any) error, cfg Config) (*Client, error) {
	var g struct {
		URL string `json:"url"`
	}
	if err := do(ctx, "/gateway", &g); err != nil {
		return nil, fmt.Errorf("cannot find the gateway: %w", err)
	}
	if g.URL == "" {
		return nil, errors.New("cannot find the gateway: the service named none")
	}
	cfg.URL = g.URL
	return New(cfg)
}

// New returns a Client; Start connects it.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" || cfg.Token == nil {
		return nil, errors.New("gateway: URL and Token are required")
	}
	if cfg.Backoff.Initial == 0 {
		cfg.Backoff = Backoff{Initial: 500 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.5}
	}
	if cfg.HelloTimeout == 0 {
		cfg.HelloTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.MaxMessage == 0 {
		cfg.MaxMessage = 4 << 20
	}
	if cfg.Sleep == nil {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, clock.Real{}, d) }
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.OnStatus == nil {
		cfg.OnStatus = func(Status, error) {}
	}
	if cfg.OnDispatch == nil {
		cfg.OnDispatch = func(string, json.RawMessage) {}
	}
	c := &Client{cfg: cfg, done: make(chan struct{})}
	c.http, c.ownHTTP = holdingClient(cfg.HTTPClient, cfg.WriteTimeout, func(hc *holdConn) {
		c.mu.Lock()
		c.dialed = hc
		c.mu.Unlock()
	})
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Start begins connecting in the background; later calls do nothing.
func (c *Client) Start() {
	c.start.Do(func() { go c.run() })
}

// Status returns the connection's state.
func (c *Client) Status() Status { return Status(c.status.Load()) }

func (c *Client) setStatus(s Status, err error) {
	if Status(c.status.Swap(int32(s))) != s || err != nil {
		c.cfg.OnStatus(s, err)
	}
}

// Close ends the session (the service forgets it), stops reconnecting and returns once every
// goroutine has exited.
func (c *Client) Close() {
	c.start.Do(func() { close(c.done) }) // never started: nothing runs
	c.setStatus(Disconnecting, nil)
	c.closing.Store(true)
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn != nil {
		// The closing handshake, before the session's end closes the connection: the service
		// reads the code, which ends the session, and the client's reader reads its answer.
		conn.Close(ws.StatusNormalClosure, "client disconnect")
	}
	c.cancel()
	<-c.done
	if c.ownHTTP {
		c.http.CloseIdleConnections() // a handshake refused with keep-alive leaves one
	}
	c.setStatus(Disconnected, nil)
}

// Renew closes the current connection so that the client reconnects at once with the token
// Config.Token returns now, for example a refreshed one. It resumes the session, so the service
// re-authenticates it with that token and replays what was sent meanwhile; when the session
// cannot be resumed it identifies anew. The status passes through Reconnecting.
func (c *Client) Renew() {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil {
		return // not connected: the next attempt reads the new token anyway
	}
	c.renewing.Store(true)
	conn.Close(4900, "token renewed")
}

// Send writes a payload on the current connection, such as a presence update.
func (c *Client) Send(ctx context.Context, op int, d any) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, op, raw)
}

// SendRaw is Send with d already encoded: it must be one valid JSON value, which is written as
// it is (encoding/json would check and copy it again). d is not retained once SendRaw returns:
// the caller may reuse it.
func (c *Client) SendRaw(ctx context.Context, op int, d []byte) error {
	return c.sendRaw(ctx, op, d, false)
}

// SendRawLater is SendRaw for a payload that may wait a little to go out with others: one sent
// while the client's reader is dispatching what it read (the answers of requests in flight,
// say) is written by the reader, with every other such payload, when it reads on (holdConn).
// Send a lone request, whose latency matters, with SendRaw.
func (c *Client) SendRawLater(ctx context.Context, op int, d []byte) error {
	return c.sendRaw(ctx, op, d, true)
}

// sendRaw is SendRaw, or SendRawLater with later.
func (c *Client) sendRaw(ctx context.Context, op int, d []byte, later bool) error {
	c.mu.Lock()
	conn, held := c.conn, c.held
	c.mu.Unlock()
	if conn == nil || c.Status() != Ready {
		return errors.New("gateway: not connected")
	}
	return c.writeRaw(ctx, conn, held, op, d, later)
}

func (c *Client) write(ctx context.Context, conn *wsConn, held *holdConn, op int, d any) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return c.writeRaw(ctx, conn, held, op, raw, false)
}

// writeRaw writes {"op":op,"d":raw} on conn, whose connection is held (nil when it is not a
// holdConn); raw is valid JSON. It fails at once when ctx is done; a write that has begun ends
// early only with the connection (its session, or Config.WriteTimeout).
//
// On a holdConn, the frame's write (wsConn.WriteText) only keeps it, and the system call happens after
// writeMu is released (holdConn.Flush): a write that starts while another goroutine's system call
// is in progress leaves its frame to that goroutine and returns, so that the frames of the
// senders woken together (by a burst of answers, say) go out in one call instead of one each,
// while a lone write still goes out at once on its own goroutine. The holdConn's write deadline
// is the timeout.
//
// With later, a write on a holdConn made while the reader is between reads is left to the reader
// (holdConn.FlushLater).
//
// Otherwise the timeout is one timer per connection (session sets it up), reset for each write,
// which closes the connection when it fires: a context with its own deadline for each write cost
// the send of a lobby message several microseconds (a timer, and two contexts registered with
// each other) on the way to the socket. The session's end closes the connection too (session),
// which ends a write in progress.
//
// The envelope around raw is written into the frame with it (wsConn.WriteTextParts): raw is copied
// once, into the frame, and not retained after writeRaw returns.
func (c *Client) writeRaw(ctx context.Context, conn *wsConn, held *holdConn, op int, raw []byte, later bool) error {
	var headBuf [32]byte
	head := strconv.AppendInt(append(headBuf[:0], `{"op":`...), int64(op), 10)
	head = append(head, `,"d":`...)
	c.writeMu.Lock()
	if err := ctx.Err(); err != nil {
		c.writeMu.Unlock()
		return err
	}
	if held != nil {
		held.Hold(true)
		err := conn.WriteTextParts(head, raw, envelopeEnd)
		held.Hold(false)
		c.writeMu.Unlock()
		if err != nil {
			return err
		}
		if later {
			err = held.FlushLater()
		} else {
			err = held.Flush()
		}
		if err != nil {
			return fmt.Errorf("failed to write frame: %w", err)
		}
		return nil
	}
	defer c.writeMu.Unlock()
	c.writeTimer.Reset(c.cfg.WriteTimeout)
	defer c.writeTimer.Stop()
	return conn.WriteTextParts(head, raw, envelopeEnd)
}

// envelopeEnd closes a payload's envelope after its d (writeRaw).
var envelopeEnd = []byte{'}'}

// errInvalidated is an Invalid Session that cannot be resumed: identify anew.
var errInvalidated = errors.New("gateway: session invalidated")

// run connects and reconnects until Close or a final close code. A session that was established
// (READY or RESUMED) and dropped is resumed at once, without the backoff's delay: the service
// replays only the last dispatches it keeps for the session (its replay limit, 1000 by
// default), which a busy lobby's fan-out fills in a fraction of the first delay
// (250 to 500 ms by default), so that waiting turned a drop into a session that could not be
// resumed and events lost with it. Only once per Backoff.Max, so that a service that keeps
// dropping sessions as soon as they are established is not hammered; attempts that fail back
// off as before.
func (c *Client) run() {
	defer close(c.done)
	var quick time.Time // when a dropped session was last resumed at once
	for attempt := 0; c.ctx.Err() == nil && !c.closing.Load(); {
		if attempt == 0 && c.hasSession() {
			c.setStatus(Reconnecting, nil)
		} else if attempt == 0 {
			c.setStatus(Connecting, nil)
		}
		established, err := c.session()
		if c.ctx.Err() != nil || c.closing.Load() {
			return
		}
		var ce *CloseError
		if errors.As(err, &ce) && ce.Final() {
			c.cfg.Logf("gateway: %v; not reconnecting", err)
			c.status.Store(int32(Disconnected))
			c.cfg.OnStatus(Disconnected, err)
			return
		}
		if errors.As(err, &ce) && (ce.Code == 4007 || ce.Code == 4009) {
			c.forgetSession() // invalid sequence or timed-out session: identify anew
		}
		if established {
			attempt = 0
		}
		if c.renewing.Swap(false) {
			c.cfg.Logf("gateway: renewing the connection")
			c.setStatus(Reconnecting, nil)
			continue
		}
		c.setStatus(Reconnecting, err)
		c.cfg.Logf("gateway: connection lost (%v); reconnecting", err)
		if established && (quick.IsZero() || time.Since(quick) >= c.cfg.Backoff.Max) {
			quick = time.Now()
			continue
		}
		if c.cfg.Sleep(c.ctx, c.cfg.Backoff.Delay(attempt, c.cfg.Rand())) != nil {
			return
		}
		attempt++
	}
}

func (c *Client) hasSession() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID != ""
}

// dialURL is the resume URL while a session can be resumed, else the configured URL.
func (c *Client) dialURL() string {
	c.mu.Lock()
	base := c.cfg.URL
	if c.sessionID != "" && c.resumeURL != "" {
		base = c.resumeURL
	}
	c.mu.Unlock()
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	q.Set("v", "10")
	q.Set("encoding", "json")
	u.RawQuery = q.Encode()
	return u.String()
}

// session runs one connection until it ends, and reports whether it reached READY or RESUMED.
func (c *Client) session() (established bool, err error) {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	c.mu.Lock()
	c.dialed = nil
	c.mu.Unlock()
	conn, err := dialWS(ctx, c.dialURL(), c.http, c.cfg.MaxMessage)
	c.mu.Lock()
	held := c.dialed // nil when the handshake's client could not wrap its connection
	c.dialed = nil
	c.mu.Unlock()
	if err != nil {
		return false, err
	}
	if held != nil {
		conn.settle = held.Settle
	}
	if c.cfg.OnDrained != nil {
		conn.drained = c.cfg.OnDrained
		defer c.cfg.OnDrained() // the last dispatches of a connection that ends without reading on
	}
	c.writeMu.Lock()
	c.writeTimer = time.AfterFunc(c.cfg.WriteTimeout, func() { conn.CloseNow() })
	c.writeTimer.Stop() // until a write starts
	c.writeMu.Unlock()
	c.mu.Lock()
	c.conn, c.held = conn, held
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.conn, c.held = nil, nil
		c.mu.Unlock()
		conn.CloseNow()
	}()
	c.setStatus(Connected, nil)
	// Closing the connection is what ends a read when the session is cancelled: reads then need
	// no context of their own, which would cost a registration with ctx on every message.
	stopClosing := context.AfterFunc(ctx, func() { conn.CloseNow() })
	defer stopClosing()

	hello, err := c.read(conn, c.cfg.HelloTimeout)
	if err != nil {
		return false, err
	}
	var h struct {
		HeartbeatInterval int64 `json:"heartbeat_interval"`
	}
	if hello.Op != gwire.OpHello || json.Unmarshal(hello.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return false, fmt.Errorf("gateway: expected Hello, got op %d", hello.Op)
	}
	acked := make(chan struct{}, 1)
	var beats sync.WaitGroup
	beats.Add(1)
	go func() {
		defer beats.Done()
		c.heartbeat(ctx, conn, held, time.Duration(h.HeartbeatInterval)*time.Millisecond, acked)
	}()
	defer beats.Wait()
	defer cancel()

	if err := c.identifyOrResume(ctx, conn, held); err != nil {
		return false, err
	}
	for {
		p, err := c.read(conn, 0)
		if err != nil {
			if ctx.Err() != nil {
				return established, ctx.Err()
			}
			return established, err
		}
		switch p.Op {
		case gwire.OpDispatch:
			if c.dispatch(p) {
				established = true
			}
		case gwire.OpHeartbeat:
			if err := c.write(ctx, conn, held, gwire.OpHeartbeat, c.lastSeq()); err != nil {
				return established, err
			}
		case gwire.OpHeartbeatACK:
			select {
			case acked <- struct{}{}:
			default:
			}
		case gwire.OpReconnect:
			conn.CloseFromReader(4900, "reconnect requested")
			return established, errors.New("gateway: the service asked to reconnect")
		case gwire.OpInvalidSession:
			var resumable bool
			json.Unmarshal(p.D, &resumable)
			if !resumable {
				c.forgetSession()
				conn.CloseFromReader(4900, "session invalidated")
				return established, errInvalidated
			}
			conn.CloseFromReader(4900, "session not resumable now")
			return established, errors.New("gateway: invalid session (resumable)")
		}
	}
}

// dispatch hands one dispatch to the handler unless it was already delivered, and reports
// whether it established the session (READY or RESUMED).
func (c *Client) dispatch(p *Payload) bool {
	if p.S != nil {
		c.mu.Lock()
		if *p.S <= c.seq && p.T != gwire.EventReady {
			c.mu.Unlock()
			return false // already delivered before a resume
		}
		c.seq = *p.S
		c.mu.Unlock()
	}
	switch p.T {
	case gwire.EventReady:
		var r ReadyData
		if json.Unmarshal(p.D, &r) == nil {
			c.mu.Lock()
			c.sessionID, c.resumeURL = r.SessionID, r.ResumeGatewayURL
			c.mu.Unlock()
		}
		c.cfg.OnDispatch(p.T, p.D)
		c.setStatus(Ready, nil)
		return true
	case gwire.EventResumed:
		c.cfg.OnDispatch(p.T, p.D)
		c.setStatus(Ready, nil)
		return true
	}
	c.cfg.OnDispatch(p.T, p.D)
	return false
}

func (c *Client) lastSeq() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seq == 0 {
		return nil
	}
	return c.seq
}

func (c *Client) forgetSession() {
	c.mu.Lock()
	c.sessionID, c.resumeURL, c.seq = "", "", 0
	c.mu.Unlock()
}

func (c *Client) identifyOrResume(ctx context.Context, conn *wsConn, held *holdConn) error {
	c.mu.Lock()
	session, seq := c.sessionID, c.seq
	c.mu.Unlock()
	if session != "" {
		return c.write(ctx, conn, held, gwire.OpResume, map[string]any{"token": c.cfg.Token(), "session_id": session, "seq": seq})
	}
	props := c.cfg.Properties
	if props == nil {
		props = map[string]string{"os": "sdkpp", "browser": "sdkpp", "device": "sdkpp"}
	}
	return c.write(ctx, conn, held, gwire.OpIdentify, map[string]any{"token": c.cfg.Token(), "properties": props, "intents": c.cfg.Intents})
}

// read returns the next payload, valid until the next read; a close from the service is a
// *CloseError. With a timeout, a payload that does not come within it closes the connection.
// Only the session's goroutine reads.
func (c *Client) read(conn *wsConn, timeout time.Duration) (*Payload, error) {
	if timeout > 0 {
		expired := make(chan struct{})
		t := time.AfterFunc(timeout, func() { close(expired); conn.CloseNow() })
		p, err := c.read(conn, 0)
		if !t.Stop() {
			<-expired
			if err != nil {
				return nil, fmt.Errorf("gateway: nothing came within %v: %w", timeout, err)
			}
		}
		return p, err
	}
	b, inScratch, err := conn.ReadMessage(c.scratch)
	if err != nil {
		return nil, err
	}
	if inScratch && cap(b) <= maxScratch {
		c.scratch = b // reused for the next message: OnDispatch's data is valid during the call
	}
	return c.recv.decode(b, c.cfg.DataChecked)
}

// maxScratch is the largest read buffer a client keeps between messages.
const maxScratch = 64 << 10

// heartbeat beats every interval, the first after a random fraction of it. A beat that was not
// acknowledged before the next one means a dead connection: it is closed so that the client
// reconnects and resumes.
func (c *Client) heartbeat(ctx context.Context, conn *wsConn, held *holdConn, interval time.Duration, acked <-chan struct{}) {
	wait := time.Duration(float64(interval) * c.cfg.Rand())
	pending := false
	for {
		if c.cfg.Sleep(ctx, wait) != nil {
			return
		}
		wait = interval
		if pending {
			select {
			case <-acked:
			default:
				c.cfg.Logf("gateway: heartbeat not acknowledged; reconnecting")
				conn.Close(4900, "heartbeat not acknowledged")
				return
			}
		}
		if err := c.write(ctx, conn, held, gwire.OpHeartbeat, c.lastSeq()); err != nil {
			return
		}
		pending = true
	}
}

// String names a status like Client::Status.
func (s Status) String() string {
	switch s {
	case Disconnected:
		return "Disconnected"
	case Connecting:
		return "Connecting"
	case Connected:
		return "Connected"
	case Ready:
		return "Ready"
	case Reconnecting:
		return "Reconnecting"
	case Disconnecting:
		return "Disconnecting"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}
