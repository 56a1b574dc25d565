package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// GET /gateway/bot: the gateway URL, one shard, and session_start_limit counted per bot on the
// service's clock (each Identify takes one; the window resets after reset_after); max_concurrency
// is the application's (rule GLD-1). The gateway takes Identify's compress and zlib-stream.
func TestGatewayBot(t *testing.T) {
	f := guildtest.NewBots(t, servertest.WithFrozenClock(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)))
	get := func(base string) wire.GatewayBot {
		t.Helper()
		r := guildtest.Do(t, http.MethodGet, base+"/gateway/bot", nil, guildtest.Bot(f.E.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "gateway/bot: %s", r.Body)
		var out wire.GatewayBot
		r.JSON(t, &out)
		return out
	}
	gb := get(f.E.APIURL)
	assert.Equal(t, "ws"+strings.TrimPrefix(f.E.URL, "http")+server.GatewayPath, gb.URL)
	assert.Equal(t, 1, gb.Shards)
	assert.Equal(t, wire.SessionStartLimit{Total: 1000, Remaining: 1000, ResetAfter: 86400000, MaxConcurrency: 1}, gb.SessionStartLimit)
	guildtest.Dial(t, f.E, "").Identify(f.E.App.BotToken, 0)
	f.E.Clock.Advance(time.Hour)
	gb = get(f.E.URL + "/api/v9") // v9 serves the same API
	assert.Equal(t, 999, gb.SessionStartLimit.Remaining)
	assert.Equal(t, int64(23*3600*1000), gb.SessionStartLimit.ResetAfter)
	f.E.Clock.Advance(23 * time.Hour)
	assert.Equal(t, 1000, get(f.E.APIURL).SessionStartLimit.Remaining)

	require.NoError(t, f.E.Server.SetMaxConcurrency(uint64(f.E.App.ID), 16))
	gb = get(f.E.APIURL)
	assert.Equal(t, 16, gb.SessionStartLimit.MaxConcurrency, "GLD-1")
	assert.Equal(t, 16, gb.Shards, "a multiple of max_concurrency")

	guildtest.ExpectAPIError(t, "no token", guildtest.Do(t, http.MethodGet, f.E.APIURL+"/gateway/bot", nil, nil), 401, 0)
	guildtest.ExpectAPIError(t, "bearer token", guildtest.Do(t, http.MethodGet, f.E.APIURL+"/gateway/bot", nil, guildtest.Bearer(f.Alice)), 401, 0)
	guildtest.ExpectAPIError(t, "wrong bot token", guildtest.Do(t, http.MethodGet, f.E.APIURL+"/gateway/bot", nil, guildtest.Bot("x")), 401, 0)

	me := guildtest.Do(t, http.MethodGet, f.E.URL+"/api/v9/users/@me", nil, guildtest.Bot(f.E.App.BotToken))
	assert.Equal(t, http.StatusOK, me.Status, "v9 /users/@me: %s", me.Body)
}
