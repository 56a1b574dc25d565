package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sdkpp/server/token"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/admin"
	"sdkpp/server/bus"
	"sdkpp/server/console"
	"sdkpp/server/counters"
	"sdkpp/server/devseed"
	"sdkpp/server/dms"
	"sdkpp/server/extauth"
	"sdkpp/server/gateway"
	"sdkpp/server/guildvoice"
	"sdkpp/server/httpx"
	"sdkpp/server/interactions"
	"sdkpp/server/internal/seqwait"
	"sdkpp/server/lobbies"
	"sdkpp/server/loginthrottle"
	"sdkpp/server/metrics"
	"sdkpp/server/oauth"
	"sdkpp/server/oidc"
	"sdkpp/server/order"
	"sdkpp/server/partner"
	"sdkpp/server/periodic"
	"sdkpp/server/presence"
	"sdkpp/server/ratelimit"
	"sdkpp/server/relationships"
	"sdkpp/server/relay"
	"sdkpp/server/search"
	"sdkpp/server/signedurl"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/server/voice"
	"sdkpp/server/voicestatus"
	"sdkpp/server/webhook"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// DefaultAddr is the listen address when Config.Addr is empty.
const DefaultAddr = wire.DefaultAddr

// APIVersionPath is the versioned API base path; "/api" without a version is accepted too.
const APIVersionPath = wire.APIPrefix

// Config configures a Server.
type Config struct {
	Addr      string // listen address; default 127.0.0.1:7710; "127.0.0.1:0" picks a free port
	PublicURL string // base URL clients use; default http://<listen address>
	DataDir   string // SQLite database directory; "" = in-memory
	// Store is the store URL (store.Open): "" or sqlite:[DIR] keeps SQLite in DataDir (or DIR);
	// postgres://... is PostgreSQL, shared by the nodes of a cluster.
	Store string
	// NodeID (0 to 1023) goes into every id this node makes; on PostgreSQL a second live node
	// with the same id is refused at start.
	NodeID int
	// Bus is the URL of the NATS server (nats://host:port) that connects the nodes of a
	// cluster (package bus); it needs a PostgreSQL Store. "": one node, no bus.
	Bus string
	Dev bool // seed the dev applications and users and enable the /dev endpoints
	// AccessTokenTTL is the lifetime of the OAuth2 access tokens the token endpoint issues; 0 is
	// the platform's 7 days (expires_in 604800). Tests shorten it.
	AccessTokenTTL time.Duration
	// GatewayHeartbeat is the gateway's heartbeat interval; 0 is the platform's 41250 ms.
	GatewayHeartbeat time.Duration
	// WrapBus, when set, wraps the node's connection to the bus as the gateway uses it: tests
	// cut the path between a commit and its publish with it.
	WrapBus func(gateway.Bus) gateway.Bus
	// IdentifyWindow is max_concurrency's window: a bot Identifies at most once per window in
	// each rate-limit bucket (shard id modulo its max_concurrency), on all nodes together. 0 is
	// the platform's 5 s; a negative window lifts the limit (tests whose bots reconnect at once).
	IdentifyWindow time.Duration
	// DevCredentialsFile, in dev mode, receives the dev credentials as JSON when the server starts.
	DevCredentialsFile string
	Clock              clock.Clock  // default: the machine's clock
	Logger             *slog.Logger // default: slog.Default()
	// WebhookURL, in dev mode, overrides the main dev application's webhook URL.
	WebhookURL     string
	WebhookBackoff webhook.Backoff // retry spacing of webhook deliveries
	WebhookClient  *http.Client    // default: 10 s timeout, redirects not followed
	// OIDCAllowLoopbackForTests admits https OIDC issuers on loopback IPs and localhost, so that
	// tests can run their own TLS issuer. Never set it in production (rule AU-9).
	OIDCAllowLoopbackForTests bool
	// OIDCHTTPClient fetches issuer discovery and key sets (for example one that trusts a test
	// CA). Redirects are never followed whatever its policy.
	OIDCHTTPClient *http.Client
	// ExternalVerifiers adds or replaces external-credential verifiers by external_auth_type; a nil
	// value removes the type. Dev mode installs dev verifiers for the provider types.
	ExternalVerifiers map[string]extauth.Verifier
	// RateLimits sets the HTTP API's rate limits (package ratelimit); the zero value takes the
	// platform-like defaults.
	RateLimits ratelimit.Config
	// VoiceAddr is the UDP address the voice relay listens on; default the host of Addr with
	// port 0 (a free port). VoiceEndpoint is that address as clients reach it (host:port, sent
	// in VOICE_SERVER_UPDATE); default the relay's address, with the public URL's host when the
	// relay listens on every interface.
	VoiceAddr, VoiceEndpoint string
	// NoGatewayRequests turns off API requests over the gateway (op 100, an sdkpp extension):
	// READY does not offer them, and SDKs send everything over HTTP.
	NoGatewayRequests bool
	// OnTargetUsersJob, when set, is called as a target-users job of an invite starts and ends
	// (invites.Service.OnTargetUsersJob): tests wait for a job with it, or hold it in progress.
	OnTargetUsersJob func(ctx context.Context, code string, status int)
	// ReadHeaderTimeout bounds reading a request's header, ReadTimeout reading the whole
	// request with its body (a body that never finishes does not hold its connection), and
	// IdleTimeout a keep-alive connection's wait for its next request; zero takes
	// DefaultReadHeaderTimeout, DefaultReadTimeout and DefaultIdleTimeout. They bound the
	// gateway's WebSocket connections only until the upgrade.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MetricsAddr, when set, is the address of a listener of its own that serves Prometheus
	// metrics at /metrics (package metrics); "127.0.0.1:0" picks a free port (MetricsURL).
	// Empty: no metrics are kept.
	MetricsAddr string
	// NodeHeartbeat is how often the node writes its row in the store's node registry (the
	// console's cluster page shows a node down after DownHeartbeats missed); 0 is
	// DefaultNodeHeartbeat.
	NodeHeartbeat time.Duration
}

// DefaultNodeHeartbeat is the node registry's heartbeat when Config.NodeHeartbeat is zero.
const DefaultNodeHeartbeat = 10 * time.Second

// DownHeartbeats is how many heartbeats a node may miss before the console shows it down.
const DownHeartbeats = 3

// OperatorSessionPrune is how often expired operator console sessions are deleted.
const OperatorSessionPrune = 15 * time.Minute

// AttachmentSweep is how often the bytes of uploads that no message took (the node stopped
// between storing them and writing the message) are removed, and how old they must be.
const AttachmentSweep = time.Hour

// Defaults of the HTTP server's timeouts (Config).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// DevCredentials is the dev credentials file's content.
type DevCredentials = wire.DevCredentials

// Server is the platform service.
type Server struct {
	cfg       Config
	apiRoutes func() []string // the API's route patterns, relative to the API base
	log       *slog.Logger
	store     store.Store
	db        *store.DB   // the store, for what only the database offers (its query observer)
	storeKind string      // the store's database: sqlite or postgres
	bus       *bus.Bus    // the cluster's bus; nil for a node alone
	busRead   seqwait.Seq // the sequence number of the last message the hub read from the bus
	orderLock order.Lock  // the cluster's order lock (package order); nil for a node alone
	ids       *snowflake.Generator
	// counter counts the windows of the limits: in the store where nodes share it (package
	// counters).
	counter counters.Counter
	// failed receives why the node must stop (Failed).
	failed     chan error
	accounts   *accounts.Service
	dispatcher *webhook.Dispatcher
	seeder     *devseed.Seeder
	partner    *partner.Handler
	hub        *gateway.Hub
	lobbies    *lobbies.Service
	gatewayAPI http.Handler       // the API (paths below its base) for requests over the gateway; set by routes
	gatewayLog *slog.Logger       // the request log of gatewayAPI, and of the gateway's lobby messages (gatewaySend)
	limiter    *ratelimit.Limiter // the API's rate limits; nil when they are off
	social     *relationships.Service
	presence   *presence.Service
	creds      wire.DevCredentials
	relay      *relay.Relay   // the voice media relay; from Start
	voice      *voice.Service // the voice calls relayed by this node
	// voiceCluster routes the calls between the nodes of a cluster (nil for a node alone);
	// voiceCalls is it, or voice.
	voiceCluster *voice.Cluster
	voiceCalls   lobbyCalls
	// guildVoice keeps the voice states of guild voice channels; set by routes.
	guildVoice *guildvoice.Service
	// voiceStatus serves voice channel statuses and Request Channel Info; set by routes.
	voiceStatus *voicestatus.Service
	// search indexes guilds' messages for Search Guild Messages; set by routes.
	search *search.Indexer
	// guilds serve the guild resources; its invites own the target-users jobs; set by routes.
	guilds *guildServices

	// metrics is the service's instrumentation; nil when Config.MetricsAddr is empty.
	metrics *metrics.Metrics
	// jobs runs the periodic jobs (the node heartbeat, pruning) from Start to Close.
	jobs *periodic.Runner
	// startedAt is when Start began serving, for the node registry.
	startedAt time.Time

	mu       sync.Mutex
	started  bool
	closed   bool
	url      string
	listener net.Listener
	http     *http.Server
	served   chan struct{}
	// metricsHTTP serves metrics on metricsURL until Close; nil without metrics.
	metricsHTTP   *http.Server
	metricsURL    string
	metricsServed chan struct{}
}

// New opens the store (applying migrations), seeds dev data in dev mode, and prepares the
// service. It does not listen yet: call Start.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	for _, t := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout}, {&cfg.ReadTimeout, DefaultReadTimeout}, {&cfg.IdleTimeout, DefaultIdleTimeout}} {
		if *t.v <= 0 {
			*t.v = t.def
		}
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server: PublicURL %q is not an http(s) URL", cfg.PublicURL)
		}
		cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	}
	for name, v := range map[string]string{"VoiceAddr": cfg.VoiceAddr, "VoiceEndpoint": cfg.VoiceEndpoint} {
		if v == "" {
			continue
		}
		if host, port, err := net.SplitHostPort(v); err != nil || port == "" || (name == "VoiceEndpoint" && host == "") {
			return nil, fmt.Errorf("server: %s %q is not a host:port UDP address", name, v)
		}
	}
	ctx := context.Background()
	if cfg.NodeID < 0 || cfg.NodeID > snowflake.MaxNode {
		return nil, fmt.Errorf("server: node id %d is not in 0..%d", cfg.NodeID, snowflake.MaxNode)
	}
	st, err := store.Open(ctx, cfg.Store, cfg.DataDir, cfg.NodeID)
	if err != nil {
		return nil, err
	}
	floor, err := st.MaxID(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	if cfg.NodeHeartbeat <= 0 {
		cfg.NodeHeartbeat = DefaultNodeHeartbeat
	}
	s := &Server{cfg: cfg, log: cfg.Logger, store: st, db: st, storeKind: st.Dialect(), ids: snowflake.NewNode(cfg.Clock, floor, cfg.NodeID),
		counter: counters.For(st), failed: make(chan error, 1)}
	// PostgreSQL: the node id's lock goes with a database session; should it drop, the node
	// takes the id again, or stops when another node has it (it would make that node's ids).
	// Database sessions drop in real time, whatever the service's clock says.
	st.WatchNode(clock.Real{}, NodeLockCheck, s.log.With("component", "store"), func(err error) { s.failed <- err })
	if cfg.Bus != "" {
		if s.storeKind != "postgres" {
			st.Close()
			return nil, errors.New("server: a bus connects nodes that share a PostgreSQL store: set Store to a postgres:// URL")
		}
		s.orderLock = s.lockRelaying(st)
		if s.bus, err = bus.Connect(ctx, cfg.Bus, bus.Options{Node: cfg.NodeID, Logger: s.log.With("component", "bus")}); err != nil {
			st.Close()
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	s.dispatcher = &webhook.Dispatcher{Store: st, Clock: cfg.Clock, Logger: s.log.With("component", "webhook"),
		Client: cfg.WebhookClient, Backoff: cfg.WebhookBackoff}
	s.lobbies = &lobbies.Service{Store: st, Clock: cfg.Clock, IDs: s.ids,
		Logger: s.log.With("component", "lobbies"), Kick: s.dispatcher.Kick, Order: s.orderLock}
	if s.storeKind == "postgres" { // whose CacheEpoch keeps nothing: other processes write it
		s.lobbies.Epoch, s.lobbies.EpochChecked = st.SharedEpoch, true
		s.lobbies.LockLinger = lobbyLockLinger
	}
	s.accounts = &accounts.Service{Store: st, Clock: cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "accounts"),
		Kick: s.dispatcher.Kick}
	s.seeder = &devseed.Seeder{Store: st, IDs: s.ids, Now: cfg.Clock.Now}
	if cfg.Dev {
		if s.creds, err = s.seeder.Seed(ctx, cfg.WebhookURL); err != nil {
			if s.bus != nil {
				s.bus.Close()
			}
			st.Close()
			return nil, fmt.Errorf("server: dev seed: %w", err)
		}
	}
	return s, nil
}

// Start listens and serves; it returns once the server accepts connections. In dev mode it then
// writes the dev credentials file.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("server: Start called twice or after Close")
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen: %w", err)
	}
	s.url = s.cfg.PublicURL
	if s.url == "" {
		s.url = "http://" + ln.Addr().String()
	}
	if err := s.startRelay(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	var mln net.Listener
	if s.cfg.MetricsAddr != "" {
		if mln, err = net.Listen("tcp", s.cfg.MetricsAddr); err != nil {
			ln.Close()
			s.relay.Close()
			return fmt.Errorf("server: metrics listen: %w", err)
		}
		s.metrics = metrics.New(strconv.Itoa(s.cfg.NodeID))
		s.db.ObserveQueries(s.metrics.StoreQuery)
		s.dispatcher.ObserveJob, s.lobbies.ObserveJob = s.metrics.JobRun, s.metrics.JobRun
	}
	handler, err := s.routes()
	if err != nil {
		ln.Close()
		s.relay.Close()
		if mln != nil {
			mln.Close()
		}
		return err
	}
	if mln != nil {
		s.serveMetrics(mln)
	}
	if s.bus != nil { // before serving: every dispatch from now on reaches this node's sessions
		s.voiceCluster.Start()
		if err := s.joinBus(); err != nil {
			s.voiceCluster.Close()
			ln.Close()
			s.relay.Close()
			if mln != nil {
				mln.Close()
			}
			return fmt.Errorf("server: %w", err)
		}
	}
	if s.metrics != nil {
		s.guilds.invites.ObserveJob = s.metrics.JobRun
	}
	s.guilds.invites.StartJobs() // before serving: requests queue its jobs
	s.listener = ln
	// The gateway clears the deadlines these timeouts set on a connection it upgrades.
	s.http, s.served = s.serve(ln, handler, "server")
	s.dispatcher.Start()
	s.lobbies.Start()
	s.startPeriodic()
	s.started = true
	s.log.Info("sdkpp-server listening", "addr", ln.Addr().String(), "url", s.url, "dev", s.cfg.Dev,
		"data_dir", s.cfg.DataDir != "", "store", s.storeKind, "node_id", s.cfg.NodeID, "bus", s.bus != nil)
	if s.cfg.Dev && s.cfg.DevCredentialsFile != "" {
		if err := s.writeCredentials(); err != nil {
			return err
		}
	}
	return nil
}

// routes builds the handler tree.
func (s *Server) routes() (http.Handler, error) {
	provider, err := oidc.NewProvider(context.Background(), s.store, s.url)
	if err != nil {
		return nil, err
	}
	oidcOpts := oidc.Options{HTTPClient: s.cfg.OIDCHTTPClient, AllowLoopback: s.cfg.OIDCAllowLoopbackForTests}
	external := extauth.Standard(oidcOpts, s.cfg.Dev, s.cfg.ExternalVerifiers)
	gs := s.newGuildServices()
	if gs.messages.URLs, err = signedurl.New(context.Background(), s.store, s.cfg.Clock); err != nil {
		return nil, err
	}
	s.guilds = gs
	oa := &oauth.Handler{Store: s.store, Clock: s.cfg.Clock, Logger: s.log.With("component", "oauth"), Logins: oauth.NewLoginThrottle(s.sharedFailures()),
		Accounts: s.accounts, Provider: provider, External: external, PublicURL: s.url, AccessTTL: s.cfg.AccessTokenTTL,
		Invites: gs.invites}
	s.partner = &partner.Handler{Store: s.store, Clock: s.cfg.Clock, Logger: s.log.With("component", "partner"),
		Accounts: s.accounts, Provider: provider, External: external, OIDC: oidcOpts}
	us := &users.Handler{Store: s.store, Clock: s.cfg.Clock, Logger: s.log.With("component", "users")}
	s.guildVoice = &guildvoice.Service{Store: s.store, Clock: s.cfg.Clock, Events: gs.base, Logger: s.log.With("component", "guildvoice")}
	gs.guilds.OnMemberLeft, gs.guilds.VoiceStates = s.guildVoice.MemberLeft, s.guildVoice.States
	s.hub = s.newHub()
	gs.base.Bots = s.hub
	s.guildVoice.Hub = s.hub
	s.lobbies.Notifier = lobbyNotifier{hub: s.hub, voice: s.voiceCalls}
	directMessages := &dms.Service{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "dms"),
		Kick: s.dispatcher.Kick, Notifier: s.hub, Order: s.orderLock}
	s.lobbies.Connected = s.hub.OnlineApp
	s.wireSocial()
	// A revoked authorization ends the user's gateway sessions of that game at once (rule AU-7).
	s.accounts.OnRevoked = func(r accounts.Revoked) { s.hub.EndAppSessions(r.AppID, r.UserID) }
	// So does a grant revoked for a replayed code or a reused refresh token (RFC 9700 4.14.2).
	oa.OnGrantRevoked = func(g store.Grant) { s.hub.EndGrantSessions(g.UserID, g.ID) }
	// Profile updates after a rename, merge, unmerge or ban go through the outbox with their
	// change (relationships.Service.ProfileTx).
	s.accounts.ProfileTx, us.ProfileTx = s.social.ProfileTx, s.social.ProfileTx

	api, root := httpx.NewMux(), http.NewServeMux()
	s.apiRoutes = api.Patterns
	oa.RegisterAPI(api)
	s.partner.Register(api)
	us.Register(api)
	s.lobbies.Register(api)
	gs.register(api, root, directMessages.Register) // guild channels share the DM message routes
	ix := &interactions.Service{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids,
		Logger: s.log.With("component", "interactions"), Notifier: s.hub, Messages: gs.messages}
	ix.Register(api)
	ix.RegisterInteractions(api)
	ix.RegisterWebhooks(api)
	s.social.Register(api)
	s.presence.Register(api)
	as := s.registerUsersApps(api, gs.base)
	api.HandleFunc("GET /oauth2/keys", provider.ServeKeys)
	api.HandleFunc("GET /gateway", s.gatewayURL)
	api.HandleFunc("GET /gateway/bot", s.gatewayBot)
	if s.cfg.Dev {
		ad := &admin.Handler{Token: s.creds.AdminToken, Store: s.store, Clock: s.cfg.Clock,
			Logger: s.log.With("component", "admin"), Accounts: s.accounts, CreateGuild: s.createGuild,
			Apps: as}
		ad.Register(api)
	}

	oa.RegisterWeb(root)
	root.HandleFunc("GET /healthz", s.healthz)
	root.HandleFunc("GET /readyz", s.readyz)
	s.console().Register(root)
	root.Handle("GET "+GatewayPath, s.hub)
	// Client libraries append their query to the URL of GET /gateway, some after a slash.
	root.Handle("GET "+GatewayPath+"/{$}", s.hub)
	root.HandleFunc("GET /.well-known/openid-configuration", provider.ServeDiscovery)
	root.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "sdkpp platform service\nAPI: %s%s\n", s.url, APIVersionPath)
	})
	limits := s.cfg.RateLimits
	// Checked at every request: where nodes share the store, each takes its share of a window
	// at once (counters.Leased) instead of writing to the store at every request.
	limits.Counter = counters.ForRequests(s.store)
	limits.Identify = callerIdentity(token.Auth{Store: s.store, Clock: s.cfg.Clock})
	limiter := ratelimit.New(limits, s.cfg.Clock)
	if !limits.Disabled {
		s.limiter = limiter
	}
	apiHandler := httpx.Admitted(api.ServeMux, func(r *http.Request, pattern string) { metrics.SetRoute(r, apiRoute(pattern)) },
		limiter.Admit, s.log)
	s.gatewayLog = s.log.With("component", "gateway-api")
	s.gatewayAPI = s.metrics.HTTP("gateway", httpx.Logging(s.gatewayLog, apiHandler))
	root.Handle("/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/api")
		for _, v := range []string{"/v10", "/v9"} { // both versions serve the same API
			if strings.HasPrefix(rest, v+"/") {
				rest = strings.TrimPrefix(rest, v)
				break
			}
		}
		apiHandler.ServeHTTP(w, httpx.WithPath(r, rest))
	}))
	// Last, so that no error above leaves its goroutine running; Close stops it.
	s.search = search.New(search.Options{Store: s.store, Clock: s.cfg.Clock, Logger: s.log.With("component", "search")})
	gs.messages.Search = s.search
	return s.metrics.HTTP("http", httpx.Logging(s.log.With("component", "http"),
		httpx.OptionalPrefix(ProxyPrefix, httpx.JSONErrors(root, metrics.SetRoute, s.log)))), nil
}

// console is the operator console of this node (package console).
func (s *Server) console() *console.Handler {
	return &console.Handler{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "console"),
		Accounts: s.accounts, Logins: &loginthrottle.Throttle{Shared: s.sharedFailures()}, PublicURL: s.url, NodeID: s.cfg.NodeID,
		Sessions: s.hub.UserSessions, EndSessions: s.hub.EndSessions, Kick: s.dispatcher.Kick,
		Self: s.nodeRow, NodeDownAfter: DownHeartbeats * s.cfg.NodeHeartbeat}
}

// nodeRow is this node's row of the node registry as it is now.
func (s *Server) nodeRow() store.Node {
	calls, _ := s.voice.Stats()
	addr := s.url // behind a balancer every node's public URL is the balancer's: show its own
	if s.listener != nil {
		addr = "http://" + s.listener.Addr().String()
	}
	return store.Node{ID: s.cfg.NodeID, Address: addr, StartedAt: s.startedAt, Sessions: s.hub.Stats().Sessions,
		Calls: calls, UpdatedAt: s.cfg.Clock.Now(), Life: s.hub.Life()}
}

// lobbyLockLinger is how long a node keeps a lobby's order lock after a group of its messages,
// for its next group (lobbies.Service.LockLinger): a player's messages a round trip apart go under
// one hold, and another node waits at most this long beyond the holder's last group.
const lobbyLockLinger = 2 * time.Millisecond

// OutboxLease is how old a dispatch left in the outbox (its node died between its commit and
// its publish) must be before any node relays it, when no change under its order lock came
// since to relay it first: well inside the bus's duplicate window (a minute), so that one
// its node published after all is stored once.
const OutboxLease = 10 * time.Second

// lockRelaying is st's order lock (store.DB.OrderLockAll) that, once taken, first publishes what
// the last holder staged and left unpublished (it died between its commit and its publish;
// gateway.Hub.Relay), so that the events under the key keep their commit order; while that
// cannot be published (the bus refuses), the lock is refused too.
func (s *Server) lockRelaying(st *store.DB) order.Lock {
	return func(ctx context.Context, keys []string, last func() uint64) (order.Held, error) {
		h, err := st.OrderLockAll(ctx, keys, last)
		if err != nil {
			return order.Held{}, err
		}
		if len(h.Left) > 0 {
			staged := make([]gateway.Staged, len(h.Left))
			for i, e := range h.Left {
				staged[i] = gateway.Staged{ID: e.ID, Data: e.Data}
			}
			if !s.hub.Relay(staged) {
				h.Unlock(s.hub.Published())
				return order.Held{}, fmt.Errorf("server: order lock %v: what its last holder left cannot be published yet", keys)
			}
		}
		// The release deletes, in its transaction, what was published under the lock.
		return order.Held{Floor: h.Floor, Store: h.Store, Release: func() { h.Unlock(s.hub.Published()) }}, nil
	}
}

// relayOutbox relays the dispatches of the order locks that no change took since their node
// left them in the outbox (past OutboxLease): it takes each such lock, which relays them.
func (s *Server) relayOutbox(ctx context.Context) error {
	keys, err := s.store.OutboxKeys(ctx, s.cfg.Clock.Now().Add(-OutboxLease))
	if err != nil {
		return err
	}
	for _, k := range keys {
		held, err := order.Hold(ctx, s.orderLock, k, nil, s.store)
		if err != nil {
			return err
		}
		held.Release()
	}
	return nil
}

// watchNodes finds the nodes of the registry that missed DownHeartbeats heartbeats (as the
// console's cluster page marks them down) and, for each one this node claims first, tells the
// cluster that its sessions lost their connections (gateway.Hub.NodeDown): their users go
// offline everywhere unless they resumed elsewhere, and their lobby and voice states follow.
func (s *Server) watchNodes(ctx context.Context) error {
	rows, err := s.store.ListNodes(ctx)
	if err != nil {
		return err
	}
	now := s.cfg.Clock.Now()
	for _, n := range rows {
		if n.ID == s.cfg.NodeID || n.DownBy != 0 || now.Sub(n.UpdatedAt) < DownHeartbeats*s.cfg.NodeHeartbeat {
			continue
		}
		won, err := s.store.ClaimDownNode(ctx, n.ID, n.UpdatedAt, s.cfg.NodeID)
		if err != nil {
			return err
		}
		if won {
			s.log.Warn("node down: its sessions lost their connections", "node", n.ID, "last_heartbeat", n.UpdatedAt)
			s.hub.NodeDown(n.ID, n.Life)
		}
	}
	return nil
}

// startPeriodic starts the periodic jobs: the node registry's heartbeat, the pruning of expired
// operator sessions and the sweep of uploads no message took, each run observed by the metrics.
func (s *Server) startPeriodic() {
	s.startedAt = s.cfg.Clock.Now()
	s.jobs = &periodic.Runner{Clock: s.cfg.Clock, Logger: s.log.With("component", "periodic")}
	if s.metrics != nil {
		s.jobs.Observe = s.metrics.JobRun
	}
	s.jobs.Start(
		periodic.Job{Name: "node_heartbeat", Every: s.cfg.NodeHeartbeat, Run: func(ctx context.Context) error {
			n := s.nodeRow()
			return s.store.PutNode(ctx, &n)
		}},
		periodic.Job{Name: "operator_session_prune", Every: OperatorSessionPrune, Run: func(ctx context.Context) error {
			_, err := console.PruneSessions(ctx, s.store, s.cfg.Clock.Now())
			return err
		}},
		periodic.Job{Name: "attachment_sweep", Every: AttachmentSweep, Run: func(ctx context.Context) error {
			return s.store.SweepAttachmentChunks(ctx, snowflake.At(s.cfg.Clock.Now().Add(-AttachmentSweep)))
		}})
	if s.bus != nil {
		s.jobs.Start(periodic.Job{Name: "node_watch", Every: s.cfg.NodeHeartbeat, Run: s.watchNodes},
			periodic.Job{Name: "outbox_relay", Every: OutboxLease, Run: s.relayOutbox})
	}
}

// InviteJobPoll is how often a node sharing its store looks for target-users jobs that another
// node left (package invites).
const InviteJobPoll = 10 * time.Second

// NodeLockCheck is how often a node on PostgreSQL checks that it still holds its node id.
const NodeLockCheck = 5 * time.Second

// Failed receives, once, why the node must stop serving: another node took its node id while
// the database session holding it had dropped. The caller then closes the server.
func (s *Server) Failed() <-chan error { return s.failed }

// sharedFailures is where the sign-in throttles keep their failures: the store when other nodes
// share it, so that one guesser is locked on every node; nil (this node's memory) otherwise.
func (s *Server) sharedFailures() loginthrottle.Failures {
	if s.store.Shared() {
		return s.store
	}
	return nil
}

// callerIdentity keys the rate limits on who a request authenticates as: a user in an application
// (all of its tokens, however the header is written), or an application's bot; "" when the
// credential is not valid.
func callerIdentity(auth token.Auth) func(ctx context.Context, authorization string) string {
	return func(ctx context.Context, authorization string) string {
		if t, err := auth.BearerOf(ctx, authorization); err == nil {
			return "user:" + strconv.FormatUint(t.UserID, 10) + ":" + strconv.FormatUint(t.AppID, 10)
		}
		if app, err := auth.BotOf(ctx, authorization); err == nil {
			return "bot:" + strconv.FormatUint(app.ID, 10)
		}
		return ""
	}
}

// apiRoute is the metrics' route label of an API pattern, which is relative to the API base:
// "POST /lobbies/{lobby_id}/messages" is "POST /api/lobbies/{lobby_id}/messages".
func apiRoute(pattern string) string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return "/api" + pattern
	}
	return method + " /api" + path
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.store.Ping(r.Context()); err != nil {
		httpx.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unavailable"})
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// busCatchUp bounds how long a starting node reads what the bus holds before it serves.
const busCatchUp = time.Minute

// joinBus subscribes the hub to the bus from the oldest message the bus holds, so that it knows
// the other nodes' sessions (which a player may resume here), waits until it has read up to the
// bus's end, and tells the other nodes that this node started.
func (s *Server) joinBus() error {
	ctx, cancel := context.WithTimeout(context.Background(), busCatchUp)
	defer cancel()
	last, err := s.bus.Last(ctx)
	if err != nil {
		return err
	}
	if err := s.bus.Subscribe(ctx, 0, func(seq uint64, msg []byte) {
		s.hub.Deliver(seq, msg)
		s.busRead.Advance(seq)
	}); err != nil {
		return err
	}
	if err := s.busRead.Wait(ctx, last); err != nil {
		return fmt.Errorf("reading the bus up to %d: %w", last, err)
	}
	s.hub.Announce()
	return nil
}

// catchUpTimeout bounds catchUp's wait.
const catchUpTimeout = 2 * time.Second

// catchUp returns once this node has read the bus up to where it ended when catchUp was called:
// what the other nodes shared before then is known here.
func (s *Server) catchUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	last, err := s.bus.Last(ctx)
	if err != nil {
		return err
	}
	if err := s.busRead.Wait(ctx, last); err != nil {
		return fmt.Errorf("reading the bus up to %d: %w", last, err)
	}
	return nil
}

// Readiness is the body of GET /readyz: whether this node should be sent traffic, and the state
// of each thing it needs.
type Readiness struct {
	Status string `json:"status"` // "ready" or "not ready"
	Store  string `json:"store"`  // "ok" or "unavailable"
	// Bus is "ok", "unavailable", or "none" for a node alone.
	Bus string `json:"bus"`
	// Closing is set once the node has begun to shut down.
	Closing bool `json:"closing,omitempty"`
}

// readyz answers whether the node can serve: its store answers, its bus (if any) is connected,
// and it is not shutting down; 503 otherwise, so that a load balancer stops sending it players.
// /healthz, unlike it, tells only that the process serves.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	out := Readiness{Status: "ready", Store: "ok", Bus: "none"}
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("readyz: store unavailable", "err", err)
		out.Store = "unavailable"
	}
	if s.bus != nil {
		out.Bus = "ok"
		if err := s.bus.Check(ctx); err != nil {
			s.log.Warn("readyz: bus unavailable", "err", err)
			out.Bus = "unavailable"
		}
	}
	s.mu.Lock()
	out.Closing = s.closed
	s.mu.Unlock()
	status := http.StatusOK
	if out.Store != "ok" || out.Bus == "unavailable" || out.Closing {
		out.Status, status = "not ready", http.StatusServiceUnavailable
	}
	httpx.JSON(w, status, out)
}

// writeCredentials writes the dev credentials file atomically, readable by the owner only.
func (s *Server) writeCredentials() error {
	raw, err := json.MarshalIndent(s.devCredentials(s.url), "", "  ")
	if err != nil {
		return err
	}
	path := s.cfg.DevCredentialsFile
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sdkpp-credentials-*")
	if err != nil {
		return fmt.Errorf("server: dev credentials: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("server: dev credentials: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("server: dev credentials: %w", err)
	}
	s.log.Info("dev credentials written", "file", path)
	return nil
}

// Close stops serving, stops the webhook dispatcher and closes the store. Every goroutine the
// server started has ended when it returns.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	started := s.started
	s.mu.Unlock()
	var errs []error
	if s.hub != nil {
		s.hub.Close() // WebSocket connections are hijacked: Shutdown does not close them
	}
	if started && s.voiceCluster != nil { // after the hub: no voice payload comes any more
		s.voiceCluster.Close()
	}
	if started {
		// net/http's Shutdown waits up to 5 s for a new connection that has sent nothing yet (a
		// client's spare dial), so the deadline leaves room past that.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.http.Shutdown(ctx); err != nil {
			errs = append(errs, err, s.http.Close())
		}
		if s.metricsHTTP != nil {
			errs = append(errs, s.metricsHTTP.Shutdown(ctx))
			<-s.metricsServed
		}
		cancel()
		<-s.served
		s.jobs.Close()
		s.dispatcher.Close()
		s.lobbies.Close()
		// After the HTTP server: no search requests indexing any more.
		s.search.Close()
		s.guilds.invites.Close()
		errs = append(errs, s.relay.Close()) // after the hub: the calls have ended
	}
	if s.bus != nil { // after every part that dispatches
		s.bus.Close()
	}
	errs = append(errs, s.store.Close())
	s.log.Info("sdkpp-server stopped")
	return errors.Join(errs...)
}

// serveMetrics registers the collectors of the service's parts and serves the metrics on ln, on
// a goroutine that Close stops.
func (s *Server) serveMetrics(ln net.Listener) {
	s.metrics.Register(metrics.Gateway(s.hub.Stats), metrics.Relay(s.relay.Stats), metrics.Voice(s.voice.Stats),
		metrics.Webhooks(s.dispatcher.Stats))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	s.metricsURL = "http://" + ln.Addr().String() + "/metrics"
	s.metricsHTTP, s.metricsServed = s.serve(ln, mux, "metrics server")
}

// serve serves handler on ln with the configured timeouts, on a goroutine that ends when the
// returned server is shut down (Close), closing the returned channel; what names it in the log.
func (s *Server) serve(ln net.Listener, handler http.Handler, what string) (*http.Server, chan struct{}) {
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: s.cfg.ReadHeaderTimeout, ReadTimeout: s.cfg.ReadTimeout,
		IdleTimeout: s.cfg.IdleTimeout, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error(what+" stopped", "err", err)
		}
	}()
	return hs, done
}

// MetricsURL returns the URL of the Prometheus metrics, e.g. http://127.0.0.1:9100/metrics;
// empty before Start and without Config.MetricsAddr.
func (s *Server) MetricsURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metricsURL
}

// URL returns the base URL, e.g. http://127.0.0.1:7710 (empty before Start).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// APIRoutes returns the patterns of the API's routes ("METHOD /path/{param}"), relative to the
// API base, so that tests can reach every route.
func (s *Server) APIRoutes() []string { return s.apiRoutes() }

// APIURL returns the versioned API base, e.g. http://127.0.0.1:7710/api/v10.
func (s *Server) APIURL() string { return s.URL() + APIVersionPath }

// lobbyNotifier delivers lobby events through the gateway to the members' sessions of that game.
// A member who leaves the lobby leaves its call, and a lobby that goes ends its call.
type lobbyNotifier struct {
	hub   *gateway.Hub
	voice lobbyCalls
}

// StageLobbyEvents encodes events for the outbox of their change's transaction
// (lobbies.Stager; gateway.Hub.StageEach): nil on a node alone.
func (n lobbyNotifier) StageLobbyEvents(appID uint64, events []lobbies.Event) [][]byte {
	return n.hub.StageEach(appID, appDispatches(events))
}

// PublishStaged publishes events stored in the outbox, deleted with the order lock's release
// (lobbies.Stager; gateway.Hub.PublishStaged).
func (n lobbyNotifier) PublishStaged(ids []uint64, data [][]byte) bool {
	ss := make([]gateway.Staged, len(ids))
	for i, id := range ids {
		ss[i] = gateway.Staged{ID: id, Data: data[i]}
	}
	return n.hub.PublishStaged(ss)
}

func (n lobbyNotifier) LobbyEvent(appID uint64, userIDs []uint64, event string, data any) {
	n.hub.DispatchAppMany(appID, userIDs, event, data) // encoded once for the whole lobby
	n.calls(event, data)
}

// LobbyEvents dispatches several events together (lobbies.BatchNotifier).
func (n lobbyNotifier) LobbyEvents(appID uint64, events []lobbies.Event) {
	n.hub.DispatchAppEach(appID, appDispatches(events))
	for _, e := range events {
		n.calls(e.Name, e.Data)
	}
}

// appDispatches are lobby events as the hub's dispatches.
func appDispatches(events []lobbies.Event) []gateway.AppDispatch {
	ds := make([]gateway.AppDispatch, len(events))
	for i, e := range events {
		ds[i] = gateway.AppDispatch{UserIDs: e.UserIDs, Event: e.Name, Data: e.Data}
	}
	return ds
}

// calls tells the lobbies' calls of a lobby event that concerns them.
func (n lobbyNotifier) calls(event string, data any) {
	switch d := data.(type) {
	case wire.LobbyMemberEvent:
		if event == gwire.EventLobbyMemberRemove {
			n.voice.MemberLeft(uint64(d.LobbyID), uint64(d.Member.ID))
		}
	case wire.LobbyDeleted:
		n.voice.LobbyGone(uint64(d.ID))
	}
}
