package periodic

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
)

type observed struct {
	job string
	err error
}

// A job runs at once, then each time its interval has passed on the clock; every run is
// observed with its error; Close stops the goroutines, and Start after Close starts nothing.
func TestRunner(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var seen []observed
	runs := make(chan time.Time, 10)
	fail := errors.New("store down")
	r := &Runner{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Observe: func(job string, took time.Duration, err error) {
			require.GreaterOrEqual(t, took, time.Duration(0))
			mu.Lock()
			seen = append(seen, observed{job, err})
			mu.Unlock()
		}}
	n := 0
	r.Start(Job{Name: "prune", Every: time.Minute, Run: func(ctx context.Context) error {
		n++
		if n == 2 {
			return fail
		}
		runs <- clk.Now()
		return nil
	}})
	t0 := clk.Now()
	require.Equal(t, t0, <-runs, "the first run is at once")
	require.NoError(t, clk.WaitArmed(ctx, 1))
	clk.Advance(59 * time.Second)
	require.Empty(t, runs, "not before its interval")
	clk.Advance(time.Second) // the second run fails
	require.NoError(t, clk.WaitArmed(ctx, 2))
	clk.Advance(time.Minute)
	require.Equal(t, t0.Add(2*time.Minute), <-runs, "a failed run is retried after the interval too")
	require.NoError(t, clk.WaitArmed(ctx, 3))
	r.Close()
	require.Zero(t, clk.Pending(), "Close stopped the timer")
	mu.Lock()
	require.Equal(t, []observed{{"prune", nil}, {"prune", fail}, {"prune", nil}}, seen)
	mu.Unlock()

	r.Start(Job{Name: "late", Every: time.Minute, Run: func(context.Context) error { panic("started after Close") }})
	r.Close()
}
