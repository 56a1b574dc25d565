// Package periodic runs the service's periodic jobs (the node heartbeat, pruning expired rows),
// each on a goroutine the Runner owns, spaced on an injected clock. Every run is reported to an
// observer, so that the metrics count the runs and failures of each job and time them.
package periodic

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// Job is a periodic job.
type Job struct {
	// Name names the job in the logs and the metrics: a fixed name, never an id.
	Name string
	// Every is the time from the end of one run to the start of the next.
	Every time.Duration
	// Run does the job once; an error is logged and reported, and the job runs again after
	// Every as after a success.
	Run func(ctx context.Context) error
}

// Runner runs jobs. Set its fields, then Start the jobs; Close stops them.
type Runner struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// Observe, when set, is told of every run: the job's name, how long the run took and its
	// error (nil on success).
	Observe func(job string, took time.Duration, err error)

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// Start runs each job at once and then every job.Every, each on a goroutine of its own, until
// Close. After Close it starts nothing.
func (r *Runner) Start(jobs ...Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithCancel(context.Background())
	}
	for _, j := range jobs {
		r.wg.Add(1)
		go r.loop(r.ctx, j)
	}
}

// Close stops the jobs and waits for their goroutines; a run in progress sees its context
// cancelled.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	r.wg.Wait()
}

func (r *Runner) loop(ctx context.Context, j Job) {
	defer r.wg.Done()
	for {
		r.run(ctx, j)
		t := r.Clock.NewTimer(j.Every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// run runs j once and reports it; a run cut short by Close is not reported.
func (r *Runner) run(ctx context.Context, j Job) {
	start := time.Now() // the run's real duration, whatever the injected clock shows
	err := j.Run(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		r.Logger.Error("periodic job failed", "job", j.Name, "err", err)
	}
	if r.Observe != nil {
		r.Observe(j.Name, time.Since(start), err)
	}
}
