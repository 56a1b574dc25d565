// Package clock is the service's injectable time source.
//
// Every expiry, backoff and dated rule in the service reads the time through a Clock, so tests can
// put the service on either side of a date or jump past an expiry without waiting.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and wakes waiters when a given instant is reached.
type Clock interface {
	// Now returns the current time of this clock.
	Now() time.Time
	// At returns a channel that receives once the clock reaches t (at once if it already has) and a
	// stop function that releases the waiter. The channel is buffered; it is never closed.
	At(t time.Time) (<-chan time.Time, func())
}

// Controllable is a clock a test can move.
type Controllable interface {
	Clock
	// Advance moves the clock forward by d (d may be negative) and wakes the waiters it passes.
	Advance(d time.Duration)
	// Set moves the clock to t and wakes the waiters it passes.
	Set(t time.Time)
}

// Real is the machine's clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// At waits in real time until t.
func (Real) At(t time.Time) (<-chan time.Time, func()) {
	timer := time.NewTimer(time.Until(t))
	return timer.C, func() { timer.Stop() }
}

// waiters is the set of pending At calls of a movable clock.
type waiters struct {
	next int
	m    map[int]waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func (w *waiters) add(at time.Time) (int, chan time.Time) {
	if w.m == nil {
		w.m = map[int]waiter{}
	}
	w.next++
	ch := make(chan time.Time, 1)
	w.m[w.next] = waiter{at: at, ch: ch}
	return w.next, ch
}

// fire delivers now to every waiter due at or before now and forgets them.
func (w *waiters) fire(now time.Time) {
	for id, x := range w.m {
		if !x.at.After(now) {
			x.ch <- now
			delete(w.m, id)
		}
	}
}

// Offset is the machine's clock shifted by an adjustable offset: it runs in real time, and a test
// can jump it forward (or back) at any moment. With Frozen set it stands still at the shifted time.
type Offset struct {
	mu     sync.Mutex
	offset time.Duration
	frozen bool
	at     time.Time // the frozen time when frozen
	w      waiters
	timer  *time.Timer
	real   func() time.Time
}

// NewOffset returns a running clock showing time.Now()+offset.
func NewOffset(offset time.Duration) *Offset { return &Offset{offset: offset, real: time.Now} }

// NewStartingAt returns a running clock that shows t now and then advances in real time.
func NewStartingAt(t time.Time) *Offset { return NewOffset(time.Until(t)) }

// NewFake returns a frozen clock that stands at t until a test moves it. Its waiters wake only
// when it is moved past them, never on their own.
func NewFake(t time.Time) *Offset { return &Offset{frozen: true, at: t, real: time.Now} }

func (o *Offset) nowLocked() time.Time {
	if o.frozen {
		return o.at
	}
	return o.real().Add(o.offset)
}

// Now returns the shifted time.
func (o *Offset) Now() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.nowLocked()
}

// At fires when the shifted time reaches t, either by real time passing or by a jump.
func (o *Offset) At(t time.Time) (<-chan time.Time, func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id, ch := o.w.add(t)
	o.rearmLocked()
	return ch, func() {
		o.mu.Lock()
		delete(o.w.m, id)
		o.rearmLocked()
		o.mu.Unlock()
	}
}

// rearmLocked fires the due waiters and sets one real timer for the earliest remaining one.
func (o *Offset) rearmLocked() {
	now := o.nowLocked()
	o.w.fire(now)
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	if o.frozen || len(o.w.m) == 0 {
		return
	}
	var earliest time.Time
	for _, x := range o.w.m {
		if earliest.IsZero() || x.at.Before(earliest) {
			earliest = x.at
		}
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
	if o.frozen {
		o.at = o.at.Add(d)
	} else {
		o.offset += d
	}
	o.rearmLocked()
}

// Set jumps the clock to t.
func (o *Offset) Set(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.frozen {
		o.at = t
	} else {
		o.offset = t.Sub(o.real())
	}
	o.rearmLocked()
}

// Stop releases the clock's real timer; pending waiters then wake only when the clock is moved.
func (o *Offset) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}
