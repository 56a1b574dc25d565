package bus

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"sdkpp/server/bus/natstest"
)

// BenchmarkDeliveryPaths times, from the start of a publish, when the publisher has the stream's
// ack (the sequence number the gateway numbers its dispatches with), when another node's
// subscription reads the message from the stream, and when a core NATS copy published once the
// ack came (the only copy that could carry that number) reaches that node; and, for comparison,
// a core NATS message alone. It reports each one's median in µs. It is what a core-NATS fast path
// beside JetStream would have to beat: the stream's own delivery comes before the ack.
func BenchmarkDeliveryPaths(b *testing.B) {
	ns := natstest.Start(b)
	ctx := context.Background()
	pub, err := Connect(ctx, ns.URL(), Options{Node: 1})
	require.NoError(b, err)
	defer pub.Close()
	sub, err := Connect(ctx, ns.URL(), Options{Node: 2})
	require.NoError(b, err)
	defer sub.Close()
	streamGot, coreGot := make(chan time.Time, 1), make(chan time.Time, 1)
	require.NoError(b, sub.Subscribe(ctx, 0, func(uint64, []byte) { streamGot <- time.Now() }))
	_, err = sub.nc.Subscribe("sdkpp.bench.core", func(*nats.Msg) { coreGot <- time.Now() })
	require.NoError(b, err)
	require.NoError(b, sub.nc.Flush())
	data := make([]byte, 1024)
	var ack, stream, afterAck, alone []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		seq, err := pub.PublishID(ctx, data, "bench-"+strconv.Itoa(i))
		require.NoError(b, err)
		ack = append(ack, time.Since(start))
		require.NoError(b, pub.nc.Publish("sdkpp.bench.core", strconv.AppendUint(nil, seq, 10)))
		stream = append(stream, (<-streamGot).Sub(start))
		afterAck = append(afterAck, (<-coreGot).Sub(start))
		start = time.Now()
		require.NoError(b, pub.nc.Publish("sdkpp.bench.core", data))
		alone = append(alone, (<-coreGot).Sub(start))
	}
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"ack-µs", ack}, {"stream-µs", stream}, {"core-after-ack-µs", afterAck}, {"core-alone-µs", alone}} {
		slices.Sort(m.ds)
		b.ReportMetric(float64(m.ds[len(m.ds)/2].Microseconds()), m.name)
	}
}
