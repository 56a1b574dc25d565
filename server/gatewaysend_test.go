package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// request sends an API request over g's session (op 100) and returns its result, skipping the
// dispatches before it.
func (g *botGW) request(nonce, method, path, body string) gwire.RequestResult {
	g.t.Helper()
	r := gwire.Request{Nonce: nonce, Method: method, Path: path}
	if body != "" {
		r.Body = json.RawMessage(body)
	}
	g.send(gwire.OpRequest, r)
	for {
		p := g.Gateway.Next()
		if p.T == nil || *p.T != gwire.EventRequestResult {
			continue
		}
		var res gwire.RequestResult
		require.NoError(g.t, json.Unmarshal(p.D, &res))
		if res.Nonce == nonce {
			return res
		}
	}
}

// aliceLobby starts a service with users alice and bob, whose access tokens it returns, and the
// lobby of secret, which alice made.
func aliceLobby(t *testing.T, secret string) (e *servertest.Env, alice, bob string, lobby wire.Lobby) {
	e = servertest.Start(t)
	alice = e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	bob = e.Token(t, "bob", "openid sdk.social_layer").AccessToken
	sendJSON(t, http.MethodPut, e.APIURL+"/lobbies", map[string]any{"secret": secret}, bearer(alice)).json(t, &lobby)
	return e, alice, bob, lobby
}

// A lobby message sent over the gateway, which the service takes without net/http
// (lobbies.Service.SendOverGateway), gets the answer the same request gets over HTTP, status and
// body, whatever the outcome (rule LOB-2); a repeated enforced nonce gets the first message back
// on either path.
func TestLobbyMessageOverGatewayAnswersAsHTTP(t *testing.T) {
	e, alice, bob, lobby := aliceLobby(t, "gw")
	id := lobby.ID.String()
	gws := map[string]*botGW{alice: identifyToken(t, e, alice), bob: identifyToken(t, e, bob)}
	for i, tc := range []struct {
		name, who, path, body string
		status                int
	}{
		{"sent", alice, "/lobbies/" + id + "/messages", `{"content":"hi","nonce":"n-1","enforce_nonce":true}`, 200},
		{"empty content", alice, "/lobbies/" + id + "/messages", `{"content":"  "}`, 400},
		{"content of another type", alice, "/lobbies/" + id + "/messages", `{"content":7}`, 400},
		{"too long", alice, "/lobbies/" + id + "/messages", `{"content":"` + strings.Repeat("a", wire.MaxMessageContentChars+1) + `"}`, 400},
		{"not an object", alice, "/lobbies/" + id + "/messages", `[1]`, 400},
		{"metadata of another type", alice, "/lobbies/" + id + "/messages", `{"content":"x","metadata":{"k":1}}`, 400},
		{"no body", alice, "/lobbies/" + id + "/messages", ``, 415},
		{"bad flags", alice, "/lobbies/" + id + "/messages", `{"content":"x","flags":1}`, 400},
		{"not a member", bob, "/lobbies/" + id + "/messages", `{"content":"x"}`, 403},
		{"unknown lobby", alice, "/lobbies/" + strconv.FormatUint(uint64(lobby.ID)+1, 10) + "/messages", `{"content":"x"}`, 404},
		{"id too large", alice, "/lobbies/99999999999999999999/messages", `{"content":"x"}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := gws[tc.who].request("r"+strconv.Itoa(i), http.MethodPost, tc.path, tc.body)
			var h resp
			if tc.body == "" {
				h = do(t, http.MethodPost, e.APIURL+tc.path, nil, bearer(tc.who))
			} else {
				hdr := bearer(tc.who)
				hdr.Set("Content-Type", "application/json")
				h = do(t, http.MethodPost, e.APIURL+tc.path, strings.NewReader(tc.body), hdr)
			}
			require.Equal(t, tc.status, res.Status, "over the gateway: %s", res.Body)
			require.Equal(t, tc.status, h.Status, "over HTTP: %s", h.Body)
			assert.JSONEq(t, string(h.Body), string(res.Body), "the same body")
		})
	}
}

// A lobby message over the gateway counts against the API's rate limits as over HTTP: past the
// route's limit it gets the 429 and its body, and so does the next request over HTTP.
func TestLobbyMessageOverGatewayRateLimited(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	alice := e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	var lobby wire.Lobby
	sendJSON(t, http.MethodPut, e.APIURL+"/lobbies", map[string]any{"secret": "gw"}, bearer(alice)).json(t, &lobby)
	path := "/lobbies/" + lobby.ID.String() + "/messages"
	g := identifyToken(t, e, alice)
	limited := -1
	for i := 0; i < 60 && limited < 0; i++ {
		res := g.request("m"+strconv.Itoa(i), http.MethodPost, path, `{"content":"x"}`)
		if res.Status == http.StatusTooManyRequests {
			limited = i
			var body struct {
				Message string `json:"message"`
			}
			require.NoError(t, json.Unmarshal(res.Body, &body))
			assert.Equal(t, "You are being rate limited.", body.Message)
			continue
		}
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	}
	require.Positive(t, limited, "a message over the gateway was limited")
	hdr := bearer(alice)
	hdr.Set("Content-Type", "application/json")
	r := do(t, http.MethodPost, e.APIURL+path, strings.NewReader(`{"content":"x"}`), hdr)
	assert.Equal(t, http.StatusTooManyRequests, r.Status, "over HTTP after them")
}

// Lobby messages sent over the gateway without waiting for their answers are accepted batch
// after batch while earlier ones commit: the sender gets the answers in the order of its
// requests, a request the API's handler serves among them after the messages sent before it,
// and the other member gets the messages, and the history holds them, in the order they were
// sent.
func TestLobbyMessagesOverGatewayPipelinedInOrder(t *testing.T) {
	e, alice, bob, lobby := aliceLobby(t, "pipe")
	sendJSON(t, http.MethodPut, e.APIURL+"/lobbies", map[string]any{"secret": "pipe"}, bearer(bob))
	path := "/lobbies/" + lobby.ID.String() + "/messages"
	a, b := identifyToken(t, e, alice), identifyToken(t, e, bob)
	const n = 24
	var want, contents []string
	for i := range n {
		if i == n/2 { // served by the API's handler, once the messages before it were answered
			a.send(gwire.OpRequest, gwire.Request{Nonce: "get", Method: http.MethodGet, Path: path})
			want = append(want, "get")
		}
		nonce, content := "m"+strconv.Itoa(i), "message "+strconv.Itoa(i)
		a.send(gwire.OpRequest, gwire.Request{Nonce: nonce, Method: http.MethodPost, Path: path,
			Body: json.RawMessage(`{"content":"` + content + `"}`)})
		want, contents = append(want, nonce), append(contents, content)
	}
	var got []string
	for len(got) < len(want) {
		p := a.Next()
		if p.T == nil || *p.T != gwire.EventRequestResult {
			continue
		}
		var res gwire.RequestResult
		require.NoError(t, json.Unmarshal(p.D, &res))
		require.Equal(t, http.StatusOK, res.Status, "%s: %s", res.Nonce, res.Body)
		if res.Nonce == "get" {
			var page []wire.LobbyMessage
			require.NoError(t, json.Unmarshal(res.Body, &page))
			assert.Len(t, page, n/2, "the page holds the messages sent before its request")
		}
		got = append(got, res.Nonce)
	}
	assert.Equal(t, want, got, "answers in the order of the requests")
	var delivered []string
	for len(delivered) < n {
		var m wire.LobbyMessage
		if p := b.Next(); p.T != nil && *p.T == wire.EventLobbyMessageCreate {
			require.NoError(t, json.Unmarshal(p.D, &m))
			delivered = append(delivered, m.Content)
		}
	}
	assert.Equal(t, contents, delivered, "delivered in the order sent")
	var history []wire.LobbyMessage
	do(t, http.MethodGet, e.APIURL+path+"?limit=100", nil, bearer(bob)).json(t, &history)
	require.Len(t, history, n)
	for i, m := range history { // newest first
		assert.Equal(t, contents[n-1-i], m.Content)
	}
}
