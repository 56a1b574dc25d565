// Package metrics is the service's Prometheus instrumentation: one registry with the HTTP
// middleware's request metrics, collectors that read the counters the gateway, the voice relay,
// the voice calls and the webhook dispatcher keep themselves, and the Go runtime's metrics,
// served on a listener of its own.
//
// Names follow Prometheus's conventions (sdkpp_ prefix, base units in the name, _total for
// counters, histograms for latencies). Every series carries the node's label; other labels are
// route templates, close codes, reasons and results: never an id, so the number of series is
// bounded whatever the traffic.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"sdkpp/server/httpx"
)

// Namespace prefixes every metric of the service.
const Namespace = "sdkpp"

// Metrics is the service's registry and its HTTP metrics. A nil *Metrics records nothing, so
// that a service without a metrics listener pays nothing.
type Metrics struct {
	reg      *prometheus.Registry
	wrapped  prometheus.Registerer // reg, with the node label
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	limited  *prometheus.CounterVec

	jobRuns     *prometheus.CounterVec
	jobFailures *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec
	storeQuery  *prometheus.HistogramVec
	busLag      *prometheus.HistogramVec
}

// latencyBuckets are the buckets of the latency histograms, 100 µs to 10 s.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns the metrics of node (the label every series carries), with the Go runtime's and
// the process's collectors registered.
func New(node string) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, wrapped: prometheus.WrapRegistererWith(prometheus.Labels{"node": node}, reg)}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "http",
		Name: "requests_total", Help: "HTTP requests answered, by route template, transport and status code."},
		[]string{"route", "via", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "http",
		Name: "request_duration_seconds", Help: "Time to answer an HTTP request, by route template and transport.",
		Buckets: latencyBuckets}, []string{"route", "via"})
	m.limited = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "http",
		Name: "rate_limited_total", Help: "Requests refused with 429 by the rate limiter, by route template and limit scope."},
		[]string{"route", "scope"})
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "job",
		Name: "runs_total", Help: "Runs of background jobs (webhook dispatch cycles, target-users jobs, expiry and pruning, the node heartbeat), by job."},
		[]string{"job"})
	m.jobFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "job",
		Name: "failures_total", Help: "Runs of background jobs that failed, by job."}, []string{"job"})
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "job",
		Name: "duration_seconds", Help: "Time a background job's run took, by job.", Buckets: latencyBuckets}, []string{"job"})
	m.storeQuery = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "store",
		Name: "query_duration_seconds", Help: "Time the database took to run a statement, by the store operation that ran it (or commit).",
		Buckets: latencyBuckets}, []string{"operation"})
	m.busLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "bus",
		Name: "delivery_lag_seconds", Help: "Time from a bus message's publication on a node to its delivery on this one, by kind of message.",
		Buckets: latencyBuckets}, []string{"kind"})
	m.wrapped.MustRegister(m.requests, m.duration, m.limited, m.jobRuns, m.jobFailures, m.jobDuration, m.storeQuery, m.busLag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds collectors (for example those of this package's Gateway, Relay, Voice and
// Webhooks) with the node label. It panics on a duplicate, which is a programming error.
func (m *Metrics) Register(cs ...prometheus.Collector) {
	if m == nil {
		return
	}
	m.wrapped.MustRegister(cs...)
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.wrapped}) // its own errors carry the node too
}

type routeKey struct{}

// routeLabel is where the route a request matched is written while it is served.
type routeLabel struct{ pattern string }

// SetRoute records the route template (the ServeMux pattern) that r matched, for the HTTP
// metrics of the request; without metrics it does nothing.
func SetRoute(r *http.Request, pattern string) {
	if l, ok := r.Context().Value(routeKey{}).(*routeLabel); ok {
		l.pattern = pattern
	}
}

// Unmatched is the route label of a request that no route matched.
const Unmatched = "unmatched"

// HTTP counts and times the requests next serves, labelled by the route the inner muxes report
// with SetRoute and by via (the transport: "http", or "gateway" for API requests sent over the
// gateway). A 429 that carries the rate limiter's X-RateLimit-Scope header is counted as a
// rate-limit refusal.
func (m *Metrics) HTTP(via string, next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		l := &routeLabel{}
		sw := &httpx.StatusWriter{ResponseWriter: w}
		defer func() {
			route := l.pattern
			if route == "" {
				route = Unmatched
			}
			code := sw.Status()
			switch {
			case code != 0:
			case r.Header.Get("Upgrade") != "": // hijacked: the upgrader wrote 101 itself
				code = http.StatusSwitchingProtocols
			default: // nothing written: net/http answered 200
				code = http.StatusOK
			}
			m.Served(route, via, code, time.Since(start), sw.Header())
		}()
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), routeKey{}, l)))
	})
}

// Served records one request as HTTP does, for a request served without it (an API request over
// the gateway that the service takes at once): its route label, how it came, its status, how long
// it took and its answer's header (a 429 with the rate limiter's X-RateLimit-Scope counts as a
// rate-limit refusal). A nil *Metrics records nothing.
func (m *Metrics) Served(route, via string, code int, took time.Duration, header http.Header) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, via, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route, via).Observe(took.Seconds())
	if code == http.StatusTooManyRequests {
		if scope := header.Get("X-RateLimit-Scope"); scope != "" {
			m.limited.WithLabelValues(route, scope).Inc()
		}
	}
}

// JobRun records one run of a background job: job is the job's fixed name (never an id), took
// its duration and err its failure (nil on success). It has the signature of the jobs'
// observers (periodic.Runner.Observe and the services' own loops). A nil *Metrics records
// nothing.
func (m *Metrics) JobRun(job string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.jobRuns.WithLabelValues(job).Inc()
	if err != nil {
		m.jobFailures.WithLabelValues(job).Inc()
	}
	m.jobDuration.WithLabelValues(job).Observe(took.Seconds())
}

// StoreQuery records one statement of the store, by operation (a store method's name, as
// store.QueryObserver reports it); a nil *Metrics records nothing.
func (m *Metrics) StoreQuery(operation string, took time.Duration) {
	if m == nil {
		return
	}
	m.storeQuery.WithLabelValues(operation).Observe(took.Seconds())
}

// BusDelivered records the publish-to-deliver lag of one message of the cluster's bus, as the
// node that receives it sees it: published is when the publishing node sent it (by that node's
// clock, carried in the message), delivered when this node handed it on (by this node's
// clock). kind says what the message is, from a fixed set such as the gateway event it carries
// ("MESSAGE_CREATE") or "presence": never a subject or anything else that holds an id. The
// lag includes the skew between the two nodes' clocks; a lag the skew makes negative counts as
// zero. A nil *Metrics records nothing.
func (m *Metrics) BusDelivered(kind string, published, delivered time.Time) {
	if m == nil {
		return
	}
	m.busLag.WithLabelValues(kind).Observe(max(delivered.Sub(published), 0).Seconds())
}
