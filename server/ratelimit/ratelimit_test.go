package ratelimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/ratelimit"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a mux with two routes behind a Limiter on a frozen clock.
type fixture struct {
	clock *clock.Fake
	h     http.Handler
}

func newFixture(cfg ratelimit.Config) *fixture {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }
	mux.HandleFunc("POST /lobbies/{lobby_id}/messages", ok)
	mux.HandleFunc("GET /users/@me", ok)
	c := clock.NewFake(t0)
	if cfg.Identify == nil { // every Bearer credential authenticates as itself
		cfg.Identify = func(_ context.Context, auth string) string { return httpx.CredentialOf(auth, "Bearer") }
	}
	l := ratelimit.New(cfg, c)
	// As the service's router does: a request a route matches passes the limiter first.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" && !l.Admit(w, r, pattern) {
			return
		}
		mux.ServeHTTP(w, r)
	})
	return &fixture{clock: c, h: h}
}

func (f *fixture) do(method, path, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

// The route bucket counts down, refuses the request past its limit with the platform's headers
// and body, and opens again when its window ends by the injected clock.
func TestRouteBucketHeadersAnd429(t *testing.T) {
	f := newFixture(ratelimit.Config{Route: ratelimit.Rule{Limit: 3, Window: 2 * time.Second}})
	path := "/lobbies/11/messages"
	for i := range 3 {
		w := f.do("POST", path, "Bearer a")
		require.Equal(t, http.StatusNoContent, w.Code, "request %d: status %d", i, w.Code)
		h := w.Header()
		assert.Equal(t, []string{"2", "1", "0"}[i], h.Get("X-RateLimit-Remaining"), "request %d: Remaining", i)
		assert.Equal(t, "3", h.Get("X-RateLimit-Limit"), "request %d: headers %v", i, h)
		assert.Equal(t, "2.000", h.Get("X-RateLimit-Reset-After"), "request %d: headers %v", i, h)
		assert.NotEmpty(t, h.Get("X-RateLimit-Bucket"), "request %d: headers %v", i, h)
		assert.Equal(t, "1772366402.000", h.Get("X-RateLimit-Reset"), "request %d: Reset", i)
		assert.Empty(t, h.Get("Retry-After"), "request %d: 429 headers on a served request: %v", i, h)
		assert.Empty(t, h.Get("X-RateLimit-Global"), "request %d: 429 headers on a served request: %v", i, h)
	}
	f.clock.Advance(500 * time.Millisecond)
	w := f.do("POST", path, "Bearer a")
	require.Equal(t, http.StatusTooManyRequests, w.Code, "4th request: status %d, want 429", w.Code)
	h := w.Header()
	assert.Empty(t, h.Values("X-RateLimit-Global"), "a route 429 carries no X-RateLimit-Global: %v", h)
	assert.Equal(t, "user", h.Get("X-RateLimit-Scope"), "429 headers: %v", h)
	assert.Equal(t, "2", h.Get("Retry-After"), "429 headers: %v", h)
	assert.Equal(t, "1.500", h.Get("X-RateLimit-Reset-After"), "429 headers: %v", h)
	assert.Equal(t, "0", h.Get("X-RateLimit-Remaining"), "429 headers: %v", h)
	var body map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	assert.Equal(t, "You are being rate limited.", body["message"], "429 body: %s", w.Body)
	assert.Equal(t, 1.5, body["retry_after"], "429 body: %s", w.Body)
	assert.Equal(t, false, body["global"], "429 body: %s", w.Body)
	// Another lobby is another bucket (major parameter); another caller has its own buckets.
	w = f.do("POST", "/lobbies/12/messages", "Bearer a")
	assert.Equal(t, http.StatusNoContent, w.Code, "other lobby: status %d", w.Code)
	w = f.do("POST", path, "Bearer b")
	assert.Equal(t, http.StatusNoContent, w.Code, "other caller: status %d", w.Code)
	f.clock.Advance(1500 * time.Millisecond)
	w = f.do("POST", path, "Bearer a")
	assert.Equal(t, http.StatusNoContent, w.Code, "after the window: status %d, remaining %q", w.Code, w.Header().Get("X-RateLimit-Remaining"))
	assert.Equal(t, "2", w.Header().Get("X-RateLimit-Remaining"), "after the window: status %d, remaining %q", w.Code, w.Header().Get("X-RateLimit-Remaining"))
}

// The global bucket spans routes; a refusal by it says so.
func TestGlobalBucket(t *testing.T) {
	f := newFixture(ratelimit.Config{Global: ratelimit.Rule{Limit: 4, Window: time.Second}})
	for i := range 4 {
		path := "/users/@me"
		if i%2 == 1 {
			path = "/lobbies/1/messages"
		}
		method := map[bool]string{true: "GET", false: "POST"}[path == "/users/@me"]
		w := f.do(method, path, "")
		require.Equal(t, http.StatusNoContent, w.Code, "request %d: %d", i, w.Code)
	}
	w := f.do("GET", "/users/@me", "")
	require.Equal(t, http.StatusTooManyRequests, w.Code, "global: %d %v", w.Code, w.Header())
	require.Equal(t, "true", w.Header().Get("X-RateLimit-Global"), "global: %d %v", w.Code, w.Header())
	require.Equal(t, "global", w.Header().Get("X-RateLimit-Scope"), "global: %d %v", w.Code, w.Header())
	require.Equal(t, "1", w.Header().Get("Retry-After"), "global: %d %v", w.Code, w.Header())
	var body ratelimit.Body
	assert.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), "global body %s", w.Body)
	assert.True(t, body.Global, "global body %s", w.Body)
	assert.Equal(t, float64(1), body.RetryAfter, "global body %s", w.Body)
}

// Per-route overrides apply, unknown routes are not limited, and Disabled turns limiting off.
func TestOverridesUnknownRoutesAndDisabled(t *testing.T) {
	f := newFixture(ratelimit.Config{Routes: map[string]ratelimit.Rule{"GET /users/@me": {Limit: 1, Window: time.Minute}}})
	w := f.do("GET", "/users/@me", "Bearer x")
	require.Equal(t, http.StatusNoContent, w.Code, "first: %d %v", w.Code, w.Header())
	require.Equal(t, "1", w.Header().Get("X-RateLimit-Limit"), "first: %d %v", w.Code, w.Header())
	w = f.do("GET", "/users/@me", "Bearer x")
	require.Equal(t, http.StatusTooManyRequests, w.Code, "second: %d %v", w.Code, w.Header())
	require.Equal(t, "60", w.Header().Get("Retry-After"), "second: %d %v", w.Code, w.Header())
	for range 100 {
		w := f.do("GET", "/nowhere", "Bearer x")
		require.Equal(t, http.StatusNotFound, w.Code, "unknown route: %d %v", w.Code, w.Header())
		require.Empty(t, w.Header().Get("X-RateLimit-Limit"), "unknown route: %d %v", w.Code, w.Header())
	}
	off := newFixture(ratelimit.Config{Disabled: true, Route: ratelimit.Rule{Limit: 1, Window: time.Minute}})
	for range 5 {
		w := off.do("GET", "/users/@me", "")
		require.Equal(t, http.StatusNoContent, w.Code, "disabled: %d", w.Code)
	}
}

// A request another carrier brought (AdmitOf, a gateway session's) counts in the buckets of the
// same request over HTTP, by its path's lobby and its caller, and gets the same headers and 429.
func TestAdmitOfCountsAsAdmit(t *testing.T) {
	c := clock.NewFake(t0)
	l := ratelimit.New(ratelimit.Config{Route: ratelimit.Rule{Limit: 2, Window: time.Second},
		Identify: func(_ context.Context, auth string) string { return httpx.CredentialOf(auth, "Bearer") }}, c)
	const pattern = "POST /lobbies/{lobby_id}/messages"
	overHTTP := func(path string) (*httptest.ResponseRecorder, bool) {
		r := httptest.NewRequest(http.MethodPost, path, nil)
		r.Header.Set("Authorization", "Bearer a")
		w := httptest.NewRecorder()
		return w, l.Admit(w, r, pattern)
	}
	carried := func(path string) (*httpx.Recorder, bool) {
		w := httpx.NewRecorder()
		return w, l.AdmitOf(context.Background(), w, "192.0.2.1:1234", "Bearer a", path, pattern)
	}
	h, ok := overHTTP("/lobbies/1/messages")
	require.True(t, ok)
	g, ok := carried("/lobbies/1/messages")
	require.True(t, ok, "the second of two")
	assert.Equal(t, "1", h.Header().Get("X-RateLimit-Remaining"))
	assert.Equal(t, "0", g.Header().Get("X-RateLimit-Remaining"), "counted with the request over HTTP")
	assert.Equal(t, h.Header().Get("X-RateLimit-Bucket"), g.Header().Get("X-RateLimit-Bucket"))
	_, ok = carried("/lobbies/2/messages")
	assert.True(t, ok, "another lobby is another bucket")
	g, ok = carried("/lobbies/1/messages")
	require.False(t, ok, "the third")
	h, ok = overHTTP("/lobbies/1/messages")
	require.False(t, ok, "the fourth, over HTTP")
	assert.Equal(t, http.StatusTooManyRequests, g.Status)
	assert.Equal(t, h.Code, g.Status)
	assert.Equal(t, h.Body.String(), g.Body.String())
	assert.Equal(t, h.Header(), g.Header(), "the same headers")
	c.Advance(time.Second)
	_, ok = carried("/lobbies/1/messages")
	assert.True(t, ok, "a new window")
}
