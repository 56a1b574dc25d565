// Package cluster tests three nodes of the service sharing one PostgreSQL and one NATS bus, with
// players' SDKs (package core) connected to different nodes.
package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/clustertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store/pgtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

func TestMain(m *testing.M) {
	if os.Getenv(envNode) != "" { // this binary, started as a node by the failover test
		os.Exit(runNode())
	}
	pgtest.Main(m)
}

// waitFor runs the SDKs' callbacks until cond holds, failing t after a while.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		core.RunCallbacks()
		time.Sleep(2 * time.Millisecond)
	}
}

// player is an SDK connected to one node.
type player struct {
	*core.Client
	id   uint64
	name string
}

// connect connects a new provisional player's SDK to node e and waits for Ready.
func connect(t testing.TB, e *servertest.Env, name string) *player {
	t.Helper()
	c := core.NewClientWithBases(e.APIURL, e.URL)
	t.Cleanup(c.Close)
	c.SetApplicationId(uint64(e.App.ID))
	c.UpdateToken(core.AuthorizationTokenTypeBearer, e.ProvisionalToken(t, name, name), core.Func(func(*core.ClientResult) {}))
	c.Connect()
	waitFor(t, name+" Ready", func() bool { return c.GetStatus() == core.ClientStatusReady && c.GetCurrentUserV2() != nil })
	return &player{Client: c, id: c.GetCurrentUserV2().Id(), name: name}
}

// result waits for a one-shot call's result and fails t unless it succeeded.
func result(t testing.TB, what string, call func(done func(*core.ClientResult))) {
	t.Helper()
	var res *core.ClientResult
	call(func(r *core.ClientResult) { res = r })
	waitFor(t, what, func() bool { return res != nil })
	require.True(t, res.Successful(), "%s: %s %s", what, res.ToString(), res.ResponseBody())
}

// joinLobby has every player create or join the lobby of secret, and waits until each sees
// them all; it returns the lobby.
func joinLobby(t testing.TB, players []*player, secret string) uint64 {
	t.Helper()
	var lobby uint64
	for _, p := range players {
		var id uint64
		result(t, p.name+" joins", func(done func(*core.ClientResult)) {
			p.CreateOrJoinLobby(secret, core.Func(func(r *core.ClientResult, l uint64) { id = l; done(r) }))
		})
		require.True(t, lobby == 0 || lobby == id, "one lobby: %d and %d", lobby, id)
		lobby = id
	}
	waitFor(t, "everyone sees everyone", func() bool {
		for _, p := range players {
			if h := p.GetLobbyHandle(lobby); h == nil || len(h.LobbyMemberIds()) != len(players) {
				return false
			}
		}
		return true
	})
	return lobby
}

// inbox records the messages an SDK delivers to the game, in delivery order.
type inbox struct {
	mu  sync.Mutex
	ids []uint64
}

func (in *inbox) add(id uint64) { in.mu.Lock(); in.ids = append(in.ids, id); in.mu.Unlock() }

func (in *inbox) len() int { in.mu.Lock(); defer in.mu.Unlock(); return len(in.ids) }

// Three nodes: a player on node A sees the lobby messages, DMs and friend requests that players
// on nodes B and C produce, each once and in commit order; so do the players on B and C; and
// the game's webhook hears of each lobby message once, though each node runs a dispatcher.
func TestThreeNodesServeOneCommunity(t *testing.T) {
	c := clustertest.Start(t, 3)
	a, b, cc := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	hooks := servertest.NewReceiver(t, a.App.PublicKey)
	require.NoError(t, a.Server.SetWebhookURL(uint64(a.App.ID), hooks.URL))
	pa, pb, pc := connect(t, a, "ana"), connect(t, b, "ben"), connect(t, cc, "cat")
	players := []*player{pa, pb, pc}

	// Lobby: each joins through its own node, and each sees the three members.
	lobby := joinLobby(t, players, "cluster-secret")

	// Lobby messages: ben and cat send at once, through nodes B and C; every member gets every
	// message once, in id order, which is the order the service committed them.
	got := make([]*inbox, len(players))
	for i, p := range players {
		got[i] = &inbox{}
		p.SetMessageCreatedCallback(core.Func(got[i].add))
	}
	const each = 20
	var wg sync.WaitGroup
	var sentMu sync.Mutex
	sent := map[uint64]string{}
	var answered atomic.Int32 // send callbacks run (in RunCallbacks, so waitFor waits for them too)
	for _, p := range []*player{pb, pc} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				content := fmt.Sprintf("%s %d", p.name, i)
				done := make(chan struct{})
				p.SendLobbyMessage(lobby, content, core.Func(func(r *core.ClientResult, id uint64) {
					if assert.True(t, r.Successful(), "%s: %s", content, r.ToString()) {
						sentMu.Lock()
						sent[id] = content
						sentMu.Unlock()
					}
					answered.Add(1)
					close(done)
				}))
				<-done
			}
		}()
	}
	// The callbacks run in RunCallbacks, on this goroutine.
	waitFor(t, "every member to get every message, and every sender its answers", func() bool {
		if answered.Load() < 2*each {
			return false
		}
		for _, in := range got {
			if in.len() < 2*each {
				return false
			}
		}
		return true
	})
	wg.Wait()
	for i, in := range got {
		in.mu.Lock()
		ids := slices.Clone(in.ids)
		in.mu.Unlock()
		require.Len(t, ids, 2*each, "%s: messages delivered", players[i].name)
		require.True(t, slices.IsSorted(ids), "%s: messages out of order", players[i].name)
		for _, id := range ids {
			require.Contains(t, sent, id, "%s got a message nobody sent", players[i].name)
		}
		// Each sender's messages in the order it sent them.
		var order []string
		for _, id := range ids {
			if strings.HasPrefix(sent[id], "ben ") {
				order = append(order, sent[id])
			}
		}
		for k, s := range order {
			require.Equal(t, fmt.Sprintf("ben %d", k), s, "%s: ben's messages out of order", players[i].name)
		}
	}
	require.Equal(t, "cat 7", pa.GetMessageHandle(keyOf(sent, "cat 7")).Content())

	// The webhook: one delivery per message, though three dispatchers run.
	hooked := map[string]int{}
	for range 2 * each {
		ev := hooks.Next(t, 10*time.Second)
		require.True(t, ev.SignatureOK)
		var m struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal(ev.Event.Event.Data, &m))
		hooked[m.ID]++
	}
	for _, e := range c.Nodes {
		e.SettleWebhooks(t)
	}
	assert.Len(t, hooked, 2*each, "a webhook per message")
	assert.Equal(t, 2*each, hooks.Count(), "each webhook once")

	// DMs from B and C to ana on A, in the order each sent them.
	dms := &inbox{}
	pa.SetMessageCreatedCallback(core.Func(dms.add))
	var dmIDs []uint64
	for i := range 6 {
		from := []*player{pb, pc}[i%2]
		var id uint64
		result(t, "DM", func(done func(*core.ClientResult)) {
			from.SendUserMessage(pa.id, fmt.Sprintf("dm %d", i), core.Func(func(r *core.ClientResult, m uint64) { id = m; done(r) }))
		})
		dmIDs = append(dmIDs, id)
	}
	waitFor(t, "ana to get the DMs", func() bool { return dms.len() == len(dmIDs) })
	assert.Equal(t, dmIDs, dms.ids, "DMs in the order they were sent")

	// Friend requests from B and C reach ana on A; her acceptance on A reaches them.
	result(t, "ben's request", func(done func(*core.ClientResult)) {
		pb.SendGameFriendRequestById(pa.id, core.Func(done))
	})
	result(t, "cat's request", func(done func(*core.ClientResult)) {
		pc.SendGameFriendRequestById(pa.id, core.Func(done))
	})
	waitFor(t, "ana to see both requests", func() bool {
		return pa.GetRelationshipHandle(pb.id).GameRelationshipType() == core.RelationshipTypePendingIncoming &&
			pa.GetRelationshipHandle(pc.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "ana accepts ben", func(done func(*core.ClientResult)) {
		pa.AcceptGameFriendRequest(pb.id, core.Func(done))
	})
	waitFor(t, "ben to see the friendship", func() bool {
		return pb.GetRelationshipHandle(pa.id).GameRelationshipType() == core.RelationshipTypeFriend
	})

	// Presence: the friendship, made on A, shows ben online to ana though ben's session is on B;
	// the rich presence ben sets through B reaches ana on A.
	ben := pa.GetUser(pb.id)
	waitFor(t, "ana to see ben online", func() bool { return ben.Status() == core.StatusTypeOnline })
	act := core.NewActivity()
	act.SetType(core.ActivityTypesPlaying)
	act.SetName("Harbor Siege")
	result(t, "ben's rich presence", func(done func(*core.ClientResult)) {
		pb.UpdateRichPresence(act, core.Func(done))
	})
	waitFor(t, "ana to see ben playing", func() bool { return ben.GameActivity() != nil })
	assert.Equal(t, "Harbor Siege", ben.GameActivity().Name())
	// A session that starts on C gets ben's presence in its READY, though C never had his session.
	ana2 := connect(t, cc, "ana")
	waitFor(t, "ana's second session to see ben playing", func() bool {
		u := ana2.GetUser(pb.id)
		return u != nil && u.GameActivity() != nil
	})
}

// keyOf returns the key of m whose value is v.
func keyOf(m map[uint64]string, v string) uint64 {
	for k, x := range m {
		if x == v {
			return k
		}
	}
	return 0
}

// /readyz reports the store and the bus: a node whose bus is gone is not ready (503), while
// /healthz, which only tells that the process serves, stays up.
func TestReadyzReportsTheBus(t *testing.T) {
	c := clustertest.Start(t, 1)
	e := c.Nodes[0]
	readyz := func() (int, map[string]any) {
		resp, err := http.Get(e.URL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	status, body := readyz()
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.Equal(t, map[string]any{"status": "ready", "store": "ok", "bus": "ok"}, body)
	c.NATS.Shutdown()
	status, body = readyz()
	assert.Equal(t, http.StatusServiceUnavailable, status, "%v", body)
	assert.Equal(t, map[string]any{"status": "not ready", "store": "ok", "bus": "unavailable"}, body)
	resp, err := http.Get(e.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// api makes a request to an API base with a bearer token and decodes the answer into out.
func api(t testing.TB, method, base, path, bearer string, body, out any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, "%s %s: %d", method, path, resp.StatusCode)
	if out != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
}

// A player behind a load balancer (a proxy) whose node drops out of it resumes on another node:
// the SDK reconnects through the proxy, now to node B, which replays from the bus what the
// player missed while lobby messages kept coming from B and C; nothing is lost, nothing comes
// twice, the order holds, and there is no new READY.
func TestSessionResumesOnAnotherNode(t *testing.T) {
	p := servertest.NewProxy(t, "127.0.0.1:1")
	addrs := []string{servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)}
	p.SetTarget(addrs[0])
	c := clustertest.StartEach(t, 3, func(i int, cfg *server.Config) {
		cfg.Addr, cfg.PublicURL = addrs[i], "http://"+p.Addr()
		cfg.RateLimits.Disabled = true // the senders send as fast as they can
	})
	direct := func(i int) string { return "http://" + addrs[i] + "/api/v10" }
	e := c.Nodes[0]
	env := *e
	env.APIURL, env.URL = direct(0), "http://"+addrs[0]
	x := connect(t, &env, "xena") // token from node A; its SDK goes through the proxy
	require.Equal(t, 1, c.Nodes[0].Server.Hub().Sessions(x.id), "the player is on node A")

	// Two senders on B and C, through the API only.
	senders := []string{env.ProvisionalToken(t, "sam", "sam"), env.ProvisionalToken(t, "sue", "sue")}
	var lobby struct {
		ID string `json:"id"`
	}
	for i, tok := range senders {
		api(t, http.MethodPut, direct(i+1), "/lobbies", tok, map[string]any{"secret": "resume-secret"}, &lobby)
	}
	var joined uint64
	result(t, "xena joins", func(done func(*core.ClientResult)) {
		x.CreateOrJoinLobby("resume-secret", core.Func(func(r *core.ClientResult, l uint64) { joined = l; done(r) }))
	})
	require.Equal(t, lobby.ID, fmt.Sprint(joined))
	in := &inbox{}
	x.SetMessageCreatedCallback(core.Func(in.add))

	// Messages from B and C; then node A leaves the balancer and the player's connection drops;
	// more messages while the player cannot reach any node; then node B joins the balancer.
	const before, during = 20, 40
	send := func(n int) {
		var wg sync.WaitGroup
		for i, tok := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range n {
					api(t, http.MethodPost, direct(i+1), "/lobbies/"+lobby.ID+"/messages", tok,
						map[string]any{"content": fmt.Sprintf("%d-%d", i, k)}, nil)
				}
			}()
		}
		wg.Wait()
	}
	send(before)
	p.SetTarget("127.0.0.1:1")
	p.Cut()
	send(during)
	p.SetTarget(addrs[1])
	total := 2 * (before + during)
	waitFor(t, "every message", func() bool { return in.len() >= total })
	waitFor(t, "the resume on node B", func() bool { return c.Nodes[1].Server.Hub().Stats().Resumes == 1 })
	in.mu.Lock()
	ids := slices.Clone(in.ids)
	in.mu.Unlock()
	assert.Len(t, ids, total, "each message once")
	assert.True(t, slices.IsSorted(ids), "in order")
	assert.Len(t, slices.Compact(slices.Clone(ids)), len(ids), "no duplicates")
	b := c.Nodes[1].Server.Hub().Stats()
	assert.Zero(t, b.Identifies, "no new READY")
	assert.GreaterOrEqual(t, b.Replayed, uint64(2*during), "what the player missed came from the bus")
	assert.Equal(t, 1, c.Nodes[1].Server.Hub().Sessions(x.id), "the session is node B's")
	waitFor(t, "node A to let the session go", func() bool { return len(c.Nodes[0].Server.Hub().UserSessions(x.id)) == 0 })
}

// A bot whose gateway session is on node C gets the guild events of users whose requests reach
// node A, in the order A committed them.
func TestBotOnAnotherNodeGetsGuildEvents(t *testing.T) {
	c := clustertest.Start(t, 3)
	a, cc := c.Nodes[0], c.Nodes[2]
	bot := a.App.BotUserID
	g, err := a.Server.CreateGuild(wire.GuildSpec{Name: "Cluster", OwnerID: a.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: a.User("bob").ID}, {ID: bot}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
	require.NoError(t, err)
	gw := guildtest.Dial(t, cc, "?v=10&encoding=json")
	gw.Identify(a.App.BotToken, gwire.IntentGuilds|gwire.IntentGuildMessages)
	alice := a.Token(t, "alice", "openid sdk.social_layer").AccessToken
	ch := g.Channels[0].ID
	var sent []wire.Snowflake
	for i := range 5 {
		var m wire.GuildMessage
		guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, a.APIURL+"/channels/"+ch.String()+"/messages",
			map[string]any{"content": fmt.Sprint("hello ", i)}, guildtest.Bearer(alice)), &m)
		sent = append(sent, m.ID)
	}
	var got []wire.Snowflake
	for len(got) < len(sent) {
		var m wire.GuildMessage
		gw.Until(gwire.EventMessageCreate, &m)
		got = append(got, m.ID)
	}
	assert.Equal(t, sent, got, "the bot on C got A's messages, in order")
}
