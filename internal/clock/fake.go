package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a clock for tests: it stands still until the test moves it with Advance or Set, and its
// timers fire only then, in the order they fall due, on the goroutine that moves it; except that
// a channel timer already due when it is made (NewTimer with d <= 0) fires at once, as a real
// timer does. A function timer never runs on the goroutine that arms it, which may hold locks.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	seq     uint64 // how many timers were armed
	pending map[*fakeTimer]struct{}
	armed   chan struct{} // closed, and replaced, whenever a timer is armed
}

// NewFake returns a Fake that shows t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, pending: map[*fakeTimer]struct{}{}, armed: make(chan struct{})}
}

// fakeTimer is a timer of a Fake: it sends on ch or calls fn.
type fakeTimer struct {
	f   *Fake
	due time.Time
	seq uint64 // creation order, to fire timers due at the same instant in a fixed order
	ch  chan time.Time
	fn  func()
}

// Now returns the time the clock shows.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer arms a timer that fires when the clock reaches Now()+d; one already due (d <= 0)
// fires at once.
func (f *Fake) NewTimer(d time.Duration) Timer { return f.arm(d, make(chan time.Time, 1), nil) }

// AfterFunc arms a timer that calls fn when the clock reaches Now()+d, on the goroutine that
// moves it, before Advance or Set returns; one already due (d <= 0) fires at the next move,
// Advance(0) included.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer { return f.arm(d, nil, fn) }

func (f *Fake) arm(d time.Duration, ch chan time.Time, fn func()) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	t := &fakeTimer{f: f, due: f.now.Add(d), seq: f.seq, ch: ch, fn: fn}
	if ch != nil && d <= 0 {
		ch <- f.now // due already: a fresh buffered channel takes it without waiting
	} else {
		f.pending[t] = struct{}{}
	}
	close(f.armed)
	f.armed = make(chan struct{})
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	_, ok := t.f.pending[t]
	delete(t.f.pending, t)
	return ok
}

// Advance moves the clock forward by d (a negative d is taken as 0) and fires, one at a time in
// the order they fall due, every timer due by then, the clock showing each timer's due time as it
// fires. Timers armed by a firing function fire too when they fall due within the advance. When
// Advance returns, every due function has returned and every due channel holds its time.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	target := f.now.Add(max(d, 0))
	f.mu.Unlock()
	for {
		f.mu.Lock()
		var next *fakeTimer
		for t := range f.pending {
			if !t.due.After(target) && (next == nil || t.due.Before(next.due) || (t.due.Equal(next.due) && t.seq < next.seq)) {
				next = t
			}
		}
		if next == nil {
			f.now = target
			f.mu.Unlock()
			return
		}
		delete(f.pending, next)
		if next.due.After(f.now) {
			f.now = next.due
		}
		f.mu.Unlock()
		if next.fn != nil {
			next.fn()
		} else {
			next.ch <- next.due
		}
	}
}

// Set moves the clock to t: forward as Advance does, firing the timers it passes; back, it only
// changes what Now shows (timers keep their due times).
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	d := t.Sub(f.now)
	if d < 0 {
		f.now = t
	}
	f.mu.Unlock()
	if d >= 0 {
		f.Advance(d)
	}
}

// Pending returns the number of timers armed and not yet fired or stopped.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// Armed returns how many timers were armed on the clock so far.
func (f *Fake) Armed() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// WaitArmed waits until at least n timers were armed on the clock since it was made (see Armed),
// so that a test can move the clock once the code under test waits on it; it returns ctx's error
// if ctx ends first.
func (f *Fake) WaitArmed(ctx context.Context, n uint64) error {
	for {
		f.mu.Lock()
		have, armed := f.seq, f.armed
		f.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-armed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
