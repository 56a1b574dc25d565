// Package ratelimit limits the HTTP API's request rate the platform's way, in one middleware
// that every API route passes through.
//
// Each request counts against two fixed windows, both per caller (the credential of its
// Authorization header, else its IP address): a route bucket, shared by the requests of one
// route pattern and one top-level resource (the lobby, guild, channel or invite of its path, as
// the platform scopes limits by "major parameter"), and a global bucket for everything the
// caller sends. Every answer of a limited route carries the route bucket's state:
//
//	X-RateLimit-Limit        requests the bucket allows per window
//	X-RateLimit-Remaining    requests left in the current window
//	X-RateLimit-Reset        Unix time (seconds, with milliseconds) when the window ends
//	X-RateLimit-Reset-After  seconds (with milliseconds) until then
//	X-RateLimit-Bucket       an opaque id of the route bucket
//
// A request over either limit is not served: it gets 429 with X-RateLimit-Global: true (sent only
// when the global bucket refused it, as clients read its presence), X-RateLimit-Scope ("user" for a caller's bucket, "global" for the
// global one), Retry-After (whole seconds, rounded up) and the body {"message": "You are being
// rate limited.", "retry_after": <seconds, float>, "global": <bool>}. A refused request does not
// count. Every time is read from the injected clock, so tests are deterministic.
//
// The windows are counted by a counters.Counter: in this process's memory on one node, in the
// store where nodes share a database, so that a caller's limit holds whichever nodes its
// requests reach. Should the store fail, the request is let through: the limit protects the
// service, and a service whose store fails has its requests fail anyway.
//
// Credentials are never kept: callers are keyed by a SHA-256 of the header.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/counters"
	"sdkpp/server/httpx"
)

// Rule is a number of requests allowed per window.
type Rule struct {
	Limit  int
	Window time.Duration
}

// Config sets the limits. Zero rules take the defaults.
type Config struct {
	// Route is the default limit of one route bucket. Default 50 per second.
	Route Rule
	// Routes overrides Route for route patterns as the API mux names them, e.g.
	// "POST /lobbies/{lobby_id}/messages".
	Routes map[string]Rule
	// Global is the limit of all of one caller's requests. Default 50 per second, the platform's
	// global limit.
	Global Rule
	// Disabled turns limiting off (for benchmarks that measure the service itself).
	Disabled bool
	// Counter counts the windows; nil counts in this process's memory (counters.Memory).
	Counter counters.Counter
	// Identify names the authenticated caller of a request, from its context and its
	// Authorization header's value (the same key for every way its credential may be written,
	// and for every token of one user in one application), or "" when its credential
	// authenticates no one: such requests are limited by address. Nil keys every credential by
	// the address too.
	Identify func(ctx context.Context, authorization string) string
}

// Defaults of Config.
var (
	DefaultRoute  = Rule{Limit: 50, Window: time.Second}
	DefaultGlobal = Rule{Limit: 50, Window: time.Second}
)

// majorParams are the path values that scope a route bucket, as the platform's major parameters
// do: two lobbies' message routes are two buckets.
var majorParams = []string{"lobby_id", "guild_id", "channel_id", "code"}

// Limiter is the middleware's state: one window per bucket and caller, in its Counter. It is
// safe for concurrent use.
type Limiter struct {
	cfg   Config
	clock clock.Clock
}

// New returns a Limiter reading time from c.
func New(cfg Config, c clock.Clock) *Limiter {
	if cfg.Route.Limit <= 0 || cfg.Route.Window <= 0 {
		cfg.Route = DefaultRoute
	}
	if cfg.Global.Limit <= 0 || cfg.Global.Window <= 0 {
		cfg.Global = DefaultGlobal
	}
	if cfg.Counter == nil {
		cfg.Counter = counters.NewMemory()
	}
	return &Limiter{cfg: cfg, clock: c}
}

// Admit counts a request that the route pattern matched, and writes the rate limit headers; false
// means it answered 429 and the request must not be served. A disabled Limiter admits everything.
func (l *Limiter) Admit(w http.ResponseWriter, r *http.Request, pattern string) bool {
	return l.cfg.Disabled || l.admit(r.Context(), w, r.RemoteAddr, r.Header.Get("Authorization"), r.URL.Path, pattern)
}

// AdmitOf is Admit for a request that another carrier than net/http brought (a gateway
// session's), from its parts: its context, its remote address, its Authorization header's value
// and its path. The request counts as it would over HTTP, and w gets the same headers, or the
// same 429.
func (l *Limiter) AdmitOf(ctx context.Context, w http.ResponseWriter, remote, authorization, path, pattern string) bool {
	return l.cfg.Disabled || l.admit(ctx, w, remote, authorization, path, pattern)
}

// admit counts the request and writes the headers; false means it answered 429.
func (l *Limiter) admit(ctx context.Context, w http.ResponseWriter, remote, authorization, path, pattern string) bool {
	who := l.caller(ctx, remote, authorization)
	bucket := bucketID(pattern)
	major := majorOf(path, pattern)
	rule, ok := l.cfg.Routes[pattern]
	if !ok {
		rule = l.cfg.Route
	}
	now := l.clock.Now()

	ok, ws, err := l.cfg.Counter.Hit(ctx, now,
		counters.Hit{Key: "g|" + who, Limit: l.cfg.Global.Limit, Window: l.cfg.Global.Window},
		counters.Hit{Key: "r|" + who + "|" + bucket + "|" + major, Limit: rule.Limit, Window: rule.Window})
	if err != nil {
		return true // see the package doc
	}
	global, route := ws[0], ws[1]
	globalFull := !ok && global.Count >= l.cfg.Global.Limit
	routeReset, globalReset := route.End, global.End
	remaining := rule.Limit - route.Count

	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(rule.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(remaining, 0)))
	h.Set("X-RateLimit-Reset", seconds(float64(routeReset.UnixMilli())/1000))
	h.Set("X-RateLimit-Reset-After", seconds(routeReset.Sub(now).Seconds()))
	h.Set("X-RateLimit-Bucket", bucket)
	if ok {
		return true
	}
	isGlobal := globalFull
	after := routeReset.Sub(now)
	scope := "user"
	if isGlobal {
		after, scope = globalReset.Sub(now), "global"
	}
	retry := after.Seconds()
	if isGlobal {
		h.Set("X-RateLimit-Global", "true")
	}
	h.Set("X-RateLimit-Scope", scope)
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(retry))))
	httpx.JSON(w, http.StatusTooManyRequests, Body{Message: "You are being rate limited.", RetryAfter: roundMillis(retry), Global: isGlobal})
	return false
}

// Body is the JSON body of a 429.
type Body struct {
	Message    string  `json:"message"`
	RetryAfter float64 `json:"retry_after"` // seconds
	Global     bool    `json:"global"`
}

// caller keys the request's caller: its authenticated identity, else its IP address. Keying on
// the credential's text would give one caller a fresh bucket for each way of writing it
// ("bearer", "BEARER", extra spaces).
func (l *Limiter) caller(ctx context.Context, remote, authorization string) string {
	if l.cfg.Identify != nil && authorization != "" {
		if id := l.cfg.Identify(ctx, authorization); id != "" {
			return "id:" + id
		}
	}
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	return "ip:" + host
}

// bucketID is the opaque X-RateLimit-Bucket of a route pattern, made once per pattern (the API's
// routes are a fixed few).
func bucketID(pattern string) string {
	if id, ok := bucketIDs.Load(pattern); ok {
		return id.(string)
	}
	sum := sha256.Sum256([]byte(pattern))
	id := hex.EncodeToString(sum[:8])
	bucketIDs.Store(pattern, id)
	return id
}

var bucketIDs sync.Map // route pattern -> its bucketID

// majorOf returns the request's major parameters: the path segments at the pattern's
// {lobby_id}, {guild_id}, {channel_id} or {code} wildcards (API patterns have no "..." wildcard, so
// segments line up).
func majorOf(urlPath, pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = pattern[i+1:]
	}
	pat := strings.Split(pattern, "/")
	path := strings.Split(urlPath, "/")
	m := ""
	for i, seg := range pat {
		if i < len(path) && slices.Contains(majorParams, strings.Trim(seg, "{}")) && strings.HasPrefix(seg, "{") {
			m += seg + "=" + path[i] + ";"
		}
	}
	return m
}

func seconds(f float64) string { return fmt.Sprintf("%.3f", f) }

func roundMillis(f float64) float64 { return math.Round(f*1000) / 1000 }
