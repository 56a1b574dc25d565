package clock

import (
	"sync"
	"time"
)

// Offset is the machine's clock shifted by an adjustable offset: it runs in real time, and a test
// (or the service's dev clock endpoint) can jump it forward or back at any moment. Its timers fire
// when the shifted time reaches their due time, by real time passing or by a jump.
type Offset struct {
	mu      sync.Mutex
	offset  time.Duration
	pending map[*offsetTimer]struct{}
	timer   *time.Timer // one real timer, for the earliest pending timer
	stopped bool
	real    func() time.Time
}

// NewOffset returns a running clock showing time.Now()+offset.
func NewOffset(offset time.Duration) *Offset {
	return &Offset{offset: offset, real: time.Now, pending: map[*offsetTimer]struct{}{}}
}

// NewStartingAt returns a running clock that shows t now and then advances in real time.
func NewStartingAt(t time.Time) *Offset { return NewOffset(time.Until(t)) }

// offsetTimer is a timer of an Offset: it sends on ch or calls fn (on its own goroutine).
type offsetTimer struct {
	o   *Offset
	due time.Time
	ch  chan time.Time
	fn  func()
}

func (o *Offset) nowLocked() time.Time { return o.real().Add(o.offset) }

// Now returns the shifted time.
func (o *Offset) Now() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.nowLocked()
}

// NewTimer returns a timer that fires when the shifted time reaches Now()+d.
func (o *Offset) NewTimer(d time.Duration) Timer { return o.arm(d, make(chan time.Time, 1), nil) }

// AfterFunc returns a timer that calls f on its own goroutine when the shifted time reaches
// Now()+d.
func (o *Offset) AfterFunc(d time.Duration, f func()) Timer { return o.arm(d, nil, f) }

func (o *Offset) arm(d time.Duration, ch chan time.Time, fn func()) *offsetTimer {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := &offsetTimer{o: o, due: o.nowLocked().Add(d), ch: ch, fn: fn}
	o.pending[t] = struct{}{}
	o.rearmLocked()
	return t
}

func (t *offsetTimer) C() <-chan time.Time { return t.ch }

func (t *offsetTimer) Stop() bool {
	t.o.mu.Lock()
	defer t.o.mu.Unlock()
	_, ok := t.o.pending[t]
	delete(t.o.pending, t)
	t.o.rearmLocked()
	return ok
}

// rearmLocked fires the due timers and sets one real timer for the earliest remaining one.
func (o *Offset) rearmLocked() {
	now := o.nowLocked()
	var earliest time.Time
	for t := range o.pending {
		switch {
		case !t.due.After(now):
			delete(o.pending, t)
			if t.fn != nil {
				go t.fn() // as time.AfterFunc does; never under the clock's lock
			} else {
				t.ch <- now
			}
		case earliest.IsZero() || t.due.Before(earliest):
			earliest = t.due
		}
	}
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	if o.stopped || earliest.IsZero() {
		return
	}
	o.timer = time.AfterFunc(earliest.Sub(now), func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.rearmLocked()
	})
}

// Advance jumps the clock by d.
func (o *Offset) Advance(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.offset += d
	o.rearmLocked()
}

// Set jumps the clock to t.
func (o *Offset) Set(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.offset = t.Sub(o.real())
	o.rearmLocked()
}

// Stop releases the clock's real timer: pending timers then fire only when the clock is moved.
func (o *Offset) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}
