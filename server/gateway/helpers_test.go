package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gwire "sdkpp/wire/gateway"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/wire"
)

// Test tokens are "<kind>-<user id>":
//
//	user-N     app 500, sdk.social_layer (expands to gateway.connect)
//	presence-N app 500, sdk.social_layer_presence
//	gw-N       app 500, gateway.connect only
//	app2-N     app 501, sdk.social_layer
//	noscope-N  app 500, identify only (no gateway scope)
//
// "error" makes the lookup fail; anything else is unknown.
type testTokens struct{}

const (
	testApp  = 500
	testApp2 = 501
)

func (testTokens) ResolveBearer(_ context.Context, tok string) (Identity, bool, error) {
	if tok == "error" {
		return Identity{}, false, errors.New("store unavailable")
	}
	kind, num, ok := strings.Cut(tok, "-")
	id, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil {
		return Identity{}, false, nil
	}
	who := Identity{UserID: id, AppID: testApp}
	switch kind {
	case "user":
		who.Scopes = []string{"openid", "sdk.social_layer"}
	case "presence":
		who.Scopes = []string{"openid", "sdk.social_layer_presence"}
	case "gw":
		who.Scopes = []string{"gateway.connect"}
	case "app2":
		who.AppID, who.Scopes = testApp2, []string{"sdk.social_layer"}
	case "noscope":
		who.Scopes = []string{"identify"}
	default:
		return Identity{}, false, nil
	}
	return who, true, nil
}

// testUsers names user N "userN"; user 13 cannot be looked up.
type testUsers struct{}

func (testUsers) ReadyUser(_ context.Context, who Identity) (wire.User, error) {
	if who.UserID == 13 {
		return wire.User{}, errors.New("user store unavailable")
	}
	return wire.User{ID: wire.Snowflake(who.UserID), Username: fmt.Sprintf("user%d", who.UserID), Discriminator: "0"}, nil
}

// presenceCall is one call of Config.OnPresence.
type presenceCall struct {
	who      Identity
	presence json.RawMessage
}

// env is a hub on a loopback HTTP server at /gateway, with a fake clock.
type env struct {
	t         *testing.T
	clk       *clock.Fake
	hub       *Hub
	srv       *httptest.Server
	tls       bool // serve over TLS (newTLSEnv)
	presences chan presenceCall
	returned  atomic.Int64 // the hub's ServeHTTP calls that returned
}

var epoch = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// httpTimeout is the test server's read and idle timeout.
const httpTimeout = time.Second

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	return startEnv(t, &env{t: t}, mod)
}

// newTLSEnv is newEnv served over TLS (wss), as a studio's deployment would be.
func newTLSEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	return startEnv(t, &env{t: t, tls: true}, mod)
}

func startEnv(t *testing.T, e *env, mod func(*Config)) *env {
	t.Helper()
	e.clk, e.presences = clock.NewFake(epoch), make(chan presenceCall, 16)
	cfg := Config{Tokens: testTokens{}, Users: testUsers{}, Clock: e.clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnPresence: func(who Identity, p json.RawMessage) {
			e.presences <- presenceCall{who, p}
		},
		AllowIntents: func(_ context.Context, _ Identity, intents uint64) (bool, error) {
			return intents&gwire.IntentMessageContent == 0, nil
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	e.hub = New(cfg)
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway", func(w http.ResponseWriter, r *http.Request) {
		e.hub.ServeHTTP(w, r)
		e.returned.Add(1)
	})
	e.srv = httptest.NewUnstartedServer(mux)
	// Short HTTP timeouts, as a deployment has longer ones: the hub clears the deadlines they set
	// on the connections it upgrades, so every test's connections outlive them.
	e.srv.Config.ReadHeaderTimeout, e.srv.Config.ReadTimeout, e.srv.Config.IdleTimeout = httpTimeout, httpTimeout, httpTimeout
	if e.tls {
		e.srv.StartTLS()
	} else {
		e.srv.Start()
	}
	t.Cleanup(func() {
		e.hub.Close()
		e.srv.Close()
	})
	return e
}

// wsURL is the gateway URL with the given query.
func (e *env) wsURL(query string) string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/gateway" + query
}

// client is a test's gateway connection.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

const wait = 5 * time.Second

func (e *env) dialQuery(query string) *client {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, e.wsURL(query), &websocket.DialOptions{HTTPClient: e.srv.Client()})
	require.NoError(e.t, err, "dial")
	ws.SetReadLimit(1 << 20)
	c := &client{t: e.t, ws: ws}
	e.t.Cleanup(func() { _ = ws.CloseNow() })
	return c
}

// dial connects with ?v=10&encoding=json and reads gwire.Hello.
func (e *env) dial() *client {
	e.t.Helper()
	c := e.dialQuery("?v=10&encoding=json")
	c.hello()
	return c
}

func (c *client) sendRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(c.t, c.ws.Write(ctx, websocket.MessageText, []byte(s)), "write")
}

func (c *client) send(op int, d any) {
	c.t.Helper()
	raw, err := json.Marshal(map[string]any{"op": op, "d": d})
	require.NoError(c.t, err)
	c.sendRaw(string(raw))
}

// read returns the next payload, its raw text, or the read error.
func (c *client) read() (gwire.Payload, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, raw, err := c.ws.Read(ctx)
	if err != nil {
		return gwire.Payload{}, nil, err
	}
	var p gwire.Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return gwire.Payload{}, raw, fmt.Errorf("payload %s: %v", raw, err)
	}
	return p, raw, nil
}

func (c *client) next() gwire.Payload {
	c.t.Helper()
	p, _, err := c.read()
	require.NoError(c.t, err, "read")
	return p
}

// expectOp reads the next payload and checks its op.
func (c *client) expectOp(op int) gwire.Payload {
	c.t.Helper()
	p := c.next()
	require.Equal(c.t, op, p.Op, "op (t %v, d %s)", deref(p.T), p.D)
	return p
}

// expectDispatch reads the next payload and checks it is dispatch event with sequence seq.
func (c *client) expectDispatch(event string, seq int64) gwire.Payload {
	c.t.Helper()
	p := c.expectOp(gwire.OpDispatch)
	require.Equal(c.t, event+" s="+strconv.FormatInt(seq, 10), deref(p.T)+" s="+derefInt(p.S), "dispatch")
	return p
}

// expectClose reads until the connection ends and checks the close code.
func (c *client) expectClose(code int) {
	c.t.Helper()
	for {
		_, _, err := c.read()
		if err == nil {
			continue
		}
		require.Equal(c.t, code, int(websocket.CloseStatus(err)), "close code (the connection ended with %v)", err)
		return
	}
}

func (c *client) hello() gwire.Hello {
	c.t.Helper()
	p := c.expectOp(gwire.OpHello)
	var h gwire.Hello
	require.NoError(c.t, json.Unmarshal(p.D, &h))
	return h
}

func identifyData(token string) map[string]any {
	return map[string]any{"token": token, "intents": 0,
		"properties": map[string]string{"os": "linux", "browser": "sdkpp", "device": "sdkpp"}}
}

// identify sends gwire.Identify with token and returns READY (checked to be s=1).
func (c *client) identify(token string) gwire.Ready {
	c.t.Helper()
	c.send(gwire.OpIdentify, identifyData(token))
	p := c.expectDispatch(gwire.EventReady, 1)
	var r gwire.Ready
	require.NoError(c.t, json.Unmarshal(p.D, &r))
	return r
}

// resume sends gwire.Resume.
func (c *client) resume(token, sessionID string, seq int64) {
	c.t.Helper()
	c.send(gwire.OpResume, map[string]any{"token": token, "session_id": sessionID, "seq": seq})
}

// heartbeat sends a heartbeat and reads its ACK (so every dispatch queued before it has arrived).
func (c *client) heartbeat() {
	c.t.Helper()
	c.send(gwire.OpHeartbeat, nil)
	c.expectOp(gwire.OpHeartbeatACK)
}

// drop cuts the TCP connection without a close frame.
func (c *client) drop() { _ = c.ws.CloseNow() }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func derefInt(s *int64) string {
	if s == nil {
		return "<nil>"
	}
	return strconv.FormatInt(*s, 10)
}

// waitFor polls cond (real time) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, wait, 2*time.Millisecond, "waiting for %s", what)
}

// waitOffline waits until the hub has seen the user's connections end.
func (e *env) waitOffline(userID uint64) {
	e.t.Helper()
	waitFor(e.t, "user offline", func() bool { return !e.hub.Online(userID) })
}

// numSessions is the number of sessions the hub holds (live or resumable).
func (e *env) numSessions() int {
	e.hub.mu.Lock()
	defer e.hub.mu.Unlock()
	return len(e.hub.sessions)
}

// ResolveBot knows "bot-N": the bot user N of testApp.
func (testTokens) ResolveBot(_ context.Context, tok string) (Identity, bool, error) {
	kind, num, ok := strings.Cut(tok, "-")
	id, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil || kind != "bot" {
		return Identity{}, false, nil
	}
	return Identity{UserID: id, AppID: testApp}, true, nil
}
