// Package pace holds the gateway's write pacing under load: a Meter of the hub's dispatch rate,
// and the pacing's parameters, which a connection's loop applies.
//
// A connection's loop writes what waits for it as soon as it is woken: one system call, and one
// wake-up of the client, per dispatch while dispatches come one at a time. Under a heavy load
// (a busy lobby fanning messages out to its members) that is most of the service's and the
// clients' work, where Redis, for one, writes once per turn of its event loop with everything
// pending. So the hub measures how many dispatches it pushes per second with a Meter; above
// BusyRate, a connection that wrote less than BusyPace ago waits until BusyPace after that
// write, and then writes everything that came meanwhile at once. A quiet service keeps writing
// at once. A connection whose last write carried several dispatches (they come faster than it
// writes them) is paced the same way whatever the hub's rate; a request's answer is not held.
// Nor is a paced write once the pushes pause for longer than the stream's own pauses (Quiet):
// nothing more is coming to join it.
//
// BusyPace trades the delay a chat message can take under load for the work of each write: in
// make bench's fan-out (a 100-member lobby, two cores shared with the clients), 2 ms gave 0.36 to
// 0.47 of Redis's deliveries per second, 5 ms 0.42 to 0.57, and 10 ms 0.48 to 0.59 (six runs).
// In the three-node fan-out (three nodes on PostgreSQL and NATS, 50 of the lobby's members on
// each receiving node), 20 ms against 10 ms took each receiving node's write system calls per
// message from 2.6 to 1.35, its CPU per message from 105 µs to 78 µs and the clients' from 150
// µs to 120 µs, and the ratio to Redis from 0.48 to 0.51 (medians of eight runs each, in turns,
// on a machine loaded 3 to 7). A dispatch may then wait up to 20 ms for its write instead of
// 10, and only while the hub is busy: messages sent one at a time are not paced.
//
// BusyRate was 50,000 a second, which a 10-member lobby's fan-out (40,000 to 60,000 deliveries a
// second on the shared machine) crossed only at times: at 25,000 its writes are paced throughout,
// and the service's CPU per message went from 125-146 µs to 111-126 µs, its clients' from 67-80
// µs to 60-64 µs (three runs each, in turns). Messages sent one at a time to a few members, as
// make bench's latency figure sends them, push at most about 13,000 a second and are not paced.
package pace

import (
	"sync/atomic"
	"time"
)

// Pacing's parameters.
const (
	BusyRate = 25000                 // dispatches pushed per second, across all sessions
	BusyPace = 20 * time.Millisecond // the least time between two writes of one connection, when busy
	Window   = 20 * time.Millisecond // how often the rate is re-measured
)

// Meter counts the hub's pushes and says whether their rate is above BusyRate. It is safe for
// concurrent use.
type Meter struct {
	pushes atomic.Int64
	count  atomic.Int64 // every push counted, for Count
	since  atomic.Int64 // monotonic nanoseconds (of elapsed) when the current window began
	busy   atomic.Bool
	// elapsed is the monotonic time since the meter started (time.Since by default; tests
	// drive it).
	elapsed func() time.Duration
}

// NewMeter returns a Meter of real time.
func NewMeter() *Meter {
	start := time.Now()
	return &Meter{elapsed: func() time.Duration { return time.Since(start) }}
}

// Add counts n pushes and, once a window has passed, decides whether the hub is busy.
func (m *Meter) Add(n int) {
	m.count.Add(int64(n))
	total := m.pushes.Add(int64(n))
	now := int64(m.elapsed())
	since := m.since.Load()
	if elapsed := now - since; elapsed >= int64(Window) && m.since.CompareAndSwap(since, now) {
		m.pushes.Add(-total)
		m.busy.Store(float64(total)/time.Duration(elapsed).Seconds() >= BusyRate)
	}
}

// Count returns how many pushes Add has counted since the meter started.
func (m *Meter) Count() int64 { return m.count.Load() }

// Busy reports the last measured state; a window without any push ends it.
func (m *Meter) Busy() bool {
	if !m.busy.Load() {
		return false
	}
	if m.elapsed()-time.Duration(m.since.Load()) > 2*Window {
		m.busy.Store(false) // nothing was pushed for a while
		return false
	}
	return true
}

// Wait is how long a connection that last wrote at last (zero: never) waits at now before it
// writes again: until every (BusyPace, unless a test chose another) after that write when the
// hub is busy or the connection has a backlog (its last write carried several dispatches), else
// not at all.
func Wait(busy, backlog bool, last, now time.Time, every time.Duration) time.Duration {
	if !busy && !backlog || last.IsZero() {
		return 0
	}
	return max(every-now.Sub(last), 0)
}
