package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// echoAPI answers every request with what it got: method, path, body, and whether it carried
// the session's token; "/slow" waits until release is closed; "/none" answers 204.
type echoAPI struct {
	entered chan struct{} // gets a value when "/slow" starts
	release chan struct{}
}

func (a echoAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/slow":
		a.entered <- struct{}{}
		<-a.release
	case "/panic":
		panic(http.ErrAbortHandler) // what even net/http lets through
	case "/none":
		w.WriteHeader(http.StatusNoContent)
		return
	case "/missing":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Unknown Lobby","code":10031}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(body),
		"bearer":       r.Header.Get("Authorization") == "Bearer user-1",
		"content_type": r.Header.Get("Content-Type"),
	})
}

func requestEnv(t *testing.T) (*env, echoAPI) {
	api := echoAPI{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := newEnv(t, func(c *Config) { c.Requests = api })
	return e, api
}

// result reads the next dispatch, which must be the answer to nonce with sequence seq.
func (c *client) result(nonce string, seq int64) gwire.RequestResult {
	c.t.Helper()
	p := c.expectDispatch(gwire.EventRequestResult, seq)
	var r gwire.RequestResult
	require.NoError(c.t, json.Unmarshal(p.D, &r))
	require.Equal(c.t, nonce, r.Nonce, "the answer's nonce")
	return r
}

// An API request over the gateway is served with the session's token and answered with a
// dispatch to that session, in the order the requests came; its body may be longer than the
// 4096 bytes other payloads may have, and it does not count against the payload rate limit.
func TestRequestOverGateway(t *testing.T) {
	e, _ := requestEnv(t)
	c := e.dial()
	assert.Equal(t, []string{gwire.FeatureRequests}, c.identify("user-1").SdkppFeatures, "READY offers")
	assert.Nil(t, newEnv(t, nil).dial().identify("user-1").SdkppFeatures, "READY without a Requests handler offers")
	long := strings.Repeat("é", 3000) // 6000 bytes of UTF-8
	c.send(gwire.OpRequest, gwire.Request{Nonce: "n1", Method: "POST", Path: "/lobbies/7/messages?x=1", Body: json.RawMessage(`{"content":"` + long + `"}`)})
	c.send(gwire.OpRequest, gwire.Request{Nonce: "n2", Method: "GET", Path: "/users/@me"})
	c.send(gwire.OpRequest, gwire.Request{Nonce: "n3", Method: "DELETE", Path: "/none"})
	c.send(gwire.OpRequest, gwire.Request{Nonce: "n4", Method: "GET", Path: "/missing"})

	r := c.result("n1", 2)
	var got struct {
		Method, Path, Query, Body string
		Bearer                    bool
		ContentType               string `json:"content_type"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &got))
	assert.Equal(t, 200, r.Status)
	assert.Equal(t, "POST /lobbies/7/messages x=1 application/json", got.Method+" "+got.Path+" "+got.Query+" "+got.ContentType)
	assert.True(t, got.Bearer, "the session's token")
	assert.Contains(t, got.Body, long)
	r = c.result("n2", 3)
	assert.Equal(t, 200, r.Status, "GET")
	assert.Contains(t, string(r.Body), `"content_type":""`)
	r = c.result("n3", 4)
	assert.Equal(t, 204, r.Status)
	assert.Equal(t, "null", string(r.Body))
	r = c.result("n4", 5)
	assert.Equal(t, 404, r.Status)
	assert.Contains(t, string(r.Body), `"code":10031`)
	c.send(gwire.OpRequest, gwire.Request{Nonce: "p", Method: "GET", Path: "/panic"})
	assert.Equal(t, 500, c.result("p", 6).Status, "a handler's panic")
	for i := 0; i < DefaultRateLimit+10; i++ { // beyond the payload rate limit
		c.send(gwire.OpRequest, gwire.Request{Nonce: "r", Method: "GET", Path: "/none"})
	}
	for i := 0; i < DefaultRateLimit+10; i++ {
		c.result("r", int64(7+i))
	}
	c.heartbeat()
}

// A request sent right behind gwire.Identify, before READY arrives, may reach the connection before it
// has finished identifying: it is served all the same, after READY.
func TestRequestRightAfterIdentify(t *testing.T) {
	e, _ := requestEnv(t)
	for range 20 {
		c := e.dial()
		c.send(gwire.OpIdentify, identifyData("user-1"))
		c.send(gwire.OpRequest, gwire.Request{Nonce: "early", Method: "GET", Path: "/none"})
		c.expectDispatch(gwire.EventReady, 1)
		require.Equal(t, 204, c.result("early", 2).Status, "early request")
		c.drop()
	}
}

// A request's answer waits in its session like any dispatch: a client that drops before it comes
// gets it replayed when it resumes.
func TestRequestAnswerReplayedOnResume(t *testing.T) {
	e, api := requestEnv(t)
	a := e.dial()
	ready := a.identify("user-1")
	a.send(gwire.OpRequest, gwire.Request{Nonce: "slow", Method: "POST", Path: "/slow", Body: json.RawMessage(`{}`)})
	<-api.entered // the request is being served (by the connection's reader, which waits for it)
	answeredAfterResume(e, a, ready, "slow", func() { close(api.release) })
}

// answeredAfterResume drops a, whose request nonce is being served, lets answer it once a has
// gone, and checks that the session resumed on a new connection gets the answer replayed (the
// session's sequence 2, its only event after READY) before RESUMED.
func answeredAfterResume(e *env, a *client, ready gwire.Ready, nonce string, answer func()) {
	e.t.Helper()
	a.drop()
	answer()
	e.waitOffline(1)
	b := e.dial()
	b.resume("user-1", ready.SessionID, 1)
	assert.Equal(e.t, 200, b.result(nonce, 2).Status, "replayed result")
	b.expectDispatch(gwire.EventResumed, 3)
}

// While a connection serves one of its own requests, what is dispatched to it meanwhile waits
// and leaves with the answer, in sequence order; the user's other connections get it at once.
func TestDispatchesWaitForTheRequestInFlight(t *testing.T) {
	e, api := requestEnv(t)
	a := e.dial()
	a.identify("user-1")
	b := e.dial()
	b.identify("user-1")
	a.send(gwire.OpRequest, gwire.Request{Nonce: "slow", Method: "POST", Path: "/slow", Body: json.RawMessage(`{}`)})
	<-api.entered
	e.hub.Dispatch(1, "TEST_EVENT", map[string]int{"n": 1})
	b.expectDispatch("TEST_EVENT", 2) // not serving: written at once
	// b has it, so the dispatch has been delivered: a's connection, serving, left it in the
	// session, untaken (Hub.deliver skips it).
	e.hub.mu.Lock()
	var serving []int64
	for c := range e.hub.conns {
		if c.serving.Load() {
			serving = append(serving, c.sent)
		}
	}
	e.hub.mu.Unlock()
	assert.Equal(t, []int64{1}, serving, "what the serving connection has taken: READY only")
	close(api.release)
	a.expectDispatch("TEST_EVENT", 2)
	a.expectDispatch(gwire.EventRequestResult, 3)
	a.heartbeat()
}

// Bad requests close the connection as other bad payloads do; without Config.Requests the
// opcode is unknown; an oversized payload of another opcode is still refused.
func TestRequestRefusals(t *testing.T) {
	e, _ := requestEnv(t)
	bare := newEnv(t, nil)
	identified := func(e *env) *client {
		c := e.dial()
		c.identify("user-1")
		return c
	}
	req := func(d any) func() *client {
		return func() *client { c := identified(e); c.send(gwire.OpRequest, d); return c }
	}
	cases := []struct {
		name    string
		code    int
		provoke func() *client
	}{
		{"before identify", gwire.CloseNotAuthenticated, func() *client {
			c := e.dial()
			c.send(gwire.OpRequest, gwire.Request{Nonce: "n", Method: "GET", Path: "/x"})
			return c
		}},
		{"no Requests handler", gwire.CloseUnknownOpcode, func() *client {
			c := identified(bare)
			c.send(gwire.OpRequest, gwire.Request{Nonce: "n", Method: "GET", Path: "/x"})
			return c
		}},
		{"d not an object", gwire.CloseDecodeError, req([]int{1})},
		{"d null", gwire.CloseDecodeError, req(nil)},
		{"no nonce", gwire.CloseDecodeError, req(gwire.Request{Method: "GET", Path: "/x"})},
		{"nonce too long", gwire.CloseDecodeError, req(gwire.Request{Nonce: strings.Repeat("n", gwire.MaxNonceChars+1), Method: "GET", Path: "/x"})},
		{"unknown method", gwire.CloseDecodeError, req(gwire.Request{Nonce: "n", Method: "TRACE", Path: "/x"})},
		{"lower-case method", gwire.CloseDecodeError, req(gwire.Request{Nonce: "n", Method: "get", Path: "/x"})},
		{"relative path", gwire.CloseDecodeError, req(gwire.Request{Nonce: "n", Method: "GET", Path: "x"})},
		{"host-relative path", gwire.CloseDecodeError, req(gwire.Request{Nonce: "n", Method: "GET", Path: "//evil.example/x"})},
		{"path with a newline", gwire.CloseDecodeError, req(gwire.Request{Nonce: "n", Method: "GET", Path: "/x\r\nHost: y"})},
		{"nonce of wrong type", gwire.CloseDecodeError, req(map[string]any{"nonce": 5, "method": "GET", "path": "/x"})},
		{"body not JSON", gwire.CloseDecodeError, func() *client {
			c := identified(e)
			c.sendRaw(`{"op":100,"d":{"nonce":"n","method":"POST","path":"/x","body":nope}}`)
			return c
		}},
		{"oversized request", gwire.CloseDecodeError, func() *client {
			c := identified(e)
			c.sendRaw(`{"op":100,"d":{"nonce":"n","method":"POST","path":"/x","body":"` + strings.Repeat("x", gwire.MaxRequestBytes) + `"}}`)
			return c
		}},
		{"oversized heartbeat with Requests set", gwire.CloseDecodeError, func() *client {
			c := identified(e)
			c.sendRaw(`{"op":1,"d":null` + strings.Repeat(" ", DefaultMaxPayloadBytes) + `}`)
			return c
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.provoke().expectClose(tc.code)
		})
	}
}
