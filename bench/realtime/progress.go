package main

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Ahead is the most messages a fan-out's sender runs ahead of its slowest receiver, on every
// side alike (sdkpp, the floor, Redis). A receiver starved of CPU on a loaded machine otherwise
// fell as far behind as the sender ran: the gateway closes a session 1,000 dispatches behind
// ("too far behind", 4000), and the turn then waited for deliveries that never came. 500 plus the
// sends in flight keeps every member well inside that bound, and is far more than a receiver of
// an idle run lags (a write paced by the gateway carries at most what came in 20 ms).
const Ahead = 500

// Stall is how long a fan-out's turn waits with no delivery at all (or a held sender with its
// slowest receiver not moving) before it fails with what it knows: a turn that falls short does
// not wait out minutes.
const Stall = 10 * time.Second

// deliveries counts the messages a fan-out's receivers have read, each receiver's and in all, tells
// when a target is met, and holds a sender that would run more than Ahead messages ahead of the
// slowest receiver.
type deliveries struct {
	n      atomic.Int64
	target atomic.Int64
	met    chan struct{} // one value each time n reaches target
	per    []atomic.Int64
	low    atomic.Int64 // the slowest receiver's count when last looked at (it only grows)
	held   atomic.Int32 // senders waiting in hold
	moved  chan struct{}
	stall  time.Duration
	// refused counts the times room found a send too far ahead (for the tests).
	refused atomic.Int64
}

func newDeliveries(receivers int) *deliveries {
	return &deliveries{met: make(chan struct{}, 1), per: make([]atomic.Int64, receivers),
		moved: make(chan struct{}, 1), stall: Stall}
}

// add counts one delivery to receiver i; called by the receivers' goroutines.
func (d *deliveries) add(i int) {
	d.per[i].Add(1)
	if d.n.Add(1) == d.target.Load() {
		d.met <- struct{}{}
	}
	if d.held.Load() > 0 {
		select {
		case d.moved <- struct{}{}:
		default:
		}
	}
}

// slowest returns the fewest deliveries any receiver has read.
func (d *deliveries) slowest() int64 {
	low := d.per[0].Load()
	for i := range d.per[1:] {
		low = min(low, d.per[1+i].Load())
	}
	return low
}

// room reports whether the sender may send message k (counted from 1 over every turn of the
// side) now: whether every receiver has read message k-Ahead. It looks at each receiver only
// when the slowest it last saw is that far behind.
func (d *deliveries) room(k int64) bool {
	if k-Ahead <= d.low.Load() {
		return true
	}
	low := d.slowest()
	for old := d.low.Load(); low > old && !d.low.CompareAndSwap(old, low); old = d.low.Load() {
	}
	if k-Ahead > low {
		d.refused.Add(1)
		return false
	}
	return true
}

// hold waits until the sender may send message k (room), and fails once the slowest receiver
// has not moved for the stall.
func (d *deliveries) hold(k int64) error {
	if d.room(k) {
		return nil
	}
	d.held.Add(1)
	defer d.held.Add(-1)
	low := d.slowest()
	t := time.NewTimer(d.stall)
	defer t.Stop()
	for !d.room(k) {
		select {
		case <-d.moved:
			if now := d.slowest(); now != low {
				low = now
				t.Reset(d.stall)
			}
		case <-t.C:
			return fmt.Errorf("message %d held: the slowest receiver read %d and no more in %s", k, low, d.stall)
		}
	}
	return nil
}

// expect sets the target to more deliveries than so far and returns a wait that returns once
// they arrived, with the first error from errs (which may be nil), or fails once no delivery
// came for the stall. Call it before the sends that make them.
func (d *deliveries) expect(more int64, errs <-chan error) (wait func() error) {
	want := d.n.Load() + more
	d.target.Store(want)
	return func() error {
		seen := d.n.Load()
		t := time.NewTicker(d.stall)
		defer t.Stop()
		for {
			select {
			case <-d.met:
				return nil
			case err := <-errs:
				return err
			case <-t.C:
				n := d.n.Load()
				if n == seen {
					return fmt.Errorf("%d of %d deliveries, none in the last %s", n, want, d.stall)
				}
				seen = n
			}
		}
	}
}
