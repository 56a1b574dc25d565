package core

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/wire"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultClient is a player's Client that records the lobby messages its created callback sees.
type faultClient struct {
	*Client
	ids      []uint64 // the created callback's messages, in callback order
	caughtUp int      // log lines of a finished catch-up
	logs     []string // for a failure's report
	mu       sync.Mutex
}

// Rules LOB-2, LOB-3: 10,000 lobby messages stream from one sender while a proxy in front of the
// gateway cuts every TCP connection every 40 ms and the service restarts half way (on the same
// data directory and address, so every gateway session is lost): every connected player's
// created callback sees every message exactly once, in order. Resumes replay what a cut connection
// missed; after the restart the SDK starts new sessions and catches up with
// GET /lobbies/{id}/messages?after= (core/messages).
func TestLobbyMessagesSurviveCutsAndRestart(t *testing.T) {
	const total, players = 10000, 3
	addr := servertest.FreeAddr(t)
	proxy := servertest.NewProxy(t, addr)
	env := servertest.Start(t, servertest.WithDataDir(t.TempDir()), servertest.WithConfig(func(c *server.Config) {
		c.Addr = addr
		c.PublicURL = "http://" + proxy.Addr() // GET /gateway names the proxy; the API is reached directly
		c.RateLimits.Disabled = true           // one sender posts 10,000 messages as fast as it can
	}))
	apiBase, webBase := "http://"+addr+server.APIVersionPath, "http://"+addr

	sender := botProvisionalToken(t, env, "fault-sender")
	lobbyID := joinBySecret(t, apiBase, sender, "fault-lobby")
	var clients []*faultClient
	for i := range players {
		fc := &faultClient{Client: NewClientWithBases(apiBase, webBase)}
		t.Cleanup(fc.Close)
		fc.AddLogCallback(Func(func(m string, _ LoggingSeverity) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			fc.logs = append(fc.logs, m)
			if strings.Contains(m, "caught up") {
				fc.caughtUp++
			}
		}), LoggingSeverityVerbose)
		fc.SetMessageCreatedCallback(Func(func(id uint64) {
			fc.ids = append(fc.ids, id)
		}))
		var up *ClientResult
		fc.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, "fault-player-"+strconv.Itoa(i)), resultCallback(&up))
		fc.Connect()
		await(t, "player Ready", func() bool { return fc.GetStatus() == ClientStatusReady })
		var res *ClientResult
		fc.CreateOrJoinLobby("fault-lobby", Func(func(r *ClientResult, _ uint64) { res = r }))
		await(t, "player joins", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
		clients = append(clients, fc)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var cutter sync.WaitGroup
	cutter.Add(1)
	go func() { // the network fails every 40 ms until the stream has been sent
		defer cutter.Done()
		for ctx.Err() == nil {
			time.Sleep(40 * time.Millisecond)
			proxy.Cut()
		}
	}()
	defer func() { cancel(); cutter.Wait() }()

	hc := &http.Client{Timeout: 10 * time.Second}
	var sent []uint64
	for n := 0; n < total; n++ {
		if n == total/2 {
			env = env.Restart(t) // every gateway session is lost; the messages so far are stored
		}
		sent = append(sent, postLobbyMessage(t, hc, apiBase, sender, lobbyID, "m"+strconv.Itoa(n)))
		if n%50 == 49 {
			RunCallbacks() // the game's frame: callbacks run between bursts
		}
	}
	cancel()
	cutter.Wait()
	require.NotZero(t, proxy.Cuts(), "the proxy never cut a connection")

	// One more message on a healthy network: each player's callbacks run in order, so a
	// duplicate or a late message of the stream would come before it. A catch-up logs that it
	// is done after delivering what it held, so its log line may come after the last message.
	sent = append(sent, postLobbyMessage(t, hc, apiBase, sender, lobbyID, "last"))
	last := sent[total]
	caughtUp := func(fc *faultClient) bool {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return fc.caughtUp > 0
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, fc := range clients {
		for !(slices.Contains(fc.ids, last) && caughtUp(fc)) && time.Now().Before(deadline) {
			RunCallbacks()
			time.Sleep(5 * time.Millisecond)
		}
	}
	for i, fc := range clients {
		assert.Len(t, fc.ids, len(sent), "player %d: %d messages, want %d", i, len(fc.ids), len(sent))
		for k := range min(len(fc.ids), len(sent)) {
			if fc.ids[k] != sent[k] {
				fc.mu.Lock()
				for _, l := range fc.logs {
					t.Log(l)
				}
				fc.mu.Unlock()
				require.Failf(t, "lost, repeated or out of order", "player %d: callback %d was message %d, want %d", i, k, fc.ids[k], sent[k])
			}
		}
		assert.True(t, caughtUp(fc), "player %d never caught up after the restart", i)
	}
	t.Logf("%d messages to %d players through %d cuts and a restart", total, players, proxy.Cuts())
}

// joinBySecret puts the token's user in the lobby of secret and returns its id.
func joinBySecret(t *testing.T, apiBase, token, secret string) uint64 {
	t.Helper()
	var l wire.Lobby
	faultCall(t, &http.Client{}, http.MethodPut, apiBase+"/lobbies", token,
		wire.CreateOrJoinLobbyRequest{Secret: secret, IdleTimeoutSeconds: &[]int{3600}[0]}, &l)
	return uint64(l.ID)
}

// postLobbyMessage sends a message and returns its id.
func postLobbyMessage(t *testing.T, hc *http.Client, apiBase, token string, lobbyID uint64, content string) uint64 {
	t.Helper()
	var m wire.LobbyMessage
	faultCall(t, hc, http.MethodPost, apiBase+"/lobbies/"+strconv.FormatUint(lobbyID, 10)+"/messages", token,
		wire.LobbyMessageRequest{Content: content}, &m)
	return uint64(m.ID)
}

func faultCall(t *testing.T, hc *http.Client, method, url, token string, body, out any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: HTTP %d", method, url, resp.StatusCode)
	require.Nil(t, json.NewDecoder(resp.Body).Decode(out), "%s %s: HTTP %d", method, url, resp.StatusCode)
}
