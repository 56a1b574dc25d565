package ratelimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"sdkpp/server/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/ratelimit"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a mux with two routes behind a Limiter on a frozen clock.
type fixture struct {
	clock *clock.Offset
	h     http.Handler
}

func newFixture(cfg ratelimit.Config) *fixture {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }
	mux.HandleFunc("POST /lobbies/{lobby_id}/messages", ok)
	mux.HandleFunc("GET /users/@me", ok)
	c := clock.NewFake(t0)
	if cfg.Identify == nil { // every Bearer credential authenticates as itself
		cfg.Identify = func(r *http.Request) string { return httpx.Credential(r, "Bearer") }
	}
	return &fixture{clock: c, h: ratelimit.New(cfg, c).Wrap(mux, mux)}
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
		if w.Code != http.StatusNoContent {
			t.Fatalf("request %d: status %d", i, w.Code)
		}
		h := w.Header()
		if got, want := h.Get("X-RateLimit-Remaining"), []string{"2", "1", "0"}[i]; got != want {
			t.Errorf("request %d: Remaining %q, want %q", i, got, want)
		}
		if h.Get("X-RateLimit-Limit") != "3" || h.Get("X-RateLimit-Reset-After") != "2.000" || h.Get("X-RateLimit-Bucket") == "" {
			t.Errorf("request %d: headers %v", i, h)
		}
		if want := "1772366402.000"; h.Get("X-RateLimit-Reset") != want {
			t.Errorf("Reset %q, want %q", h.Get("X-RateLimit-Reset"), want)
		}
		if h.Get("Retry-After") != "" || h.Get("X-RateLimit-Global") != "" {
			t.Errorf("request %d: 429 headers on a served request: %v", i, h)
		}
	}
	f.clock.Advance(500 * time.Millisecond)
	w := f.do("POST", path, "Bearer a")
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("4th request: status %d, want 429", w.Code)
	}
	h := w.Header()
	if h.Get("X-RateLimit-Global") != "false" || h.Get("X-RateLimit-Scope") != "user" || h.Get("Retry-After") != "2" ||
		h.Get("X-RateLimit-Reset-After") != "1.500" || h.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 headers: %v", h)
	}
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body["message"] != "You are being rate limited." || body["retry_after"] != 1.5 || body["global"] != false {
		t.Errorf("429 body: %s", w.Body)
	}
	// Another lobby is another bucket (major parameter); another caller has its own buckets.
	if w := f.do("POST", "/lobbies/12/messages", "Bearer a"); w.Code != http.StatusNoContent {
		t.Errorf("other lobby: status %d", w.Code)
	}
	if w := f.do("POST", path, "Bearer b"); w.Code != http.StatusNoContent {
		t.Errorf("other caller: status %d", w.Code)
	}
	f.clock.Advance(1500 * time.Millisecond)
	if w := f.do("POST", path, "Bearer a"); w.Code != http.StatusNoContent || w.Header().Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("after the window: status %d, remaining %q", w.Code, w.Header().Get("X-RateLimit-Remaining"))
	}
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
		if w := f.do(method, path, ""); w.Code != http.StatusNoContent {
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	w := f.do("GET", "/users/@me", "")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("X-RateLimit-Global") != "true" ||
		w.Header().Get("X-RateLimit-Scope") != "global" || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("global: %d %v", w.Code, w.Header())
	}
	var body ratelimit.Body
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || !body.Global || body.RetryAfter != 1 {
		t.Errorf("global body %s", w.Body)
	}
}

// Per-route overrides apply, unknown routes are not limited, and Disabled turns limiting off.
func TestOverridesUnknownRoutesAndDisabled(t *testing.T) {
	f := newFixture(ratelimit.Config{Routes: map[string]ratelimit.Rule{"GET /users/@me": {Limit: 1, Window: time.Minute}}})
	if w := f.do("GET", "/users/@me", "Bearer x"); w.Code != http.StatusNoContent || w.Header().Get("X-RateLimit-Limit") != "1" {
		t.Fatalf("first: %d %v", w.Code, w.Header())
	}
	if w := f.do("GET", "/users/@me", "Bearer x"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("second: %d %v", w.Code, w.Header())
	}
	for range 100 {
		if w := f.do("GET", "/nowhere", "Bearer x"); w.Code != http.StatusNotFound || w.Header().Get("X-RateLimit-Limit") != "" {
			t.Fatalf("unknown route: %d %v", w.Code, w.Header())
		}
	}
	off := newFixture(ratelimit.Config{Disabled: true, Route: ratelimit.Rule{Limit: 1, Window: time.Minute}})
	for range 5 {
		if w := off.do("GET", "/users/@me", ""); w.Code != http.StatusNoContent {
			t.Fatalf("disabled: %d", w.Code)
		}
	}
}
