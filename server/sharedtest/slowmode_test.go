package sharedtest_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// Slowmode holds across nodes: a member who sent on node 1 waits on node 2 too, and of two
// messages sent at once on two nodes, one is refused.
func TestSlowmodeHoldsAcrossNodes(t *testing.T) {
	t.Parallel()
	u := database(t)
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	f := guildtest.NewBots(t, servertest.WithClock(clk), node(u, 1))
	other := servertest.Start(t, servertest.WithClock(clk), node(u, 2))
	ch := f.Channel("general").ID.String()
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.API("/channels/"+ch), map[string]any{"rate_limit_per_user": 10},
		guildtest.Bearer(f.Alice)), nil)
	send := func(e *servertest.Env) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/channels/"+ch+"/messages", map[string]any{"content": "hi"},
			guildtest.Bearer(f.Bob))
	}
	guildtest.OK(t, send(f.E), nil)
	r := send(other)
	require.Equal(t, http.StatusTooManyRequests, r.Status, "sent on node 1, waits on node 2: %s", r.Body)
	var body wire.SlowmodeRateLimited
	r.JSON(t, &body)
	assert.InDelta(t, 10.0, body.RetryAfter, 1e-9)

	clk.Advance(10 * time.Second)
	statuses := make([]int, 2)
	var wg sync.WaitGroup
	for i, e := range []*servertest.Env{f.E, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = send(e).Status
		}()
	}
	wg.Wait()
	assert.ElementsMatch(t, []int{http.StatusOK, http.StatusTooManyRequests}, statuses, "one of two racing messages")
}
