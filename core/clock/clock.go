// Package clock is the SDK's injectable time source.
//
// Every token lifetime, timer, backoff and time window of the client reads the time through a
// Clock, so that a test can run the client on a Fake and move time forward without waiting.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and runs timers.
type Clock interface {
	// Now returns the current time of this clock.
	Now() time.Time
	// NewTimer returns a timer whose channel receives the time once d has passed.
	NewTimer(d time.Duration) Timer
	// AfterFunc returns a timer that calls f on its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending event of a Clock.
type Timer interface {
	// C returns the channel the time is sent on when the timer fires; it is nil for a timer of
	// AfterFunc. The channel is buffered and never closed.
	C() <-chan time.Time
	// Stop prevents the timer from firing and reports whether it did so (false: it had fired or
	// had been stopped).
	Stop() bool
}

// Sleep waits on c for d, or returns ctx's error as soon as ctx is done.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WithTimeout is context.WithTimeout on c: when d has passed on c, ctx is cancelled with the
// cause context.DeadlineExceeded (read it with context.Cause).
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	timer := c.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}

// Real is the machine's clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer's equivalent.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// AfterFunc returns time.AfterFunc's equivalent.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

// realTimer adapts a time.Timer to Timer.
type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
