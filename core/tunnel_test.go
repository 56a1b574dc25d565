package core

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/servertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule LOB-2 over the gateway: SendLobbyMessage goes over the Ready gateway connection (no HTTP
// request carries the message) and over HTTP when there is none. Sends while a proxy keeps
// cutting the gateway connection all succeed, and each makes exactly one message: an answer lost
// with its connection is replayed on Resume, and a send repeated over HTTP carries the nonce.
func TestSendLobbyMessageOverTheGateway(t *testing.T) {
	addr := servertest.FreeAddr(t)
	proxy := servertest.NewProxy(t, addr)
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		c.Addr = addr
		c.PublicURL = "http://" + proxy.Addr() // GET /gateway names the proxy
		c.RateLimits.Disabled = true
	}))
	var posts atomic.Int32 // HTTP requests that send a lobby message
	target, _ := url.Parse("http://" + addr)
	forward := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages") {
			posts.Add(1)
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	var players []*sdkClient
	var lobby uint64
	for _, name := range []string{"tunnel-writer", "tunnel-reader"} {
		c := &sdkClient{Client: NewClientWithBases(front.URL+server.APIVersionPath, "http://"+addr)}
		t.Cleanup(c.Close)
		var up *ClientResult
		c.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, name), resultCallback(&up))
		c.Connect()
		await(t, name+" Ready", func() bool { return c.GetStatus() == ClientStatusReady })
		var res *ClientResult
		c.CreateOrJoinLobby("tunnel-lobby", Func(func(r *ClientResult, id uint64) { res, lobby = r, id }))
		await(t, name+" joins", func() bool { return res != nil })
		mustSucceed(t, "CreateOrJoinLobby", res)
		players = append(players, c)
	}
	writer, reader := players[0], players[1]
	readies := 0 // the writer's returns to Ready after a cut
	writer.SetStatusChangedCallback(Func(func(s ClientStatus, _ ClientError, _ int32) {
		if s == ClientStatusReady {
			readies++
		}
	}))
	var created []uint64
	reader.SetMessageCreatedCallback(Func(func(id uint64) { created = append(created, id) }))
	var sent []uint64
	failed := 0
	send := func(n int) {
		writer.SendLobbyMessage(lobby, "m"+strconv.Itoa(n), Func(func(r *ClientResult, id uint64) {
			if !assert.True(t, r.Successful(), "send %d: %s", n, r.ToString()) {
				failed++
			}
			sent = append(sent, id)
		}))
	}

	for n := range 5 {
		send(n)
	}
	await(t, "five answers", func() bool { return len(sent)+failed == 5 })
	p := posts.Load()
	require.Zero(t, p, "%d messages went over HTTP while the gateway was Ready", p)

	const rounds, each = 10, 6
	const cut = rounds * each
	for r := range rounds { // sends in flight when the connection breaks
		for n := range each {
			send(5 + r*each + n)
		}
		proxy.Cut()
		await(t, "the writer back", func() bool { return readies == r+1 })
	}
	await(t, "every answer", func() bool { return len(sent)+failed == 5+cut })
	await(t, "every message", func() bool { return len(created) >= len(sent) })
	RunCallbacks()
	require.NotZero(t, proxy.Cuts(), "the proxy never cut a connection")
	require.Equal(t, slices.Sorted(slices.Values(created)), slices.Sorted(slices.Values(sent)), "sent %v\ncreated %v", sent, created)
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(sent))), len(sent), "sent %v\ncreated %v", sent, created)

	writer.Disconnect()
	await(t, "writer offline", func() bool { return writer.GetStatus() == ClientStatusDisconnected })
	before := posts.Load()
	send(-1)
	await(t, "the answer over HTTP", func() bool { return len(sent)+failed == 5+cut+1 })
	require.Equal(t, before+1, posts.Load(), "a send without a gateway connection made %d HTTP requests", posts.Load()-before)
	await(t, "the last message", func() bool { return len(created) == len(sent) })
	t.Logf("%d sends through %d cuts; %d over HTTP", len(sent), proxy.Cuts(), posts.Load())
}

// A service that does not offer requests over the gateway (READY without sdkpp_features
// "requests": another implementation of the platform's API, or one configured without them)
// gets every send over HTTP, and the connection is never put at risk by an unknown opcode.
func TestSendLobbyMessageWithoutGatewayRequests(t *testing.T) {
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.NoGatewayRequests = true }))
	players, lobby := joined(t, env, "no-tunnel", "nt1", "nt2")
	statuses := 0
	players[0].SetStatusChangedCallback(Func(func(ClientStatus, ClientError, int32) { statuses++ }))
	var created []uint64
	players[1].SetMessageCreatedCallback(Func(func(id uint64) { created = append(created, id) }))
	sent := sendN(t, players[0], lobby, "plain", 3)
	await(t, "three messages", func() bool { return len(created) == 3 })
	assert.Equal(t, created, sent, "sent %v, created %v, %d status changes", sent, created, statuses)
	assert.Zero(t, statuses, "sent %v, created %v, %d status changes", sent, created, statuses)
	assert.Equal(t, ClientStatusReady, players[0].GetStatus(), "sent %v, created %v, %d status changes", sent, created, statuses)
}

// Over the gateway a lobby message meets the API's rate limits as over HTTP (50 per second per
// route and caller): the sends beyond them fail with 429 and a retry_after, and the connection
// stays up.
func TestGatewayRequestsAreRateLimited(t *testing.T) {
	env := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)))
	players, lobby := joined(t, env, "limits", "rl1", "rl2")
	writer := players[0]
	statuses := 0
	writer.SetStatusChangedCallback(Func(func(ClientStatus, ClientError, int32) { statuses++ }))
	const n = 60
	var ok, limited, other int
	for i := range n {
		writer.SendLobbyMessage(lobby, "burst "+strconv.Itoa(i), Func(func(r *ClientResult, _ uint64) {
			switch {
			case r.Successful():
				ok++
			case r.Status() == 429 && r.RetryAfter() > 0:
				limited++
			default:
				other++
				assert.Fail(t, "an unexpected result", "send %d: %s", i, r.ToString())
			}
		}))
	}
	await(t, "every answer", func() bool { return ok+limited+other == n })
	assert.NotZero(t, limited, "%d sent, %d limited, %d status changes", ok, limited, statuses)
	assert.NotZero(t, ok, "%d sent, %d limited, %d status changes", ok, limited, statuses)
	assert.LessOrEqual(t, ok, 50, "%d sent, %d limited, %d status changes", ok, limited, statuses)
	assert.Zero(t, statuses, "%d sent, %d limited, %d status changes", ok, limited, statuses)
}
