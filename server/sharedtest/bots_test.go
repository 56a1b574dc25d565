package sharedtest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
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
