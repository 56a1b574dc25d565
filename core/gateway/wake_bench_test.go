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
// µs apart; yield=true calls Queue.Yield after each dispatch, as core did; batch=true holds the
// push's wake until the client reads on, then yields (Config.OnDrained, callbacks.Batch), as core
// does. p50-ns and p90-ns are the latencies' quantiles; dispatch-to-callback-p50-ns is the last
// hop's, from OnDispatch's start until the callback runs.
func BenchmarkDispatchToWaitingThread(b *testing.B) {
	for _, mode := range []string{"yield=false", "yield=true", "batch=true"} {
		b.Run(mode, func(b *testing.B) { benchDispatchToWaiting(b, mode) })
	}
}

func benchDispatchToWaiting(b *testing.B, mode string) {
	n := b.N
	q := callbacks.New()
	scope := q.NewScope(nil)
	consumed := make(chan struct{}, 1)
	srv := httptest.NewServer(frameServer(b, n, 1, consumed))
	defer srv.Close()
	ran := make(chan [2]time.Time, 1) // when OnDispatch began, and when the callback ran
	qb := q.Batch()
	cfg := Config{URL: "ws" + srv.URL[len("http"):], OnDispatch: func(event string, data json.RawMessage) {
		if event != "LOBBY_MESSAGE_CREATE" {
			return
		}
		at := time.Now()
		if mode == "batch=true" {
			qb.Begin()
		}
		scope.Post(func() { ran <- [2]time.Time{at, time.Now()} })
		if mode == "yield=true" {
			q.Yield()
		}
	}}
	if mode == "batch=true" {
		cfg.OnDrained = qb.End
	}
	gw := startReady(b, cfg)
	defer gw.Close()
	stopGame := gameThread(q)
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
	stopGame()
	require.Len(b, took, n, "a latency for every message")
	slices.Sort(took)
	slices.Sort(woke)
	b.ReportMetric(float64(took[len(took)/2]), "p50-ns")
	b.ReportMetric(float64(took[len(took)*9/10]), "p90-ns")
	b.ReportMetric(float64(woke[len(woke)/2]), "dispatch-to-callback-p50-ns")
}

// BenchmarkBatchToWaitingThread measures what the frames of one socket read cost a game's thread
// that waits for their callbacks in Wait (and the client), as a lobby member's SDK receives
// them under fan-out: a bare server writes 16 lobby messages at a time, the next 16 once the
// game's thread has run the last one's callback. wake=each is the client as it was, whose pushes
// woke the thread once per dispatch (and yielded to it, Queue.Yield); wake=batch holds the
// wakes until the client reads on (Config.OnDrained, callbacks.Batch). runs/delivery is how
// many Runs the game's thread made per message (each after a wake), cpu-ns/delivery the
// process's CPU time per message.
func BenchmarkBatchToWaitingThread(b *testing.B) {
	for _, batched := range []bool{false, true} {
		name := map[bool]string{false: "wake=each", true: "wake=batch"}[batched]
		b.Run(name, func(b *testing.B) { benchBatchToWaiting(b, batched) })
	}
}

func benchBatchToWaiting(b *testing.B, batched bool) {
	const batch = 16
	n := b.N
	q := callbacks.New()
	scope := q.NewScope(nil)
	consumed := make(chan struct{}, 1)
	srv := httptest.NewServer(frameServer(b, n, batch, consumed))
	defer srv.Close()
	ran, done := 0, make(chan struct{}) // ran: the game thread's
	callback := func() {
		ran++
		if ran%batch == 0 || ran == n {
			consumed <- struct{}{}
		}
		if ran == n {
			close(done)
		}
	}
	qb := q.Batch()
	cfg := Config{URL: "ws" + srv.URL[len("http"):], OnDispatch: func(event string, data json.RawMessage) {
		if event != "LOBBY_MESSAGE_CREATE" {
			return
		}
		if batched {
			qb.Begin()
			scope.Post(callback)
			return
		}
		scope.Post(callback)
		q.Yield()
	}}
	if batched {
		cfg.OnDrained = qb.End
	}
	gw := startReady(b, cfg)
	defer gw.Close()
	stopGame := gameThread(q)
	cpu := timedDeliveries(b, consumed, done)
	consumed <- struct{}{} // the server's last wait
	runs := stopGame()
	b.ReportMetric(float64(cpu)/float64(n), "cpu-ns/delivery")
	b.ReportMetric(float64(runs)/float64(n), "runs/delivery")
}

// gameThread starts a goroutine that serves q as a game's thread with nothing else to do: it
// waits for callbacks in Wait and Runs them. stop ends it and returns how many of its Runs took
// callbacks.
func gameThread(q *callbacks.Queue) (stop func() int) {
	quit, game := make(chan struct{}), make(chan struct{})
	runs := 0
	go func() {
		defer close(game)
		for {
			select {
			case <-quit:
				return
			default:
			}
			if q.Wait(10*time.Millisecond) && q.Run() > 0 {
				runs++
			}
		}
	}()
	return func() int {
		close(quit)
		<-game
		return runs
	}
}
