package metrics

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/gateway"
	"sdkpp/server/relay"
	"sdkpp/server/webhook"
)

// get serves one request through h and returns the response's status.
func get(h http.Handler, target string, header http.Header) int {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func TestHTTPLabelsByRouteTemplate(t *testing.T) {
	m := New("node-a")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /limited", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Scope", "user")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	mux.HandleFunc("GET /upgrade", func(w http.ResponseWriter, r *http.Request) {}) // as if hijacked
	routed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, p := mux.Handler(r); p != "" {
			SetRoute(r, p)
		}
		mux.ServeHTTP(w, r)
	})
	h := m.HTTP("http", routed)
	for _, id := range []string{"123456789012345678", "876543210987654321"} {
		require.Equal(t, http.StatusOK, get(h, "/users/"+id, nil))
	}
	require.Equal(t, http.StatusTooManyRequests, get(h, "/limited", nil))
	require.Equal(t, http.StatusNotFound, get(h, "/nothing/here", nil))
	get(h, "/upgrade", http.Header{"Upgrade": {"websocket"}})

	assert.Equal(t, 2.0, testutil.ToFloat64(m.requests.WithLabelValues("GET /users/{id}", "http", "200")),
		"two ids, one series")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.limited.WithLabelValues("GET /limited", "user")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.requests.WithLabelValues(Unmatched, "http", "404")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.requests.WithLabelValues("GET /upgrade", "http", "101")))
	assert.Equal(t, 4, testutil.CollectAndCount(m.requests), "series of requests")

	var none *Metrics
	assert.Equal(t, http.StatusOK, get(none.HTTP("http", routed), "/users/1", nil), "nil Metrics passes through")
	none.Register(Voice(func() (int, int) { return 0, 0 }))
}

func TestCollectorsReadTheParts(t *testing.T) {
	gw := Gateway(func() gateway.Stats {
		return gateway.Stats{Connections: 3, Sessions: 4, Connected: 3, Queued: 7, QueuedMax: 5, Identifies: 10,
			Resumes: 2, Replayed: 9, Closes: map[int]uint64{4004: 1, 0: 2},
			Events: map[string]gateway.EventStats{"MESSAGE_CREATE": {Dispatches: 100, Deliveries: 250}, "READY": {Dispatches: 1}}}
	})
	require.NoError(t, testutil.CollectAndCompare(gw, strings.NewReader(`
# HELP sdkpp_gateway_sessions Gateway sessions, by state: connected, or waiting to be resumed.
# TYPE sdkpp_gateway_sessions gauge
sdkpp_gateway_sessions{state="connected"} 3
sdkpp_gateway_sessions{state="resumable"} 1
# HELP sdkpp_gateway_closes_total Connections ended, by the close code the service sent (0: none, the client went first).
# TYPE sdkpp_gateway_closes_total counter
sdkpp_gateway_closes_total{code="0"} 2
sdkpp_gateway_closes_total{code="4004"} 1
# HELP sdkpp_gateway_dispatch_deliveries_total Sessions the dispatches were pushed to (the fan-out), by event name.
# TYPE sdkpp_gateway_dispatch_deliveries_total counter
sdkpp_gateway_dispatch_deliveries_total{event="MESSAGE_CREATE"} 250
sdkpp_gateway_dispatch_deliveries_total{event="READY"} 0
`), "sdkpp_gateway_sessions", "sdkpp_gateway_closes_total", "sdkpp_gateway_dispatch_deliveries_total"))

	rl := Relay(func() relay.Stats {
		return relay.Stats{Received: 10, Forwarded: 18, ReceivedBytes: 1000, ForwardedBytes: 1800, Spoofed: 2,
			Flows: 3, BoundFlows: 2, Calls: 1}
	})
	require.NoError(t, testutil.CollectAndCompare(rl, strings.NewReader(`
# HELP sdkpp_voice_relay_flows Participants' flows open on the relay, by whether an address is bound.
# TYPE sdkpp_voice_relay_flows gauge
sdkpp_voice_relay_flows{state="bound"} 2
sdkpp_voice_relay_flows{state="unbound"} 1
# HELP sdkpp_voice_relay_bytes_total Bytes of the UDP packets received and forwarded.
# TYPE sdkpp_voice_relay_bytes_total counter
sdkpp_voice_relay_bytes_total{direction="forwarded"} 1800
sdkpp_voice_relay_bytes_total{direction="received"} 1000
`), "sdkpp_voice_relay_flows", "sdkpp_voice_relay_bytes_total"))
	assert.Equal(t, 6, testutil.CollectAndCount(rl, "sdkpp_voice_relay_dropped_packets_total"), "one series a reason")

	wh := Webhooks(func() webhook.Stats { return webhook.Stats{Delivered: 5, Retried: 2, Failed: 1} })
	require.NoError(t, testutil.CollectAndCompare(wh, strings.NewReader(`
# HELP sdkpp_webhook_attempts_total Webhook delivery attempts, by result: delivered, retried (failed, will be tried again) or failed (given up).
# TYPE sdkpp_webhook_attempts_total counter
sdkpp_webhook_attempts_total{result="delivered"} 5
sdkpp_webhook_attempts_total{result="failed"} 1
sdkpp_webhook_attempts_total{result="retried"} 2
`)))
	assert.Equal(t, 2, testutil.CollectAndCount(Voice(func() (int, int) { return 1, 3 })))
}

// Background jobs count runs and failures and time them; store statements and bus deliveries
// are timed by operation and kind; a clock skew's negative lag counts as zero.
func TestJobsStoreAndBus(t *testing.T) {
	m := New("n")
	m.JobRun("webhook_dispatch", 3*time.Millisecond, nil)
	m.JobRun("webhook_dispatch", time.Millisecond, errors.New("queue unreadable"))
	m.JobRun("lobby_expiry", time.Millisecond, nil)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.jobRuns.WithLabelValues("webhook_dispatch")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.jobFailures.WithLabelValues("webhook_dispatch")))
	assert.Equal(t, 1, testutil.CollectAndCount(m.jobFailures), "lobby_expiry never failed")
	assert.Equal(t, 2, testutil.CollectAndCount(m.jobDuration))

	m.StoreQuery("GetUser", 2*time.Millisecond)
	m.StoreQuery("GetUser", 4*time.Millisecond)
	m.StoreQuery("commit", time.Millisecond)
	n, sum := histogram(t, m, "sdkpp_store_query_duration_seconds", "GetUser")
	assert.Equal(t, uint64(2), n, "GetUser: two statements")
	assert.InDelta(t, .006, sum, 1e-9)
	assert.Equal(t, 2, testutil.CollectAndCount(m.storeQuery), "one series an operation")

	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	m.BusDelivered("MESSAGE_CREATE", t0, t0.Add(5*time.Millisecond))
	m.BusDelivered("MESSAGE_CREATE", t0, t0.Add(-time.Millisecond)) // the receiver's clock is behind
	n, sum = histogram(t, m, "sdkpp_bus_delivery_lag_seconds", "MESSAGE_CREATE")
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, .005, sum, 1e-9, "5 ms, and 0 for the skewed one")

	var none *Metrics
	none.JobRun("x", 0, nil)
	none.StoreQuery("x", 0)
	none.BusDelivered("x", t0, t0)
}

// histogram returns the sample count and sum of the series of histogram name whose label
// other than node has the value label.
func histogram(t *testing.T, m *Metrics, name, label string) (uint64, float64) {
	t.Helper()
	fams, err := m.reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() != "node" && l.GetValue() == label {
					return s.GetHistogram().GetSampleCount(), s.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	t.Fatalf("no series %s{%s}", name, label)
	return 0, 0
}

// The Grafana dashboard kept beside this package queries only metrics the service has.
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	m := New("n")
	m.Register(Gateway(func() gateway.Stats { return gateway.Stats{} }), Relay(func() relay.Stats { return relay.Stats{} }),
		Voice(func() (int, int) { return 0, 0 }), Webhooks(func() webhook.Stats { return webhook.Stats{} }))
	have := map[string]bool{}
	ch := make(chan *prometheus.Desc, 256)
	go func() { m.reg.Describe(ch); close(ch) }()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		if g := fqName.FindStringSubmatch(d.String()); g != nil {
			have[g[1]] = true
		}
	}
	require.True(t, have["go_goroutines"] && have["sdkpp_http_requests_total"], "%d names described", len(have))

	raw, err := os.ReadFile("grafana/sdkpp-service.json")
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	require.NotEmpty(t, dash.Panels)
	name := regexp.MustCompile(`\b(?:sdkpp|go|process)_[a-z_]+`)
	suffix := regexp.MustCompile(`_(bucket|count|sum)$`)
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, q := range p.Targets {
			for _, n := range name.FindAllString(q.Expr, -1) {
				assert.True(t, have[n] || have[suffix.ReplaceAllString(n, "")], "panel %q queries %s, which the service does not have", p.Title, n)
			}
		}
	}
}
