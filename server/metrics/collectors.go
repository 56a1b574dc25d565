package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"sdkpp/server/gateway"
	"sdkpp/server/relay"
	"sdkpp/server/webhook"
)

// statsCollector emits its metrics from one read of a part's counters per scrape, so that a
// scrape takes each part's lock once and the parts know nothing of Prometheus.
type statsCollector struct {
	descs   []*prometheus.Desc
	collect func(emit emitter)
}

// emitter sends one sample of desc i.
type emitter func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string)

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	c.collect(func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	})
}

// desc builds the description of a metric of subsystem.
func desc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, subsystem, name), help, labels, nil)
}

// Gateway collects the gateway hub's metrics from stats (Hub.Stats).
func Gateway(stats func() gateway.Stats) prometheus.Collector {
	var (
		conns      = desc("gateway", "connections", "Open WebSocket connections.")
		sessions   = desc("gateway", "sessions", "Gateway sessions, by state: connected, or waiting to be resumed.", "state")
		queued     = desc("gateway", "send_queue_dispatches", "Dispatches pushed to connected sessions and not yet taken for writing.")
		queuedMax  = desc("gateway", "send_queue_max_dispatches", "The longest send queue of one connection, in dispatches.")
		identifies = desc("gateway", "identifies_total", "Sessions started by Identify.")
		resumes    = desc("gateway", "resumes_total", "Sessions re-attached by Resume.")
		replayed   = desc("gateway", "replayed_dispatches_total", "Dispatches sent again to resumed sessions.")
		dispatches = desc("gateway", "dispatches_total", "Events dispatched, each counted once whatever its fan-out, by event name.", "event")
		deliveries = desc("gateway", "dispatch_deliveries_total", "Sessions the dispatches were pushed to (the fan-out), by event name.", "event")
		closes     = desc("gateway", "closes_total", "Connections ended, by the close code the service sent (0: none, the client went first).", "code")
	)
	return &statsCollector{
		descs: []*prometheus.Desc{conns, sessions, queued, queuedMax, identifies, resumes, replayed, dispatches, deliveries, closes},
		collect: func(emit emitter) {
			s := stats()
			emit(conns, prometheus.GaugeValue, float64(s.Connections))
			emit(sessions, prometheus.GaugeValue, float64(s.Connected), "connected")
			emit(sessions, prometheus.GaugeValue, float64(s.Sessions-s.Connected), "resumable")
			emit(queued, prometheus.GaugeValue, float64(s.Queued))
			emit(queuedMax, prometheus.GaugeValue, float64(s.QueuedMax))
			emit(identifies, prometheus.CounterValue, float64(s.Identifies))
			emit(resumes, prometheus.CounterValue, float64(s.Resumes))
			emit(replayed, prometheus.CounterValue, float64(s.Replayed))
			for event, e := range s.Events {
				emit(dispatches, prometheus.CounterValue, float64(e.Dispatches), event)
				emit(deliveries, prometheus.CounterValue, float64(e.Deliveries), event)
			}
			for code, n := range s.Closes {
				emit(closes, prometheus.CounterValue, float64(n), strconv.Itoa(code))
			}
		},
	}
}

// Relay collects the voice relay's metrics from stats (Relay.Stats).
func Relay(stats func() relay.Stats) prometheus.Collector {
	var (
		packets = desc("voice_relay", "packets_total", "UDP packets: received, forwarded (one per recipient), and replies (bind replies, keepalive echoes).", "direction")
		bytes   = desc("voice_relay", "bytes_total", "Bytes of the UDP packets received and forwarded.", "direction")
		dropped = desc("voice_relay", "dropped_packets_total", "Packets dropped, by reason.", "reason")
		flows   = desc("voice_relay", "flows", "Participants' flows open on the relay, by whether an address is bound.", "state")
		calls   = desc("voice_relay", "calls", "Calls with flows on the relay.")
		binds   = desc("voice_relay", "binds_total", "Flows bound to an address (first binds and rebinds).")
		expired = desc("voice_relay", "expired_flows_total", "Flows unbound after their timeout without a packet.")
		errs    = desc("voice_relay", "send_errors_total", "Sends that failed.")
	)
	return &statsCollector{
		descs: []*prometheus.Desc{packets, bytes, dropped, flows, calls, binds, expired, errs},
		collect: func(emit emitter) {
			s := stats()
			emit(packets, prometheus.CounterValue, float64(s.Received), "received")
			emit(packets, prometheus.CounterValue, float64(s.Forwarded), "forwarded")
			emit(packets, prometheus.CounterValue, float64(s.Replies), "reply")
			emit(bytes, prometheus.CounterValue, float64(s.ReceivedBytes), "received")
			emit(bytes, prometheus.CounterValue, float64(s.ForwardedBytes), "forwarded")
			for _, d := range []struct {
				reason string
				n      uint64
			}{{"malformed", s.Malformed}, {"too_long", s.TooLong}, {"unbound", s.Unbound}, {"bad_token", s.BadToken},
				{"spoofed", s.Spoofed}, {"rate_limited", s.RateLimited}} {
				emit(dropped, prometheus.CounterValue, float64(d.n), d.reason)
			}
			emit(flows, prometheus.GaugeValue, float64(s.BoundFlows), "bound")
			emit(flows, prometheus.GaugeValue, float64(s.Flows-s.BoundFlows), "unbound")
			emit(calls, prometheus.GaugeValue, float64(s.Calls))
			emit(binds, prometheus.CounterValue, float64(s.Binds))
			emit(expired, prometheus.CounterValue, float64(s.Expired))
			emit(errs, prometheus.CounterValue, float64(s.SendErrors))
		},
	}
}

// Voice collects the voice calls' metrics from stats (voice.Service.Stats).
func Voice(stats func() (calls, participants int)) prometheus.Collector {
	calls := desc("voice", "calls", "Voice calls with at least one participant.")
	parts := desc("voice", "participants", "Participants in voice calls.")
	return &statsCollector{
		descs: []*prometheus.Desc{calls, parts},
		collect: func(emit emitter) {
			c, p := stats()
			emit(calls, prometheus.GaugeValue, float64(c))
			emit(parts, prometheus.GaugeValue, float64(p))
		},
	}
}

// Webhooks collects the webhook dispatcher's metrics from stats (Dispatcher.Stats).
func Webhooks(stats func() webhook.Stats) prometheus.Collector {
	attempts := desc("webhook", "attempts_total", "Webhook delivery attempts, by result: delivered, retried (failed, will be tried again) or failed (given up).", "result")
	return &statsCollector{
		descs: []*prometheus.Desc{attempts},
		collect: func(emit emitter) {
			s := stats()
			emit(attempts, prometheus.CounterValue, float64(s.Delivered), "delivered")
			emit(attempts, prometheus.CounterValue, float64(s.Retried), "retried")
			emit(attempts, prometheus.CounterValue, float64(s.Failed), "failed")
		},
	}
}
