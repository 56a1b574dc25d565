package tunnel

import (
	"time"

	"sdkpp/internal/clock"
)

// deadlines holds the calls whose outcome Then awaits, in the order of their deadlines, with one
// timer for all of them: a timer of its own for each request (armed by Then, stopped by its
// answer) cost every lobby message a timer's allocation and two updates of the runtime's timer
// heap. Every call waits the same Wait, so a call's deadline is almost always the latest: it is
// appended to a list through the calls, and an answered call leaves the list at once (remove).
//
// The timer is armed for the earliest deadline, or earlier: when a call is answered the timer is
// left as it is, and when it fires (expire) it gives up on the calls whose deadline has passed,
// then is armed again for the next deadline, if any. So under a steady flow of requests it fires
// about once per Wait, not once per request, and never before a deadline it acts on. Lost stops
// it (clear).
//
// Its fields and the calls' list fields are guarded by the Tunnel's mu.
type deadlines struct {
	first, last *Call
	timer       clock.Timer // armed for at; nil when not armed
	at          time.Time
	clk         clock.Clock // the timer's
	armed       uint64      // counts the timers armed: a timer whose number is older does nothing
}

// await lists c, whose outcome Then awaits, with its deadline Wait from now on the Tunnel's Clock,
// unless c was taken already (answered, lost or given up since Then began).
func (t *Tunnel) await(c *Call) {
	clk := t.clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending[c.id] != c {
		return
	}
	d := &t.waiting
	c.deadline = clk.Now().Add(Wait)
	// After the last call whose deadline is not later: the last one, but for a clock set back.
	after := d.last
	for after != nil && after.deadline.After(c.deadline) {
		after = after.prev
	}
	c.prev, c.listed = after, true
	if after == nil {
		c.next, d.first = d.first, c
	} else {
		c.next, after.next = after.next, c
	}
	if c.next == nil {
		d.last = c
	} else {
		c.next.prev = c
	}
	if d.timer == nil || d.first.deadline.Before(d.at) {
		t.arm(clk, d.first.deadline)
	}
}

// remove takes c off the list, if it is on it; the timer is left armed (see deadlines).
func (d *deadlines) remove(c *Call) {
	if !c.listed {
		return
	}
	if c.prev == nil {
		d.first = c.next
	} else {
		c.prev.next = c.next
	}
	if c.next == nil {
		d.last = c.prev
	} else {
		c.next.prev = c.prev
	}
	c.prev, c.next, c.listed = nil, nil, false
}

// clear empties the list and stops the timer.
func (d *deadlines) clear() {
	for c := d.first; c != nil; {
		next := c.next
		c.prev, c.next, c.listed = nil, nil, false
		c = next
	}
	d.first, d.last = nil, nil
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
}

// arm (re)arms the timer for at on clk.
func (t *Tunnel) arm(clk clock.Clock, at time.Time) {
	d := &t.waiting
	if d.timer != nil {
		d.timer.Stop()
	}
	d.armed++
	n := d.armed
	d.timer, d.at, d.clk = clk.AfterFunc(at.Sub(clk.Now()), func() { t.expire(n) }), at, clk
}

// expire runs when the timer armed n-th fires: it gives up on the calls whose deadline has passed,
// delivering ErrLost to each, and arms the timer for the next deadline.
func (t *Tunnel) expire(n uint64) {
	t.mu.Lock()
	d := &t.waiting
	if n != d.armed {
		t.mu.Unlock()
		return // stopped or re-armed meanwhile
	}
	d.timer = nil
	now := d.clk.Now()
	var late []*Call
	for d.first != nil && !d.first.deadline.After(now) {
		c := d.first
		d.remove(c)
		delete(t.pending, c.id)
		late = append(late, c)
	}
	if d.first != nil {
		t.arm(d.clk, d.first.deadline)
	}
	t.mu.Unlock()
	for _, c := range late {
		c.deliver(answer{lost: true})
	}
}
