package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/console"
	"sdkpp/server/servertest"
	"sdkpp/server/snowflake"
	"sdkpp/server/store/pgtest"
)

// Two service instances on one PostgreSQL: each writes its heartbeat to the node registry, so
// the console's cluster page of either shows both nodes up with their sessions, and each
// node's metrics carry its own node label. A node that stops is shown down once its heartbeat
// is DownHeartbeats old.
func TestClusterPageShowsEveryNode(t *testing.T) {
	storeURL := pgtest.Database(t, "", nil)
	const beat = 2 * time.Second // down after 6 s: room for a loaded machine's late beats
	node := func(id int) *servertest.Env {
		return servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
			c.Store, c.NodeID, c.MetricsAddr, c.NodeHeartbeat = storeURL, id, "127.0.0.1:0", beat
		}))
	}
	a, b := node(1), node(2)
	ctx := context.Background()
	clk := a.Clock
	_, err := console.AddOperator(ctx, a.Server.Store(), snowflake.New(clk, 1), clk.Now(), "watcher", "viewer",
		"a long operator password")
	require.NoError(t, err)

	c := signIn(t, b.URL, "watcher", "a long operator password")
	rows := func() map[string]string {
		body := c.get(t, "/console/nodes")
		out := map[string]string{}
		for _, m := range regexp.MustCompile(`(?s)<tr id="node-(\d+)">(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
			out[m[1]] = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[2], "|")
		}
		return out
	}
	require.Eventually(t, func() bool { return len(rows()) == 2 }, 10*time.Second, 20*time.Millisecond,
		"both nodes on the cluster page of node 2")
	got := rows()
	assert.Contains(t, got["1"], a.URL)
	assert.Contains(t, got["1"], "|up|")
	assert.Contains(t, got["2"], "2 (this node)")
	assert.Contains(t, got["2"], b.URL)

	for id, e := range map[string]*servertest.Env{"1": a, "2": b} {
		metrics := func() string {
			res, err := http.Get(e.Server.MetricsURL())
			require.NoError(t, err)
			raw, err := io.ReadAll(res.Body)
			res.Body.Close()
			require.NoError(t, err)
			return string(raw)
		}
		// The page shows a node itself before its first heartbeat's run has ended and counted.
		require.Eventually(t, func() bool {
			return strings.Contains(metrics(), `sdkpp_job_runs_total{job="node_heartbeat",node="`+id+`"}`)
		}, 10*time.Second, 20*time.Millisecond, "node %s counted its heartbeat", id)
		other := map[string]string{"1": "2", "2": "1"}[id]
		assert.NotContains(t, metrics(), `node="`+other+`"`, "node %s's metrics are its own", id)
	}

	require.NoError(t, a.Server.Close())
	b.Clock.Advance(server.DownHeartbeats * beat)
	require.Eventually(t, func() bool { return strings.Contains(rows()["1"], "|down|") }, 10*time.Second,
		20*time.Millisecond, "node 1 stopped: down once its heartbeat is %d heartbeats old", server.DownHeartbeats)
	assert.Contains(t, rows()["2"], "|up|")
}

// consoleClient is a browser-like client of a console, signed in.
type consoleClient struct {
	base string
	http *http.Client
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func signIn(t *testing.T, base, username, password string) *consoleClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &consoleClient{base: base, http: &http.Client{Jar: jar}}
	m := csrfField.FindStringSubmatch(c.get(t, "/console/signin"))
	require.NotNil(t, m)
	res, err := c.http.PostForm(base+"/console/signin", url.Values{"username": {username}, "password": {password},
		"csrf_token": {m[1]}})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "signed in, on the players page")
	return c
}

func (c *consoleClient) get(t *testing.T, path string) string {
	t.Helper()
	res, err := c.http.Get(c.base + path)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, path)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}
