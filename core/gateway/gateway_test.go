package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sdkpp/core/internal/testwait"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/wire"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start runs the service behind the proxy and returns it with a user's access token.
func start(t *testing.T) (*servertest.Env, *servertest.Proxy, string, wire.Snowflake) {
	// The service listens on a port chosen now, so that the proxy knows its target before the
	// service starts; its public URL is the proxy's.
	addr := servertest.FreeAddr(t)
	p := servertest.NewProxy(t, addr)
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		c.Addr = addr
		c.PublicURL = "http://" + p.Addr()
		c.GatewayHeartbeat = 200 * time.Millisecond
	}))
	// Reach the API directly, not through the proxy that the tests cut.
	body, _ := json.Marshal(wire.BotTokenRequest{ExternalUserID: "gw-player"})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+server.APIVersionPath+"/partner-sdk/token/bot", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bot "+env.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var tr wire.TokenResponse
	require.EqualValues(t, 200, resp.StatusCode, "bot token: HTTP %d", resp.StatusCode)
	require.Nil(t, json.NewDecoder(resp.Body).Decode(&tr), "bot token: HTTP %d", resp.StatusCode)
	var me wire.User
	r2, _ := http.NewRequest(http.MethodGet, "http://"+addr+server.APIVersionPath+"/users/@me", nil)
	r2.Header.Set("Authorization", "Bearer "+tr.AccessToken)
	resp2, err := http.DefaultClient.Do(r2)
	require.NoError(t, err)
	defer resp2.Body.Close()
	json.NewDecoder(resp2.Body).Decode(&me)
	return env, p, tr.AccessToken, me.ID
}

// recorder collects what a Client reports.
type recorder struct {
	mu       sync.Mutex
	statuses []Status
	events   []string
	payloads []json.RawMessage
	lastErr  error
	errs     []error // every error reported, in order
}

func (r *recorder) status(s Status, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, s)
	if err != nil {
		r.lastErr = err
		r.errs = append(r.errs, err)
	}
}

func (r *recorder) dispatch(event string, data json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
	r.payloads = append(r.payloads, bytes.Clone(data)) // data is valid only during the call
}

func (r *recorder) count(event string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e == event {
			n++
		}
	}
	return n
}

func newClient(t *testing.T, url, tok string, rec *recorder) *Client {
	c, err := New(Config{
		URL: url, Token: func() string { return tok },
		OnStatus: rec.status, OnDispatch: rec.dispatch,
		Backoff: Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: 0.5},
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func TestIdentifyReadyAndClose(t *testing.T) {
	env, p, tok, _ := start(t)
	_ = env
	rec := &recorder{}
	c := newClient(t, "ws://"+p.Addr()+server.GatewayPath, tok, rec)
	c.Start()
	testwait.Until(t, "Ready", func() bool { return c.Status() == Ready })
	require.EqualValues(t, 1, rec.count("READY"), "events %v", rec.events)
	c.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []Status{Connecting, Connected, Ready, Disconnecting, Disconnected}
	require.Len(t, rec.statuses, len(want), "statuses %v, want %v", rec.statuses, want)
	for i := range want {
		require.Equal(t, want[i], rec.statuses[i], "statuses %v, want %v", rec.statuses, want)
	}
}

// Dispatches sent while the connection is cut again and again arrive exactly once, in order,
// through resume.
func TestResumeAcrossCutsExactlyOnceInOrder(t *testing.T) {
	env, p, tok, userID := start(t)
	rec := &recorder{}
	c := newClient(t, "ws://"+p.Addr()+server.GatewayPath, tok, rec)
	c.Start()
	testwait.Until(t, "Ready", func() bool { return c.Status() == Ready })
	const n = 300
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the network fails every 40 ms
		for ctx.Err() == nil {
			time.Sleep(40 * time.Millisecond)
			p.Cut()
		}
	}()
	for i := 1; i <= n; i++ {
		env.Server.Hub().Dispatch(uint64(userID), "TEST_EVENT", map[string]int{"n": i})
		time.Sleep(time.Millisecond)
	}
	testwait.Until(t, "every event", func() bool { return rec.count("TEST_EVENT") >= n })
	cancel()
	// One more event after the cuts: the session delivers in sequence order, so a duplicate of
	// an earlier event, replayed by a resume, would come before it.
	env.Server.Hub().Dispatch(uint64(userID), "TEST_LAST", map[string]int{"n": n + 1})
	testwait.Until(t, "the last event", func() bool { return rec.count("TEST_LAST") == 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	next := 1
	for i, e := range rec.events {
		if e != "TEST_EVENT" {
			continue
		}
		var d struct{ N int }
		json.Unmarshal(rec.payloads[i], &d)
		require.Equal(t, next, d.N, "event %d arrived where %d was due (duplicate or out of order)", d.N, next)
		next++
	}
	require.Equal(t, n+1, next, "got %d events, want %d", next-1, n)
	resumed, ready := 0, 0
	for _, e := range rec.events {
		switch e {
		case "RESUMED":
			resumed++
		case "READY":
			ready++
		}
	}
	require.NotZero(t, resumed, "READY %d, RESUMED %d: the session was not resumed", ready, resumed)
	require.EqualValues(t, 1, ready, "READY %d, RESUMED %d: the session was not resumed", ready, resumed)
	t.Logf("%d events through %d resumes", n, resumed)
}

// A revoked token closes with 4004, which is final: no reconnect.
func TestAuthenticationFailureIsFinal(t *testing.T) {
	_, p, _, _ := start(t)
	rec := &recorder{}
	c := newClient(t, "ws://"+p.Addr()+server.GatewayPath, "not-a-token", rec)
	c.Start()
	testwait.Until(t, "Disconnected", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.lastErr != nil && c.Status() == Disconnected
	})
	var ce *CloseError
	rec.mu.Lock()
	err := rec.lastErr
	rec.mu.Unlock()
	require.True(t, asClose(err, &ce), "err = %v", err)
	require.EqualValues(t, 4004, ce.Code, "err = %v", err)
	require.True(t, ce.Final(), "err = %v", err)
	<-c.done // the connection loop ended: nothing reconnects
	assert.Equal(t, Disconnected, c.Status(), "reconnected after a final close: %v", c.Status())
}

func asClose(err error, ce **CloseError) bool {
	e, ok := err.(*CloseError)
	if ok {
		*ce = e
	}
	return ok
}

// A write the service does not take within WriteTimeout fails and closes the connection: a
// service that stops reading cannot hold a sender for ever. With the default HTTP client the
// connection is a holdConn, whose write deadline is the timeout; with a transport it cannot wrap,
// the client's write timer.
func TestWriteTimeoutClosesTheConnection(t *testing.T) {
	t.Run("holdConn", func(t *testing.T) { writeTimeoutCloses(t, nil) })
	t.Run("timer", func(t *testing.T) {
		writeTimeoutCloses(t, &http.Client{Transport: roundTripper{http.DefaultTransport}})
	})
}

func writeTimeoutCloses(t *testing.T, hc *http.Client) {
	stop := make(chan struct{})
	defer close(stop)
	srv := readyServer(func(context.Context, *websocket.Conn) { <-stop }) // and never read again
	defer srv.Close()
	rec := &recorder{}
	c, err := New(Config{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: func() string { return "t" },
		OnStatus: rec.status, OnDispatch: rec.dispatch, WriteTimeout: 100 * time.Millisecond, HTTPClient: hc})
	require.NoError(t, err)
	defer c.Close()
	c.Start()
	testwait.Until(t, "Ready", func() bool { return c.Status() == Ready })
	rec.mu.Lock()
	ready := len(rec.statuses) // the statuses up to Ready
	rec.mu.Unlock()
	big := []byte(`"` + strings.Repeat("x", 1<<20) + `"`)
	failed := make(chan error, 1)
	go func() {
		for {
			if err := c.SendRaw(context.Background(), 3, big); err != nil {
				failed <- err
				return
			}
		}
	}()
	select {
	case err := <-failed:
		require.Error(t, err)
	case <-time.After(time.Minute):
		t.Fatal("a write the service never took did not fail")
	}
	// The client then reconnects at once (a dropped session is resumed without delay), so the
	// connection's end shows in the statuses reported, not in a Status read later.
	testwait.Until(t, "a status other than Ready", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.ContainsFunc(rec.statuses[ready:], func(s Status) bool { return s != Ready })
	})
}

// readyServer is a bare gateway: it sends Hello, reads Identify, sends READY, then hands the
// connection to then, and closes it when then returns.
func readyServer(then func(ctx context.Context, ws *websocket.Conn)) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		if ws.Write(ctx, websocket.MessageText, []byte(`{"op":10,"d":{"heartbeat_interval":60000}}`)) != nil {
			return
		}
		if _, _, err := ws.Read(ctx); err != nil { // Identify
			return
		}
		if ws.Write(ctx, websocket.MessageText, []byte(`{"op":0,"s":1,"t":"READY","d":{"session_id":"s","user":{}}}`)) != nil {
			return
		}
		then(ctx, ws)
	}))
}

// With DataChecked, a dispatch whose data OnDispatch checks reaches it as it came, even when it
// is not valid JSON (OnDispatch's decoder rejects it), and the session goes on; the data of any
// other dispatch is checked by the client, and data that is not valid JSON ends the session.
func TestDataCheckedLeavesDataToOnDispatch(t *testing.T) {
	frames := []string{
		`{"op":0,"d":{"id":"1"},"s":2,"t":"CHECKED"}`,
		`{"op":0,"d":{"id":"1",tru},"s":3,"t":"CHECKED"}`, // reaches OnDispatch unchecked
		`{"op":0,"d":{"ok":true},"s":4,"t":"OTHER"}`,
		`{"op":0,"d":{"id":"1",tru},"s":5,"t":"OTHER"}`, // ends the session
	}
	srv := readyServer(func(ctx context.Context, ws *websocket.Conn) {
		for _, f := range frames {
			if ws.Write(ctx, websocket.MessageText, []byte(f)) != nil {
				return
			}
		}
		<-ctx.Done()
	})
	defer srv.Close()
	rec := &recorder{}
	c, err := New(Config{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: func() string { return "t" },
		OnStatus: rec.status, OnDispatch: rec.dispatch, DataChecked: func(e string) bool { return e == "CHECKED" },
		Backoff: Backoff{Initial: time.Hour, Max: time.Hour}})
	require.NoError(t, err)
	defer c.Close()
	c.Start()
	testwait.Until(t, "the session ended by the bad OTHER", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.lastErr != nil
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// The first session's dispatches; the client then resumes at once, and this bare server
	// plays its frames again to the next one.
	require.GreaterOrEqual(t, len(rec.events), 4)
	require.Equal(t, []string{"READY", "CHECKED", "CHECKED", "OTHER"}, rec.events[:4])
	assert.Equal(t, `{"id":"1",tru}`, string(rec.payloads[2]))
	assert.ErrorContains(t, rec.lastErr, "malformed payload")
}
