// Package core is the sdkpp client: an ordinary Go library with no cgo and no C types. capi/
// adapts it to the C ABI.
//
// Client is a facade: it checks what the game passes, converts between the records of the public
// surface and the capabilities' own types, and delegates. Each capability lives in a package of
// its own with its own lock: core/auth (authorization: Authorize, PKCE, the device flow, token
// grants, provisional accounts, the automatic refresh), core/token (the token in use),
// core/users, core/social, core/messages (the cache, its endpoints and the catch-up after a new
// session), core/lobbies, core/tunnel, core/voice (calls, their registry and the settings of all
// calls), core/rpc (the link to the desktop client), core/logs and core/launch. The records and
// enums are core/records', which core names as its own. Gateway events reach the capabilities
// through one table of handlers by event name (connection.go): each capability lists its events
// and decodes them into typed events (messages.Decode, lobbies.Decode, social.Decode). What
// follows mechanically from api/sdkpp.api is generated: the callback types and the aliases of the
// enums (api_gen.go) and of the records (records_gen.go), with core/records' structs, accessors
// and enums; the handles' Clone and the getters and one-expression methods whose Go the
// generator's side table build/gen/facade_bodies.txt gives (facade_gen.go); and the Client's
// callback slots with their Set...Callback methods (handlers_gen.go). The hand-written files hold
// only what checks, converts and answers callbacks; async.go holds the one pattern of an
// authorized request answered once (authCall).
//
// Locks: Client.mu guards the client's life, its gateway connection and each call's last status.
// The desktop link (core/rpc.Link) has its own lock, taken without Client.mu held. The
// capabilities' locks and the handler slots' locks are leaves: nothing else is taken while one
// is held, so they may be taken with or without Client.mu. The one exception is the call
// registry's lock (core/voice.Registry): it is held while a call starts, and a call's events
// take Client.mu, so the registry's lock may be held while taking Client.mu, never the reverse.
//
// Callbacks given to core never run on core's goroutines: they are queued and run inside
// RunCallbacks, on the thread that calls it.
package core

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/callbacks"
	"sdkpp/core/internal/workers"
	"sdkpp/core/logs"
	"sdkpp/core/messages"
	"sdkpp/core/records"
	"sdkpp/core/rest"
	"sdkpp/core/rpc"
	"sdkpp/core/tunnel"
	"sdkpp/core/users"
	"sdkpp/core/voice"
	"sdkpp/internal/clock"
)

// Default service addresses: the sdkpp service on its default local port.
const (
	DefaultAPIBase = records.DefaultAPIBase
	DefaultWebBase = records.DefaultWebBase
)

// DefaultHTTPTimeout is the HTTP request timeout of a new Client (rule LIM-3).
const DefaultHTTPTimeout = 30 * time.Second

// Scope strings returned by ClientGetDefaultCommunicationScopes and ClientGetDefaultPresenceScopes
// (rules SC-1, SC-2).
const (
	CommunicationScopes = "openid sdk.social_layer"
	PresenceScopes      = "openid sdk.social_layer_presence"
)

// versionHash is the source revision, set at build time with -ldflags -X.
var versionHash = "dev"

// Callback is a game's callback with the function that releases what it holds. Release, if
// non-nil, runs exactly once, after the last call of Fn.
type Callback[F any] struct {
	Fn      F
	Release func()
}

// Func wraps a Go function that holds nothing to release.
func Func[F any](fn F) Callback[F] { return Callback[F]{Fn: fn} }

// queue is the process's one callback queue, drained by RunCallbacks.
var queue = func() *callbacks.Queue {
	q := callbacks.New()
	q.OnPanic = func(v any) { Log(LoggingSeverityError, "a callback panicked: %v", v) }
	return q
}()

// RunCallbacks runs every queued callback on the calling thread and returns how many ran.
func RunCallbacks() int { return queue.Run() }

// WaitCallbacks blocks the calling thread until a callback is queued or timeout passes, and
// reports whether callbacks are queued; it runs none. A thread that serves callbacks and has
// nothing else to do waits here between RunCallbacks instead of polling.
func WaitCallbacks(timeout time.Duration) bool { return queue.Wait(timeout) }

// OnCallbackQueued makes f run when callbacks are queued (once for those of one gateway read), on
// the queuing thread, for a thread waiting outside Go. Call it once, before the first Client.
func OnCallbackQueued(f func()) { queue.OnPush = f }

// ResetCallbacks discards queued callbacks without running them; their resources are released.
func ResetCallbacks() { queue.Reset() }

// Client is one player's connection to the service. Its methods are safe for concurrent use.
type Client struct {
	scope *callbacks.Scope
	log   logs.Logger
	clock clock.Clock // the time of every expiry, timer and backoff; tests set a clock.Fake

	apiBase string
	webBase string
	options *ClientCreateOptions

	appID       atomic.Uint64
	httpTimeout atomic.Int64 // milliseconds
	status      atomic.Int32
	api         *rest.Client

	// ctx is cancelled by Close; every operation of the client runs under it, on its workers.
	ctx     context.Context
	cancel  context.CancelFunc
	workers *workers.Pool

	// mu guards the client's life (closed), its token, its gateway connection and its link to the
	// desktop client. Each capability below owns its state behind a lock of its own (a leaf:
	// nothing else is locked while it is held), and handler slots lock themselves, so mu is never
	// held around a capability's calls except where noted.
	mu     sync.Mutex
	closed bool
	auth   authState
	conn   connState

	rpc    *rpc.Link     // the desktop link (core/rpc); its own lock
	users  users.Cache   // the one user cache, with game profiles (core/users)
	social socialState   // relationships and presences (core/social)
	msg    messageState  // messages and their catch-up (core/messages)
	lobby  lobbyState    // lobbies, applied in the service's order (core/lobbies)
	tunnel tunnel.Tunnel // API requests over the gateway (core/tunnel)
	voice  voice.Diag    // voice logs and diagnostics (core/voice); its own lock
	calls  callState     // voice calls (calls.go, core/voice); its own lock

	handlers handlers // the game's callbacks set by Set...Callback (handlers_gen.go)

	closeOnce sync.Once
}

// NewClient returns a Client for the default service addresses.
func NewClient() *Client { return NewClientWithOptions(NewClientCreateOptions()) }

// NewClientWithBases returns a Client for the given API and web base URLs.
func NewClientWithBases(apiBase, webBase string) *Client {
	o := NewClientCreateOptions()
	o.SetApiBase(apiBase)
	o.SetWebBase(webBase)
	return NewClientWithOptions(o)
}

// NewClientWithOptions returns a Client configured by o (which it copies).
func NewClientWithOptions(o *ClientCreateOptions) *Client {
	c := &Client{options: o.Clone()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.workers = workers.New(c.ctx, func(v any) {
		c.logf(LoggingSeverityError, "internal error in an SDK operation: %v", v)
	})
	c.scope = queue.NewScope(nil)
	c.httpTimeout.Store(DefaultHTTPTimeout.Milliseconds())
	c.status.Store(int32(ClientStatusDisconnected))
	clients.Add(&c.log)
	c.apiBase = c.checkBase("API", o.ApiBase(), DefaultAPIBase)
	c.webBase = c.checkBase("web", o.WebBase(), DefaultWebBase)
	// A transport of its own: Close drops its idle connections, which a shared one would keep.
	c.api = &rest.Client{Base: c.apiBase, Timeout: c.HTTPTimeout,
		HTTP: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	c.rpc = c.newRPCLink()
	c.msg.remote = messages.Remote{API: c.api, Cache: &c.msg.cache, Users: &c.users}
	c.setClock(clock.Real{})
	return c
}

// checkBase returns base if it is an absolute http(s) URL, else logs why and returns def.
func (c *Client) checkBase(what, base, def string) string {
	if base == "" {
		return def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.logf(LoggingSeverityError, "the %s base %q is not an absolute http or https URL; using %s", what, base, def)
		return def
	}
	return base
}

// Close releases the client: its operations are cancelled and their goroutines have ended when
// Close returns, pending one-shot callbacks run with ErrorType ClientDestroyed at the next
// RunCallbacks, and every registered callback is released. It is idempotent.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		clients.Remove(&c.log)
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		c.stopCalls()
		c.rpc.Close()
		c.stopConnection()
		c.workers.Wait()
		c.api.HTTP.CloseIdleConnections()
		c.auth.tokens.Stop()
		c.log.Close()
		c.voice.SetLog(nil)
		c.scope.Close()
	})
}

// setClock puts the Client on clk (tests use a clock.Fake); only before anything has started.
func (c *Client) setClock(clk clock.Clock) {
	c.clock, c.tunnel.Clock = clk, clk
	c.setAuth(clk)
}

// isClosed reports whether Close has begun.
func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// logf writes a redacted message to this client's log, or to standard error if nothing took it.
func (c *Client) logf(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	if !c.log.Log(msg, logs.Severity(sev)) {
		fallbackLog.Write(msg, logs.Severity(sev))
	}
}

// logAt returns logf at severity sev.
func (c *Client) logAt(sev LoggingSeverity) func(format string, args ...any) {
	return func(format string, args ...any) { c.logf(sev, format, args...) }
}

// ClientGetDefaultCommunicationScopes returns "openid sdk.social_layer" (rule SC-1).
func ClientGetDefaultCommunicationScopes() string { return CommunicationScopes }

// ClientGetDefaultPresenceScopes returns "openid sdk.social_layer_presence" (rule SC-2).
func ClientGetDefaultPresenceScopes() string { return PresenceScopes }

// ClientGetVersionHash returns the build's source revision.
func ClientGetVersionHash() string { return versionHash }

// AddLogCallback adds cb for messages at or above min. Messages are redacted (rule AU-10) and
// delivered inside RunCallbacks; cb is released when the Client closes.
func (c *Client) AddLogCallback(cb Callback[ClientLogCallback], min LoggingSeverity) {
	scope := c.scope.NewScope(cb.Release)
	if scope.Closed() {
		return
	}
	c.log.Add(logs.NewCallbackSink(scope, func(msg string, sev logs.Severity) { cb.Fn(msg, LoggingSeverity(sev)) }, logs.Severity(min)))
}

// SetLogDir writes messages at or above min to path/sdkpp.log, replacing an earlier log
// directory. It reports false, and logs why, when the file cannot be opened.
func (c *Client) SetLogDir(path string, min LoggingSeverity) bool {
	f, err := logs.OpenFile(path, "sdkpp.log", logs.Severity(min), c.clock.Now)
	if err != nil {
		c.logf(LoggingSeverityError, "SetLogDir(%q): %v", path, err)
		return false
	}
	c.log.SetFile(f)
	return true
}

// SetHttpRequestTimeout sets the timeout of every HTTP request in milliseconds (rule LIM-3).
// A value that is not positive is refused.
func (c *Client) SetHttpRequestTimeout(ms int32) {
	if ms <= 0 {
		c.logf(LoggingSeverityError, "SetHttpRequestTimeout: %d ms is not a positive timeout; keeping %d ms", ms, c.httpTimeout.Load())
		return
	}
	c.httpTimeout.Store(int64(ms))
}

// HTTPTimeout returns the HTTP request timeout.
func (c *Client) HTTPTimeout() time.Duration {
	return time.Duration(c.httpTimeout.Load()) * time.Millisecond
}

// IsDiscordAppInstalled reports whether the platform's mobile app is installed: never, on the
// desktop platforms sdkpp runs on.
func (c *Client) IsDiscordAppInstalled(cb Callback[ClientIsDiscordAppInstalledCallback]) {
	notInstalled := func() { cb.Fn(false) }
	c.scope.Once(notInstalled, cb.Release).Fire(notInstalled)
}

// OpenConnectedGamesSettingsInPlatform asks the platform client to open its connected-games
// settings. It needs a connection to the service; without one it fails with ClientNotReady.
func (c *Client) OpenConnectedGamesSettingsInPlatform(cb Callback[ClientOpenConnectedGamesSettingsInPlatformCallback]) {
	once := resultOnce(c, cb)
	if st := c.GetStatus(); st != ClientStatusReady {
		once.Fire(func() { cb.Fn(failure(ErrorTypeClientNotReady, "the client is not connected (status %s)", st)) })
		return
	}
	once.Fire(func() { cb.Fn(failure(ErrorTypeDisabled, "the platform client is not available")) })
}

// destroyed is the result of a one-shot whose Client was dropped first.
func destroyed() *ClientResult {
	return failure(ErrorTypeClientDestroyed, "the Client was dropped before the operation completed")
}
