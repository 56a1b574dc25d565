package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to watch the database's lock waits
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/clustertest"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Order keys are each a thing's (issue 23): a DM channel's order lock held (here by the test, as
// by a node slow under it) holds back that channel's changes only, while another channel's DMs,
// between players on the other nodes, are committed and delivered; a relationship change waits
// only when one of its two users' keys is held. Once the locks are free, what waited goes on.
func TestOrderKeysAreEachThings(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 2)
	ana, ben := connect(t, c.Nodes[0], "ana"), connect(t, c.Nodes[1], "ben")
	cat, dan := connect(t, c.Nodes[1], "cat"), connect(t, c.Nodes[0], "dan")
	names := map[uint64]string{ana.id: "ana", ben.id: "ben", cat.id: "cat", dan.id: "dan"}
	journals := map[*player]*journal{ben: {}, dan: {}}
	for p, j := range journals {
		j.listen(p, names)
	}
	st, err := store.OpenPostgres(ctx, c.Store, store.PostgresOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	db, err := sql.Open("pgx", c.Store)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	waiting := func(n int) func() bool { // n sessions wait for a lock
		return func() bool {
			var got int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&got))
			return got == n
		}
	}
	var channel struct {
		ID wire.Snowflake `json:"id"`
	}
	api(t, http.MethodPost, c.Nodes[0].APIURL, "/users/@me/channels", c.Nodes[0].ProvisionalToken(t, "ana", "ana"),
		map[string]any{"recipient_id": wire.Snowflake(ben.id)}, &channel)

	dmLock, err := st.OrderLock(ctx, fmt.Sprint("dm:", channel.ID), nil)
	require.NoError(t, err)
	var anaDM *core.ClientResult
	ana.SendUserMessage(ben.id, "held back", core.Func(func(r *core.ClientResult, _ uint64) { anaDM = r }))
	waitFor(t, "ana's DM to wait for its channel's order lock", waiting(1))
	result(t, "cat's DM to dan, in another channel, through the other node", func(done func(*core.ClientResult)) {
		cat.SendUserMessage(dan.id, "goes on", core.Func(func(r *core.ClientResult, _ uint64) { done(r) }))
	})
	waitFor(t, "dan to get cat's DM", func() bool { return slices.Contains(journals[dan].list(), "create goes on") })

	relLock, err := st.OrderLock(ctx, fmt.Sprint("rel:", ana.id), nil)
	require.NoError(t, err)
	var benAsks *core.ClientResult
	ben.SendGameFriendRequestById(ana.id, core.Func(func(r *core.ClientResult) { benAsks = r }))
	waitFor(t, "ben's request to ana to wait for ana's order lock", waiting(2))
	result(t, "cat's request to dan, between other users", func(done func(*core.ClientResult)) {
		cat.SendGameFriendRequestById(dan.id, core.Func(done))
	})
	waitFor(t, "dan to get cat's request", func() bool { return slices.Contains(journals[dan].list(), "relationship cat") })
	assert.Nil(t, anaDM, "ana's DM waits while its channel's lock is held")
	assert.Nil(t, benAsks, "ben's request waits while ana's lock is held")
	assert.NotContains(t, journals[ben].list(), "create held back")

	dmLock.Unlock(nil)
	relLock.Unlock(nil)
	waitFor(t, "what waited to be answered", func() bool { return anaDM != nil && benAsks != nil })
	require.True(t, anaDM.Successful(), anaDM.ToString())
	require.True(t, benAsks.Successful(), benAsks.ToString())
	waitFor(t, "ben to get ana's DM", func() bool { return slices.Contains(journals[ben].list(), "create held back") })
}

// Two players on two nodes DM each other at once, many messages each without waiting for their
// answers: both SDKs get every message of the channel, in one order, that of the channel's
// history (newest first by id): the commit order is the ids' order. An SDK drops a message not
// newer than the last one it delivered in the channel, so one overtaken would be missing.
func TestDMChannelKeepsItsOrderAcrossNodes(t *testing.T) {
	const each = 40
	// The nodes' clock stands still: every id is made in one millisecond, where node 2's ids are
	// above node 1's but for the order lock's floor (package order), which keeps them increasing
	// along the commits whichever node made them.
	clk := clock.NewFake(time.Now())
	c := clustertest.StartEach(t, 2, func(_ int, cfg *server.Config) {
		cfg.RateLimits.Disabled = true // all at once
	}, servertest.WithClock(clk))
	ana, ben := connect(t, c.Nodes[0], "ana"), connect(t, c.Nodes[1], "ben")
	type delivered struct {
		content string
		id      uint64
	}
	var mu sync.Mutex
	got := map[*player][]delivered{}
	for _, p := range []*player{ana, ben} {
		p.SetMessageCreatedCallback(core.Func(func(id uint64) {
			mu.Lock()
			defer mu.Unlock()
			got[p] = append(got[p], delivered{p.GetMessageHandle(id).Content(), id})
		}))
	}
	answered := 0
	for i := range each {
		for _, s := range []struct{ from, to *player }{{ana, ben}, {ben, ana}} {
			s.from.SendUserMessage(s.to.id, fmt.Sprintf("%s %d", s.from.name, i), core.Func(func(r *core.ClientResult, _ uint64) {
				require.True(t, r.Successful(), r.ToString())
				answered++
			}))
		}
	}
	waitFor(t, "every send to be answered", func() bool { return answered == 2*each })
	count := func(p *player) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got[p]) == 2*each
		}
	}
	waitFor(t, "ana to get every message", count(ana))
	waitFor(t, "ben to get every message", count(ben))

	var history []wire.Message
	var channel struct {
		ID wire.Snowflake `json:"id"`
	}
	token := c.Nodes[0].ProvisionalToken(t, "ana", "ana")
	api(t, http.MethodPost, c.Nodes[0].APIURL, "/users/@me/channels", token, map[string]any{"recipient_id": wire.Snowflake(ben.id)}, &channel)
	api(t, http.MethodGet, c.Nodes[0].APIURL, fmt.Sprintf("/channels/%d/messages?limit=%d", channel.ID, 2*each), token, nil, &history)
	require.Len(t, history, 2*each)
	var want []delivered
	for _, m := range slices.Backward(history) {
		want = append(want, delivered{m.Content, uint64(m.ID)})
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got[ana], "ana: the commit order")
	assert.Equal(t, want, got[ben], "ben: the commit order")
}
