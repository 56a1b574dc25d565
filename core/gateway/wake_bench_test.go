package gateway

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/core/callbacks"
)

// BenchmarkDispatchToWaitingThread measures the receiving side of a lobby message's latency, as
// the SDK's Go game sees it: from the moment a bare server is told to write one message (on
// loopback) until a callback queued by OnDispatch runs on a goroutine that waits for callbacks in
// Wait and then Runs them (a game's thread with nothing else to do). The hops: the socket wakes
// the Client's reader, the reader's push wakes the waiting goroutine. One message at a time, 200
// µs apart; yield=true calls Queue.Yield after each dispatch, as core does. p50-ns and p90-ns are
// the latencies' quantiles; dispatch-to-callback-p50-ns is the last hop's, from OnDispatch's
// start until the callback runs.
func BenchmarkDispatchToWaitingThread(b *testing.B) {
	for _, yield := range []bool{false, true} {
		name := map[bool]string{false: "yield=false", true: "yield=true"}[yield]
		b.Run(name, func(b *testing.B) { benchDispatchToWaiting(b, yield) })
	}
}

func benchDispatchToWaiting(b *testing.B, yield bool) {
	n := b.N
	q := callbacks.New()
	scope := q.NewScope(nil)
	consumed := make(chan struct{}, 1)
	srv := httptest.NewServer(frameServer(b, n, 1, consumed))
	defer srv.Close()
	ran := make(chan [2]time.Time, 1) // when OnDispatch began, and when the callback ran
	gw := readyBenchClient(b, srv.URL, nil, func(event string, data json.RawMessage) {
		if event != "LOBBY_MESSAGE_CREATE" {
			return
		}
		at := time.Now()
		scope.Post(func() { ran <- [2]time.Time{at, time.Now()} })
		if yield {
			q.Yield()
		}
	})
	defer gw.Close()
	stop := make(chan struct{})
	game := make(chan struct{})
	go func() { // the game's thread
		defer close(game)
		for {
			select {
			case <-stop:
				return
			default:
			}
			q.Wait(10 * time.Millisecond)
			q.Run()
		}
	}()
	took := make([]time.Duration, 0, n)
	woke := make([]time.Duration, 0, n) // from OnDispatch to the callback
	b.ResetTimer()
	for range n {
		time.Sleep(200 * time.Microsecond)
		start := time.Now()
		consumed <- struct{}{} // the server writes the next message
		t := <-ran
		took = append(took, t[1].Sub(start))
		woke = append(woke, t[1].Sub(t[0]))
	}
	b.StopTimer()
	consumed <- struct{}{} // the server's last wait
	close(stop)
	<-game
	require.Len(b, took, n, "a latency for every message")
	slices.Sort(took)
	slices.Sort(woke)
	b.ReportMetric(float64(took[len(took)/2]), "p50-ns")
	b.ReportMetric(float64(took[len(took)*9/10]), "p90-ns")
	b.ReportMetric(float64(woke[len(woke)/2]), "dispatch-to-callback-p50-ns")
}
