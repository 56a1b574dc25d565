package sharedtest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/console"
	"sdkpp/server/loginthrottle"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
)

// One identity's rate limit holds when its requests are spread over three nodes: a bot allowed
// 6 requests per window to a route gets 6 answers in all, not 6 per node, whichever node it
// asks; the next window serves it again on every node.
func TestRateLimitHoldsAcrossThreeNodes(t *testing.T) {
	t.Parallel()
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

// The sign-in throttle holds across nodes: wrong passwords for one username spread over three
// nodes lock it on all of them after MaxLoginFailures in all.
func TestLoginThrottleHoldsAcrossThreeNodes(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	nodes := cluster(t, 3, clk, nil)
	csrf := strings.Repeat("c", 32)
	signIn := func(e *servertest.Env) int {
		form := url.Values{"username": {"admin"}, "password": {"wrong"}, "csrf_token": {csrf}}
		req, err := http.NewRequest(http.MethodPost, e.URL+"/console/signin", strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: console.CSRFCookie, Value: csrf})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	for i := range loginthrottle.MaxLoginFailures {
		require.Equal(t, http.StatusUnauthorized, signIn(nodes[i%3]), "failure %d", i+1)
	}
	for _, n := range nodes {
		assert.Equal(t, http.StatusTooManyRequests, signIn(n), "locked on every node")
	}
	clk.Advance(loginthrottle.Lockout)
	assert.Equal(t, http.StatusUnauthorized, signIn(nodes[2]), "the lock ends")
}
