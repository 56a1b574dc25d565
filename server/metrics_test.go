package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// scrape reads the service's /metrics as a map from series (name and sorted labels, as
// Prometheus writes them) to value.
func scrape(t *testing.T, e *servertest.Env) map[string]float64 {
	t.Helper()
	r, err := http.Get(e.Server.MetricsURL())
	require.NoError(t, err)
	defer r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for name, f := range families {
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, f)
		require.NoError(t, err, name)
		for _, s := range vec {
			out[s.Metric.String()] = float64(s.Value)
		}
	}
	return out
}

// matching returns the series of name whose labels include each of want.
func matching(all map[string]float64, name string, want ...string) []string {
	var found []string
	for k := range all {
		if !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(k, w)
		}
		if ok {
			found = append(found, k)
		}
	}
	return found
}

// series returns the value of the one series of name whose labels include each of want.
func series(t *testing.T, all map[string]float64, name string, want ...string) float64 {
	t.Helper()
	found := matching(all, name, want...)
	require.Len(t, found, 1, "series %s%v", name, want)
	return all[found[0]]
}

// seriesOr0 is series, or 0 when the series does not exist yet.
func seriesOr0(all map[string]float64, name string, want ...string) float64 {
	if found := matching(all, name, want...); len(found) == 1 {
		return all[found[0]]
	}
	return 0
}

// idLike matches a label value that could be an id: a run of 6 or more digits.
var idLike = regexp.MustCompile(`="[^"]*[0-9]{6,}[^"]*"`)

// The metrics listener (rule of issue 30): 10,000 lobby messages move the request counter of
// their route and the gateway's dispatch and delivery counters by exactly 10,000, and no label
// of any series holds an id.
func TestMetricsCountLobbyMessages(t *testing.T) {
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.RateLimits = ratelimit.Config{Disabled: true}
	}))
	alice := e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	bob := e.Token(t, "bob", "openid sdk.social_layer").AccessToken
	var lobby wire.Lobby
	sendJSON(t, http.MethodPut, e.APIURL+"/lobbies", map[string]any{"secret": "metrics"}, bearer(alice)).json(t, &lobby)
	r := sendJSON(t, http.MethodPut, e.APIURL+"/lobbies", map[string]any{"secret": "metrics"}, bearer(bob))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	// Bob listens on the gateway and counts the messages.
	gw := identifyToken(t, e, bob)
	var got atomic.Int64
	allIn := make(chan struct{})
	const n = 10000
	go func() { // ends when the test closes the connection
		for {
			_, raw, err := gw.ws.Read(t.Context())
			if err != nil {
				return
			}
			var p gwire.Payload
			if json.Unmarshal(raw, &p) == nil && p.T != nil && *p.T == "LOBBY_MESSAGE_CREATE" && got.Add(1) == n {
				close(allIn)
			}
		}
	}()
	gw.send(gwire.OpHeartbeat, nil) // nothing else is in flight before the first scrape
	before := scrape(t, e)

	url := e.APIURL + "/lobbies/" + lobby.ID.String() + "/messages"
	var wg sync.WaitGroup
	var failed atomic.Int64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections() // a spare dial would hold the service's shutdown
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"content":"hello"}`))
				req.Header.Set("Authorization", "Bearer "+alice)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "messages refused")
	select {
	case <-allIn:
	case <-t.Context().Done():
		t.Fatalf("bob got %d of %d messages", got.Load(), n)
	}
	after := scrape(t, e)

	route := `route="POST /api/lobbies/{lobby_id}/messages"`
	delta := func(name string, labels ...string) float64 {
		return series(t, after, name, labels...) - seriesOr0(before, name, labels...)
	}
	assert.Equal(t, float64(n), delta("sdkpp_http_requests_total", route, `via="http"`, `code="200"`))
	assert.Equal(t, float64(n), delta("sdkpp_http_request_duration_seconds_count", route))
	event := `event="LOBBY_MESSAGE_CREATE"`
	assert.Equal(t, float64(n), delta("sdkpp_gateway_dispatches_total", event), "one dispatch a message")
	assert.Equal(t, float64(n), delta("sdkpp_gateway_dispatch_deliveries_total", event), "bob's one session")
	assert.Equal(t, 1.0, series(t, after, "sdkpp_gateway_sessions", `state="connected"`))
	assert.Positive(t, series(t, after, "go_goroutines"), "the Go runtime's metrics")
	// One statement a message (SQLite), or one a group of messages committed together
	// (PostgreSQL: StartLobbyMessages when the group is sent while the last one's result is
	// read), labelled by the store operation.
	var inserts float64
	for _, op := range []string{`operation="InsertLobbyMessage"`, `operation="InsertLobbyMessages"`,
		`operation="StoreLobbyMessages"`, `operation="StartLobbyMessages"`} {
		inserts += seriesOr0(after, "sdkpp_store_query_duration_seconds_count", op) -
			seriesOr0(before, "sdkpp_store_query_duration_seconds_count", op)
	}
	assert.Positive(t, inserts, "no insert statement labelled by its store operation")
	assert.LessOrEqual(t, inserts, float64(n), "more insert statements than messages")
	assert.Positive(t, series(t, after, "sdkpp_store_query_duration_seconds_count", `operation="commit"`))
	for _, job := range []string{"node_heartbeat", "operator_session_prune", "lobby_expiry", "webhook_dispatch"} {
		assert.Positive(t, series(t, after, "sdkpp_job_runs_total", `job="`+job+`"`), job)
		assert.Positive(t, series(t, after, "sdkpp_job_duration_seconds_count", `job="`+job+`"`), job)
	}
	for k := range after {
		assert.NotRegexp(t, idLike, k, "a label holds an id")
		assert.Contains(t, k, `node="0"`, "every series carries the node's id")
	}
}
