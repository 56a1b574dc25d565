package sharedtest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/ratelimit"
)

// One identity's rate limit holds when its requests are spread over three nodes: a bot allowed
// 6 requests per window to a route gets 6 answers in all, not 6 per node, whichever node it
// asks; the next window serves it again on every node.
func TestRateLimitHoldsAcrossThreeNodes(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	const limit = 6
	nodes := cluster(t, 3, clk, func(c *server.Config) {
		c.RateLimits = ratelimit.Config{Routes: map[string]ratelimit.Rule{"GET /users/@me": {Limit: limit, Window: 10 * time.Second}}}
	})
	auth := "Bot " + nodes[0].App.BotToken
	served := map[int]int{}
	for i := range 3 * limit {
		node := i % 3
		switch status := get(t, nodes[node].APIURL+"/users/@me", auth); status {
		case http.StatusOK:
			served[node]++
		default:
			assert.Equal(t, http.StatusTooManyRequests, status)
		}
	}
	assert.Equal(t, map[int]int{0: 2, 1: 2, 2: 2}, served, "six answers in all, two per node as they came")
	clk.Advance(10 * time.Second)
	for _, n := range nodes {
		assert.Equal(t, http.StatusOK, get(t, n.APIURL+"/users/@me", auth), "a new window")
	}
}
