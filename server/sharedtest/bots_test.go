package sharedtest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// A bot's session starts and its requests for all members of a guild are counted across nodes:
// Identifies on three nodes take three of one budget, which GET /gateway/bot shows on any node;
// a request for all members on node 1 makes one on node 2 RATE_LIMITED (rule GW-2).
func TestBotBudgetsHoldAcrossNodes(t *testing.T) {
	t.Parallel()
	u := database(t)
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	f := guildtest.NewBots(t, servertest.WithClock(clk), node(u, 1))
	nodes := []*servertest.Env{f.E, servertest.Start(t, servertest.WithClock(clk), node(u, 2)), servertest.Start(t, servertest.WithClock(clk), node(u, 3))}
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayGuildMembersLimited)
	sessions := make([]*guildtest.Gateway, len(nodes))
	for i, n := range nodes {
		sessions[i] = guildtest.Dial(t, n, "")
		sessions[i].Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	}
	r := guildtest.Do(t, http.MethodGet, nodes[1].APIURL+"/gateway/bot", nil, f.BotHeader())
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var gb wire.GatewayBot
	r.JSON(t, &gb)
	assert.Equal(t, gateway.DefaultSessionStarts-3, gb.SessionStartLimit.Remaining, "three Identifies on three nodes, one budget")

	all := map[string]any{"guild_id": f.Guild.ID.String(), "query": "", "limit": 0, "nonce": "a"}
	sessions[0].Send(gwire.OpRequestGuildMembers, all)
	var chunk wire.GuildMembersChunk
	sessions[0].Expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	clk.Advance(10 * time.Second)
	sessions[1].Send(gwire.OpRequestGuildMembers, all)
	var rl wire.RateLimitedEvent
	sessions[1].Expect(gwire.OpDispatch, gwire.EventRateLimited, &rl)
	assert.InDelta(t, 20.0, rl.RetryAfter, 0.001, "GW-2 across nodes")
	clk.Advance(20 * time.Second)
	sessions[2].Send(gwire.OpRequestGuildMembers, all)
	sessions[2].Expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
}

// max_concurrency holds across nodes: one bot's Identifies of one rate-limit bucket, sent at once
// to three nodes, start one session and get two Invalid Sessions; with max_concurrency 3 the
// three shards (three buckets) start at once, one on each node.
func TestMaxConcurrencyHoldsAcrossNodes(t *testing.T) {
	t.Parallel()
	u := database(t)
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	window := servertest.WithConfig(func(c *server.Config) { c.IdentifyWindow = 0 }) // the platform's
	f := guildtest.NewBots(t, servertest.WithClock(clk), node(u, 1), window)
	nodes := []*servertest.Env{f.E, servertest.Start(t, servertest.WithClock(clk), node(u, 2), window),
		servertest.Start(t, servertest.WithClock(clk), node(u, 3), window)}
	identify := func(shards int) (ready, invalid int) {
		t.Helper()
		results := make(chan int, len(nodes))
		for i, n := range nodes {
			g := guildtest.Dial(t, n, "")
			go func() { // owned by the test, which reads every result
				p, err := g.TryRead()
				if err != nil {
					results <- -1
					return
				}
				results <- p.Op
			}()
			d := map[string]any{"token": f.E.App.BotToken, "intents": 0,
				"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}}
			if shards > 0 {
				d["shard"] = []int{i, shards}
			}
			g.Send(gwire.OpIdentify, d)
		}
		for range nodes {
			switch <-results {
			case gwire.OpDispatch:
				ready++
			case gwire.OpInvalidSession:
				invalid++
			}
		}
		return ready, invalid
	}
	ready, invalid := identify(0)
	assert.Equal(t, [2]int{1, 2}, [2]int{ready, invalid}, "one bucket: one start in the window, whichever node")
	clk.Advance(gateway.DefaultIdentifyWindow)
	require.NoError(t, f.E.Server.SetMaxConcurrency(uint64(f.E.App.ID), 3))
	ready, invalid = identify(3)
	assert.Equal(t, [2]int{3, 0}, [2]int{ready, invalid}, "three buckets: three starts at once")
	r := guildtest.Do(t, http.MethodGet, nodes[2].APIURL+"/gateway/bot", nil, f.BotHeader())
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var gb wire.GatewayBot
	r.JSON(t, &gb)
	assert.Equal(t, gateway.DefaultSessionStarts-4, gb.SessionStartLimit.Remaining, "refused Identifies use no start")
}
