// Package clock is the injectable time source of the SDK and of the service.
//
// Every token lifetime, timer, backoff, expiry and dated rule reads the time through a Clock, so
// that a test can run the SDK on a Fake and move time forward without waiting, and put the
// service on either side of a date (an Offset, or a Fake) or jump past an expiry.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and runs timers.
type Clock interface {
	// Now returns the current time of this clock.
	Now() time.Time
	// NewTimer returns a timer whose channel receives the clock's time once d has passed on it.
	NewTimer(d time.Duration) Timer
	// AfterFunc returns a timer that calls f on its own goroutine once d has passed on the
	// clock (a Fake calls it inside Advance).
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

// Controllable is a clock a test (or the service's dev clock endpoint) can move.
type Controllable interface {
	Clock
	// Advance moves the clock forward by d and fires the timers it passes.
	Advance(d time.Duration)
	// Set moves the clock to t and fires the timers it passes.
	Set(t time.Time)
}

// Until returns a timer of c that fires when c shows t: at once when it already does.
func Until(c Clock, t time.Time) Timer { return c.NewTimer(t.Sub(c.Now())) }

// At returns the channel of a timer of c that fires when c shows t (at once when it already
// does) and the function that stops it, for loops that wait on it beside other channels.
func At(c Clock, t time.Time) (<-chan time.Time, func()) {
	tm := Until(c, t)
	return tm.C(), func() { tm.Stop() }
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
