package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/counters"
	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/gateway/internal/hubstats"
	"sdkpp/server/gateway/internal/pace"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/server/scopes"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Defaults of Config.
const (
	DefaultHeartbeatInterval = 41250 * time.Millisecond
	DefaultResumeWindow      = 2 * time.Minute
	DefaultReplayLimit       = 1000
	DefaultRateLimit         = 120
	DefaultRateWindow        = 60 * time.Second
	DefaultMaxPayloadBytes   = 4096
	DefaultWriteTimeout      = 10 * time.Second
	DefaultCloseGrace        = 5 * time.Second
)

// closeTimeout bounds one close handshake in real time: past it the TCP connection is cut.
const closeTimeout = 2 * time.Second

// Identity is who a bearer token speaks for. It is defined with the bus's messages, whose
// session notes carry it.
type Identity = busmsg.Identity

// Tokens resolves the bearer tokens that clients send in gwire.Identify and gwire.Resume. server.go adapts
// package token to it.
type Tokens interface {
	// ResolveBearer returns the identity behind a user's OAuth2 access token (sent without the
	// "Bearer " prefix). ok is false for an unknown, expired or revoked token; err is for a failure
	// to look it up, which the client sees as gwire.CloseUnknownError and may retry.
	ResolveBearer(ctx context.Context, token string) (who Identity, ok bool, err error)
	// ResolveBot returns the identity of an application's bot token (sent without the "Bot "
	// prefix), Bot set; ok and err as for ResolveBearer.
	ResolveBot(ctx context.Context, token string) (who Identity, ok bool, err error)
}

// Users gives the user object of READY.
type Users interface {
	// ReadyUser returns the user object of who as GET /users/@me would return it to that token
	// (premium_type per rule USR-1). An error closes the connection with gwire.CloseUnknownError.
	ReadyUser(ctx context.Context, who Identity) (wire.User, error)
}

// Config configures a Hub. Zero values take the defaults above.
type Config struct {
	Tokens Tokens      // required
	Users  Users       // required
	Clock  clock.Clock // heartbeat deadlines, resume window and rate limit; default the machine's
	// HeartbeatInterval is sent in gwire.Hello; a connection with no heartbeat for 1.5 intervals is
	// closed with gwire.CloseSessionTimedOut. Default 41250 ms.
	HeartbeatInterval time.Duration
	// ResumeWindow is how long a disconnected session can be resumed. Default 2 minutes.
	ResumeWindow time.Duration
	// ReplayLimit is how many dispatches a session keeps for gwire.Resume. Default 1000.
	ReplayLimit int
	// RateLimit payloads per RateWindow are allowed per connection; one more closes it with
	// gwire.CloseRateLimited. Defaults 120 per 60 s.
	RateLimit  int
	RateWindow time.Duration
	// MaxPayloadBytes is the largest client payload; a larger one closes the connection with
	// gwire.CloseDecodeError. Default 4096, the platform's limit for payloads clients send.
	MaxPayloadBytes int
	// WriteTimeout bounds one write to a client in real time. Default 10 s.
	WriteTimeout time.Duration
	// CloseGrace is how long Close lets connections finish their close handshakes (real time)
	// before cutting them. Default 5 s.
	CloseGrace time.Duration
	Logger     *slog.Logger // default slog.Default()
	// ResumeURL is READY's resume_gateway_url. Default: the ws:// or wss:// URL of the request's
	// host and path, without query.
	ResumeURL string
	// OnPresence, when set, receives the d of every Presence Update (op 3), already checked to be a
	// JSON object, and an gwire.Identify's presence object. It runs on the connection's goroutine: it
	// must not block for long. It may call the Hub's methods.
	OnPresence func(who Identity, presence json.RawMessage)
	// OnConnection, when set, is told when a user's first live session of an application starts
	// (connected true) and when the last one ends (false), by gwire.Identify, gwire.Resume and the end of a
	// connection. It runs on the connection's goroutine without the hub's lock, so two calls may
	// overlap or arrive late: read the current state with OnlineApp rather than trusting the
	// argument's order. It must not block for long.
	OnConnection func(who Identity, connected bool)
	// OnSession, when set, runs after a session is attached to a connection (gwire.Identify, gwire.Resume)
	// and after a connection lets its session go (detached or ended), on the connection's
	// goroutine and outside the hub's lock: it may call Online and OnlineApp, which already tell
	// the new state. It must not block for long.
	OnSession func(who Identity)
	// ReadyExtra, when set, gives more top-level fields of READY (for example relationships and
	// presences), each encoded as JSON; the standard fields cannot be replaced. An error closes
	// the connection with gwire.CloseUnknownError.
	ReadyExtra func(ctx context.Context, who Identity) (map[string]any, error)
	// ChannelInfo, when set, answers Request Channel Info (op 43, rule GW-3) with the d of
	// CHANNEL_INFO: the fields asked for of the guild's channels. A *wire.APIError refuses the
	// request (no answer). It runs on the connection's goroutine. Nil: op 43 is an unknown opcode.
	ChannelInfo func(ctx context.Context, who Identity, guildID uint64, fields []string) (any, error)
	// AppFlags, when set, gives the flags of READY's application (rule APP-1); an error closes
	// the connection with gwire.CloseUnknownError. Nil: flags 0.
	AppFlags func(ctx context.Context, appID uint64) (uint64, error)
	// Requests, when set, serves API requests sent over the gateway (gwire.OpRequest): the API's
	// handler, with paths below the API base. Nil: gwire.OpRequest is an unknown opcode.
	Requests http.Handler
	// Accept, when set, takes the requests it knows (a lobby message) instead of Requests, with
	// the session's address, its credential and its memo in ctx (httpx.WithSessionMemo): it serves one and returns
	// its answer, which may wait (for a commit); false leaves it to Requests. An answer's body is
	// one JSON value or empty (null), and goes out as it is, unchecked. A connection reads on
	// while the next request has arrived and takes the answers of those accepted afterwards.
	Accept func(ctx context.Context, remoteAddr, auth, method, path string, body []byte) (answer func() (int, []byte), ok bool)
	// Accepted, when set, runs before the answers of requests accepted together are taken.
	Accepted func()
	// AnswerInline has a connection take the answers of two or more requests it read together
	// itself when none are in flight (oprequest.Queue.Run), instead of handing them to the
	// queue's goroutine and reading on meanwhile: for answers that wait for work done on the
	// waiter's goroutine (a SQLite commit), or for a round trip that the requests' acceptance
	// started (a PostgreSQL group commit sent before their delivery), where the hand-off only
	// woke another thread.
	AnswerInline bool
	// MaxRequestBytes is the largest gwire.OpRequest payload. Default gwire.MaxRequestBytes.
	MaxRequestBytes int
	// AllowIntents, when set, decides whether who may use the intents of a gwire.Identify, or
	// those of the session a gwire.Resume re-attaches (the application's flags may have changed
	// since); false closes with gwire.CloseDisallowedIntents, an error with
	// gwire.CloseUnknownError. Nil allows every known intent.
	AllowIntents func(ctx context.Context, who Identity, intents uint64) (bool, error)
	// Guilds, when set, gives a bot session its guilds (those of the Identify's shard, when
	// given): READY lists each as unavailable, then a GUILD_CREATE dispatch follows for each one
	// whose Create is not nil. Nil: bots get no guilds.
	Guilds func(ctx context.Context, who Identity, intents uint64, shard []int) ([]BotGuild, error)
	// Members, when set, serves Request Guild Members (op 8) of bot sessions: the members of the
	// guild matching query (a username prefix; "" for all) up to limit (0 for no limit), or the
	// given userIDs, and those of userIDs that are not members. An error that is a
	// *wire.APIError (the bot is not a member, say) gets no answer, as on the platform. Nil:
	// op 8 is an unknown opcode.
	Members func(ctx context.Context, who Identity, guildID uint64, query string, limit int, userIDs []uint64) (members []wire.Member, notFound []uint64, err error)
	// SessionStarts is how many Identifies a bot may make per SessionStartWindow (GET
	// /gateway/bot's session_start_limit); default 1000 per 24 hours.
	SessionStarts      int
	SessionStartWindow time.Duration
	// MaxConcurrency, when set, gives an application's max_concurrency (GET /gateway/bot): its
	// bot may Identify once per IdentifyWindow in each rate-limit bucket, shard id modulo
	// max_concurrency; an Identify over that gets Invalid Session, as over SessionStarts. Nil:
	// only SessionStarts limits Identifies.
	MaxConcurrency func(ctx context.Context, appID uint64) (int, error)
	// IdentifyWindow is MaxConcurrency's window; default DefaultIdentifyWindow (the platform's 5 s).
	IdentifyWindow time.Duration
	// MembersRateWindow is how often a bot may request all members of one guild (rule GW-2);
	// default 30 s.
	MembersRateWindow time.Duration
	// Counter counts the bots' session starts and member requests (package counters: in the
	// store when nodes share it, so that a budget holds whichever nodes a bot connects to);
	// nil counts in memory.
	Counter counters.Counter
	// Bus, when set, carries every dispatch to every node of a cluster, this one included: a
	// dispatch is published, and pushed to the sessions of each node as that node reads it
	// back (Deliver). Nil: dispatches go straight to this node's sessions.
	Bus Bus
	// Outbox, with a bus, keeps the dispatches staged with their changes (Stage, Relay).
	Outbox Outbox
	// OnShared, when set, receives what another node shared (Share), on the bus's goroutine in
	// the bus's order. It must not block for long.
	OnShared func(kind string, data json.RawMessage)
	// OnNodeStarted, when set, is told that another node started (after this node told it of
	// its sessions again), so that what this node shared is shared again: the stream keeps
	// messages for a while only, and the new node read only what it kept.
	OnNodeStarted func()
	// OnBusDelivered, when set, is told of each message read from the bus: what it carries (an
	// event name, "session", "presence" ...), when its node sent it and when this node took it.
	OnBusDelivered func(kind string, sent, delivered time.Time)
	// Node is this node's id, named in what it tells the other nodes of its sessions.
	Node int
	// Replay reads the bus again, so that a session another node ran can be resumed here with
	// what it missed (package bus's Read). Nil: such sessions cannot be resumed here.
	Replay Replay
	// Voice, when set, serves voice signaling: Voice State Update (op 4) and Voice Keys (op
	// 101), whose payloads the hub decodes and checks (4002 when malformed), and the end of
	// each session's connection. Nil: both are unknown opcodes.
	Voice Voice

	// busyPace is the least time between two paced writes of one connection (0: pace.BusyPace);
	// tests lengthen it so that a write that was paced cannot arrive in time.
	busyPace time.Duration
}

// Hub is the WebSocket gateway: it serves connections (ServeHTTP), keeps sessions and their
// replay buffers, and dispatches events to users (Dispatch). It is safe for concurrent use.
type Hub struct {
	cfg     Config
	log     *slog.Logger
	timeout time.Duration // heartbeat deadline: 1.5 intervals

	ctx    context.Context // cancelled when Close gives up waiting; every I/O uses it
	cancel context.CancelFunc

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // one per ServeHTTP call that upgraded or may upgrade

	mu        sync.Mutex
	closed    bool
	conns     map[*conn]struct{}
	sessions  map[string]*session
	byUser    map[uint64][]*session // each user's sessions, in no order (a set, iterated without a map's iterator)
	lastSweep time.Time
	stamp     uint64 // the last dispatch push stamped on the sessions it reached (session.stamp)

	pubMu sync.Mutex
	pub   []uint64 // outbox ids published, not yet deleted (Published)

	busSeq uint64 // the sequence number of the last dispatch delivered from the bus; guarded by mu
	// life names this hub's process in what it tells other nodes (a restarted node has a new one).
	life string
	// remote holds, by session id, what the other nodes told of their sessions; remoteByUser
	// indexes it by user. Guarded by mu.
	remote       map[string]*busmsg.SessionNote
	remoteByUser map[uint64]map[string]*busmsg.SessionNote

	scopeSets scopeSets // the sessions' scopes, one slice per set

	rate  *pace.Meter       // dispatches per second, for write pacing
	quiet *pace.Quiet       // makes the paced writes due once the pushes pause
	stats hubstats.Counters // what Stats reports
}

// New returns a Hub. It starts no goroutine: connections run on ServeHTTP's goroutine. It panics
// when cfg.Tokens or cfg.Users is nil.
func New(cfg Config) *Hub {
	if cfg.Tokens == nil || cfg.Users == nil {
		panic("gateway: Config.Tokens and Config.Users are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	positive(&cfg.HeartbeatInterval, DefaultHeartbeatInterval)
	positive(&cfg.ResumeWindow, DefaultResumeWindow)
	positive(&cfg.ReplayLimit, DefaultReplayLimit)
	positive(&cfg.RateLimit, DefaultRateLimit)
	positive(&cfg.RateWindow, DefaultRateWindow)
	positive(&cfg.MaxPayloadBytes, DefaultMaxPayloadBytes)
	positive(&cfg.MaxRequestBytes, gwire.MaxRequestBytes)
	positive(&cfg.WriteTimeout, DefaultWriteTimeout)
	positive(&cfg.CloseGrace, DefaultCloseGrace)
	positive(&cfg.SessionStarts, DefaultSessionStarts)
	positive(&cfg.SessionStartWindow, DefaultSessionStartWindow)
	positive(&cfg.IdentifyWindow, DefaultIdentifyWindow)
	positive(&cfg.MembersRateWindow, DefaultMembersRateWindow)
	positive(&cfg.busyPace, pace.BusyPace)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Counter == nil {
		cfg.Counter = counters.NewMemory()
	}
	ctx, cancel := context.WithCancel(context.Background())
	rate := pace.NewMeter()
	return &Hub{
		cfg: cfg, log: cfg.Logger, timeout: cfg.HeartbeatInterval * 3 / 2,
		ctx: ctx, cancel: cancel, closing: make(chan struct{}),
		conns: map[*conn]struct{}{}, sessions: map[string]*session{}, byUser: map[uint64][]*session{},
		rate: rate, quiet: pace.NewQuiet(rate), life: newSessionID()[:12],
		remote: map[string]*busmsg.SessionNote{}, remoteByUser: map[uint64]map[string]*busmsg.SessionNote{},
	}
}

// positive sets *v to def unless it is positive.
func positive[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// ServeHTTP upgrades a GET request to a WebSocket connection and serves the gateway protocol on
// it until the connection ends. Query parameters: v (9 or 10, which speak the same protocol here,
// or absent), encoding (json, or absent), compress (zlib-stream, or absent). Other methods get
// 405; after Close, 503.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, wire.MethodNotAllowed())
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		writeError(w, &wire.APIError{Status: http.StatusServiceUnavailable, Code: wire.CodeGeneral,
			Message: "503: Service Unavailable"})
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	served := false // the connection's goroutine calls wg.Done
	defer func() {
		if !served {
			h.wg.Done()
		}
	}()

	tcp, rd, err := wsframe.Upgrade(w, r, h.cfg.WriteTimeout)
	if errors.Is(err, wsframe.ErrUpgradeRequired) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		writeError(w, &wire.APIError{Status: http.StatusUpgradeRequired, Code: wire.CodeGeneral,
			Message: "426: Upgrade Required"})
		return
	}
	if err != nil { // answered on the taken-over connection, or closed
		return
	}
	c := newConn(h, tcp, rd, h.resumeURL(r))
	c.remoteAddr = r.RemoteAddr
	go c.read() // owned by the connection: finish waits for it
	h.mu.Lock()
	if h.closed { // Close began during the handshake
		h.mu.Unlock()
		c.finish(wsframe.Close{Code: gwire.CloseServiceRestart, Reason: "service restart"})
		return
	}
	h.conns[c] = struct{}{}
	h.mu.Unlock()

	q := r.URL.Query()
	switch {
	case q.Has("v") && q.Get("v") != "10" && q.Get("v") != "9":
		c.finish(wsframe.Close{Code: gwire.CloseInvalidAPIVersion, Reason: "invalid API version"})
	case q.Has("encoding") && q.Get("encoding") != "json":
		c.finish(wsframe.Close{Code: gwire.CloseDecodeError, Reason: "unsupported encoding"})
	case q.Get("compress") != "" && q.Get("compress") != "zlib-stream":
		c.finish(wsframe.Close{Code: gwire.CloseDecodeError, Reason: "unsupported compression"})
	default:
		if q.Get("compress") == "zlib-stream" {
			tcp.Compress(wsframe.CompressStream) // before Hello: every message is compressed
		}
		// The connection runs on a goroutine of the hub's (Close waits for it), and ServeHTTP
		// returns: net/http then lets go of what it kept for the request while its handler ran
		// (its buffered writer, the request and its headers), which an idle connection would
		// otherwise hold for its whole life.
		served = true
		go func() {
			defer h.wg.Done()
			c.run()
		}()
	}
}

// resumeURL is READY's resume_gateway_url for a connection made by r.
func (h *Hub) resumeURL(r *http.Request) string {
	if h.cfg.ResumeURL != "" {
		return h.cfg.ResumeURL
	}
	scheme := "ws"
	if r.TLS != nil {
		scheme = "wss"
	}
	return scheme + "://" + r.Host + r.URL.Path
}

// writeError answers a plain HTTP request with the platform's JSON error body.
func writeError(w http.ResponseWriter, e *wire.APIError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}

// Close sends Reconnect (op 7) to every connection and closes it with gwire.CloseServiceRestart (1012),
// refuses new connections, forgets every session, and returns when every goroutine the hub
// started has ended. Connections that do not finish their close handshake within CloseGrace are
// cut. Calling Close again waits for the first call.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		close(h.closing)
		h.mu.Unlock()

		done := make(chan struct{})
		go func() { // owned by Close, which waits for it below
			h.wg.Wait()
			close(done)
		}()
		grace := time.NewTimer(h.cfg.CloseGrace)
		select {
		case <-done:
		case <-grace.C:
			h.cancel()
			h.mu.Lock()
			for c := range h.conns {
				c.cut()
			}
			h.mu.Unlock()
			<-done
		}
		grace.Stop()
		h.quiet.Stop()
		h.cancel()
		h.mu.Lock()
		clear(h.sessions)
		clear(h.byUser)
		h.mu.Unlock()
	})
}

// Dispatch sends the event (op 0, t = event, d = data encoded as JSON) to every session of the
// user: each live one at once, and each one that waits to be resumed when it resumes. Every
// session gives the event its next sequence number and keeps it for replay. Data that cannot be
// encoded is logged and dropped.
func (h *Hub) Dispatch(userID uint64, event string, data any) {
	h.dispatch([]uint64{userID}, 0, event, data)
}

// DispatchMany is Dispatch to each of userIDs (duplicates are sent once); data is encoded once.
func (h *Hub) DispatchMany(userIDs []uint64, event string, data any) {
	h.dispatch(userIDs, 0, event, data)
}

// DispatchApp is Dispatch restricted to the user's sessions identified with a token of the
// application appID (for example lobby events, which belong to one game). appID 0 sends nothing.
func (h *Hub) DispatchApp(appID, userID uint64, event string, data any) {
	h.DispatchAppMany(appID, []uint64{userID}, event, data)
}

// DispatchAppMany is DispatchApp to each of userIDs (duplicates are sent once); data is encoded
// once, however many users there are.
func (h *Hub) DispatchAppMany(appID uint64, userIDs []uint64, event string, data any) {
	if appID == 0 {
		return
	}
	h.dispatch(userIDs, appID, event, data)
}

// AppDispatch is one dispatch of DispatchAppEach.
type AppDispatch struct {
	UserIDs []uint64
	Event   string
	Data    any
}

// DispatchAppEach is DispatchAppMany for each of ds, in their order, together: pushed at once on a
// node alone, published as one message of the bus when they fit (busmsg.Encode) on a cluster.
func (h *Hub) DispatchAppEach(appID uint64, ds []AppDispatch) {
	if appID == 0 {
		return
	}
	if h.cfg.Bus == nil {
		h.push(h.appDispatches(appID, ds), 0)
		return
	}
	for _, msg := range h.group(appID, ds) {
		h.sendMsg(msg, ds[0].Event)
	}
}

// group encodes ds, dispatches of the application appID, as messages of the bus, in their
// order. A dispatch that cannot be encoded is left out (logged).
func (h *Hub) group(appID uint64, ds []AppDispatch) [][]byte {
	return h.encodeBus(h.appDispatches(appID, ds))
}

// appDispatches encodes ds, dispatches of the application appID, in their order. A dispatch
// that cannot be encoded is left out (logged).
func (h *Hub) appDispatches(appID uint64, ds []AppDispatch) []busmsg.Dispatch {
	bd := make([]busmsg.Dispatch, 0, len(ds))
	for _, d := range ds {
		if data, ok := h.encode(d.Event, d.Data); ok {
			bd = append(bd, busmsg.Dispatch{Users: d.UserIDs, Kind: busmsg.ToApp, App: appID, Event: d.Event, Data: data})
		}
	}
	return bd
}

// encodeBus encodes ds as messages of the bus (busmsg.Encode); one that cannot be is logged.
func (h *Hub) encodeBus(ds []busmsg.Dispatch) [][]byte {
	msgs, err := busmsg.Encode(ds, time.Now().UnixNano())
	if err != nil {
		h.log.Error("gateway: cannot be encoded for the bus", "err", err)
	}
	return msgs
}

// encode encodes a dispatch's data (wire.Encoded is shared, not copied); false (logged) if it cannot.
func (h *Hub) encode(event string, data any) ([]byte, bool) {
	if e, ok := data.(wire.Encoded); ok {
		return e, true
	}
	if a, ok := data.(wire.Appender); ok {
		return a.AppendJSON(nil), true
	}
	d, err := json.Marshal(data)
	if err != nil {
		h.log.Error("gateway: dispatch data cannot be encoded", "event", event, "err", err)
		return nil, false
	}
	return d, true
}

func (h *Hub) dispatch(userIDs []uint64, appID uint64, event string, data any) {
	h.dispatchTo(userIDs, event, data, filter{kind: busmsg.ToApp, app: appID})
}

// dispatchTo pushes the event to the sessions of userIDs (duplicates once) that f keeps, and
// gets it written. With a bus, the event is published instead, and every node (this one too)
// pushes it to its own sessions as it reads it from the bus (Deliver).
func (h *Hub) dispatchTo(userIDs []uint64, event string, data any, f filter) {
	d, ok := h.encode(event, data)
	if !ok {
		return
	}
	if h.cfg.Bus != nil {
		h.publish(userIDs, f, event, d)
		return
	}
	h.push([]busmsg.Dispatch{{Users: userIDs, Kind: f.kind, App: f.app, Intent: f.intent, Split: f.split,
		To: f.session, Event: event, Data: d}}, 0)
}

// push pushes encoded dispatches, in their order, to the sessions of their users (duplicates
// once) that their filters keep, and gets them written. The dispatches of bus message at (0:
// none) are numbered from it (busmsg.Seq) and skipped by a session already past them (it was
// resumed here with them); nothing this node pushes of its own comes between them.
func (h *Hub) push(ds []busmsg.Dispatch, at uint64) {
	evs := make([][]byte, len(ds))
	for i := range ds {
		evs[i] = wsframe.EventName(ds[i].Event)
	}
	live := make([]*conn, 0, 16) // on the stack for a small lobby's
	pushed := make([]int, len(ds))
	h.mu.Lock()
	now := h.cfg.Clock.Now()
	first := h.stamp + 1 // this push's dispatches are stamped from first on (session.stamp)
	for i := range ds {
		d, f := &ds[i], filterOf(&ds[i])
		h.stamp++
		for _, u := range d.Users {
			ss := h.byUser[u]
			for k := len(ss) - 1; k >= 0; k-- { // backwards: expireLocked may remove ss[k]
				s := ss[k]
				if s.stamp == h.stamp || h.expireLocked(s, now) || !f.keep(s) {
					continue // a user listed twice: its sessions have the dispatch
				}
				if at == 0 {
					s.Push(evs[i], d.Data, h.cfg.ReplayLimit)
				} else if seq := busmsg.Seq(at, i, len(ds)); seq > s.Seq() {
					s.PushSeq(seq, evs[i], d.Data, h.cfg.ReplayLimit)
				} else {
					continue
				}
				pushed[i]++
				if s.conn != nil && s.stamp < first { // written once for all of the push's
					live = append(live, s.conn)
				}
				s.stamp = h.stamp
			}
		}
	}
	h.mu.Unlock()
	for i, n := range pushed {
		h.rate.Add(n)
		h.stats.Dispatched(ds[i].Event, n)
	}
	h.deliver(live)
}

// maxWriteNow is the most connections a dispatch writes to itself (conn.flushNow); a dispatch to
// more wakes their loops, which write in parallel.
const maxWriteNow = 8

// deliver gets the dispatches just pushed to the connections' sessions written, in the order
// given: the dispatcher writes them itself when there are few, sparing each the hand-off to its
// connection's loop, which is most of a quiet service's latency.
// A connection serving one of its own requests is left for the request's answer.
func (h *Hub) deliver(conns []*conn) {
	now := len(conns) <= maxWriteNow
	for _, c := range conns {
		switch {
		case c.serving.Load():
		case now:
			c.flushNow(false)
		default:
			c.signal()
		}
	}
}

// Sessions returns how many sessions of the user are connected now (sessions waiting to be
// resumed are not counted).
func (h *Hub) Sessions(userID uint64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.byUser[userID] {
		if s.conn != nil {
			n++
		}
	}
	return n
}

// SessionInfo describes one of a user's gateway sessions, for operators.
type SessionInfo struct {
	AppID     uint64
	Since     time.Time // when it was identified
	Connected bool      // attached to a connection, not waiting to be resumed
}

// UserSessions describes the user's sessions on this hub, the oldest first.
func (h *Hub) UserSessions(userID uint64) []SessionInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]SessionInfo, 0, len(h.byUser[userID]))
	for _, s := range h.byUser[userID] {
		out = append(out, SessionInfo{AppID: s.who.AppID, Since: s.since, Connected: s.conn != nil})
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return a.Since.Compare(b.Since) })
	return out
}

// OnlineApp tells whether the user has a connected session identified with a token of the
// application, on this node or (with a bus) another.
func (h *Hub) OnlineApp(appID, userID uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.liveLocked(appID, userID) > 0 || (appID != 0 && h.remoteLiveLocked(appID, userID) > 0)
}

// liveLocked counts the user's connected sessions of the application.
func (h *Hub) liveLocked(appID, userID uint64) int {
	n := 0
	for _, s := range h.byUser[userID] {
		if s.conn != nil && s.who.AppID == appID {
			n++
		}
	}
	return n
}

// connection reports a change of the user's live sessions of an application to OnConnection
// (call without the lock).
func (h *Hub) connection(who Identity, connected bool) {
	if f := h.cfg.OnConnection; f != nil {
		f(who, connected)
	}
}

// Online tells whether the user has at least one connected session, on this node or (with a
// bus) another.
func (h *Hub) Online(userID uint64) bool {
	if h.Sessions(userID) > 0 {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.remoteLiveLocked(0, userID) > 0
}

// EndSessions ends every session of the user, for example when the user's tokens are revoked:
// connected ones are closed with gwire.CloseAuthenticationFailed, and none can be resumed.
func (h *Hub) EndSessions(userID uint64) { h.endSessions(busmsg.EndNote{User: userID}) }

// EndAppSessions ends the user's sessions of one application, as EndSessions does, for example
// when the user's authorization of that application is revoked.
func (h *Hub) EndAppSessions(appID, userID uint64) {
	if appID == 0 {
		return
	}
	h.endSessions(busmsg.EndNote{User: userID, App: appID})
}

// EndGrantSessions ends the user's sessions that identified, or last resumed, with an access
// token of grant: the grant was revoked because its authorization code was replayed or one of
// its refresh tokens reused (RFC 9700 4.14.2). They close with 4004, as a revocation does.
func (h *Hub) EndGrantSessions(userID, grant uint64) {
	if grant == 0 {
		return
	}
	h.endSessions(busmsg.EndNote{User: userID, Grant: grant})
}

// EndDisallowedSessions ends the bot user's live sessions that use any of intents, on every
// node, for example when its application loses a privileged intent's flag: they are closed with
// gwire.CloseDisallowedIntents (a final close) and cannot be resumed. A session waiting to be
// resumed is left to its Resume, which checks its intents again.
func (h *Hub) EndDisallowedSessions(userID, intents uint64) {
	if intents == 0 {
		return
	}
	h.endSessions(busmsg.EndNote{User: userID, Intents: intents})
}

// endSessions ends the user's sessions that match x, on every node: with a bus, each node
// ends its own as it reads the request from the bus.
func (h *Hub) endSessions(x busmsg.EndNote) {
	if h.cfg.Bus != nil {
		h.send(busmsg.Envelope{Type: busmsg.TypeEnd, End: &x})
		return
	}
	h.endSessionsLocal(&x)
}

// endSessionsLocal ends the user's sessions of this node that x matches, closing connected ones
// with x's close code.
func (h *Hub) endSessionsLocal(x *busmsg.EndNote) {
	c := x.Closing()
	var notes []busmsg.SessionNote
	h.mu.Lock()
	ss := h.byUser[x.User]
	for k := len(ss) - 1; k >= 0; k-- { // backwards: removeLocked removes ss[k]
		s := ss[k]
		if !endMatch(x, s) {
			continue
		}
		if s.conn != nil {
			s.conn.kickWith(c)
		}
		h.removeLocked(s)
		notes = append(notes, noteOf(s, busmsg.NoteEnded))
	}
	h.mu.Unlock()
	for _, n := range notes {
		h.note(n)
	}
}

// addLocked registers a new session.
func (h *Hub) addLocked(s *session) {
	h.sessions[s.id] = s
	h.byUser[s.who.UserID] = append(h.byUser[s.who.UserID], s)
}

// removeLocked forgets a session (no-op when it is already gone).
func (h *Hub) removeLocked(s *session) {
	if h.sessions[s.id] != s {
		return
	}
	delete(h.sessions, s.id)
	ss := h.byUser[s.who.UserID]
	if i := slices.Index(ss, s); i >= 0 && len(ss) == 1 {
		delete(h.byUser, s.who.UserID)
	} else if i >= 0 { // those after it move down: a loop going backwards has seen them
		h.byUser[s.who.UserID] = slices.Delete(ss, i, i+1)
	}
}

// expireLocked removes s and returns true when it is detached and its resume window has passed.
func (h *Hub) expireLocked(s *session, now time.Time) bool {
	if s.conn != nil || now.Before(s.expires) {
		return false
	}
	h.removeLocked(s)
	return true
}

// sweepLocked removes expired sessions, at most every half resume window.
func (h *Hub) sweepLocked(now time.Time) {
	if now.Sub(h.lastSweep) < h.cfg.ResumeWindow/2 && !now.Before(h.lastSweep) {
		return
	}
	h.lastSweep = now
	for _, s := range h.sessions {
		h.expireLocked(s, now)
	}
	for id, n := range h.remote { // other nodes' sessions past their resume window
		if n.State == busmsg.NoteDetached && !now.Before(n.Expires) {
			h.forgetRemoteLocked(id)
		}
	}
}

// maxScopeSets bounds scopeSets: past it, a session keeps its own slice.
const maxScopeSets = 256

// scopeSets shares one slice of scopes among the sessions whose tokens grant the same ones
// (almost all of a game's do): a slice per session cost a few hundred bytes each. The slices
// are read, never changed.
type scopeSets struct {
	mu   sync.Mutex
	sets map[string][]string
}

// intern returns the slice kept for the set of scopes, keeping this one if none is.
func (s *scopeSets) intern(scopes []string) []string {
	if len(scopes) == 0 {
		return scopes
	}
	k := strings.Join(scopes, " ")
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.sets[k]; ok {
		return v
	}
	if s.sets == nil {
		s.sets = map[string][]string{}
	}
	if len(s.sets) < maxScopeSets {
		s.sets[k] = scopes
	}
	return scopes
}

// hasGatewayScope tells whether granted scopes allow a gateway connection: gateway.connect,
// directly or through sdk.social_layer or sdk.social_layer_presence (rule SC-3).
func hasGatewayScope(granted []string) bool {
	return slices.Contains(scopes.Expand(granted), scopes.GatewayConnect)
}
