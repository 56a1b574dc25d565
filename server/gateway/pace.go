package gateway

import (
	"sync/atomic"
	"time"
)

// Write pacing under load.
//
// A connection's loop writes what waits for it as soon as it is woken: one system call, and one
// wake-up of the client, per dispatch while dispatches come one at a time. Under a heavy load
// (a busy lobby fanning messages out to its members) that is most of the service's and the
// clients' work, where Redis, for one, writes once per turn of its event loop with everything
// pending. So the hub measures how many dispatches it pushes per second; above busyRate, a
// connection that wrote less than busyPace ago waits until busyPace after that write, and then
// writes everything that came meanwhile at once. A quiet service keeps writing at once.
//
// busyPace trades the delay a chat message can take under load for the work of each write: in
// make bench's fan-out (a 100-member lobby, two cores shared with the clients), 2 ms gave 0.36 to
// 0.47 of Redis's deliveries per second, 5 ms 0.42 to 0.57, and 10 ms 0.48 to 0.59 (six runs).
const (
	busyRate   = 50000                 // dispatches pushed per second, across all sessions
	busyPace   = 10 * time.Millisecond // the least time between two writes of one connection, when busy
	rateWindow = 20 * time.Millisecond // how often the rate is re-measured
)

// rateMeter counts the hub's pushes and says whether their rate is above busyRate.
type rateMeter struct {
	pushes atomic.Int64
	since  atomic.Int64 // monotonic nanoseconds (of elapsed) when the current window began
	busy   atomic.Bool
	// elapsed is the monotonic time since the meter started (time.Since by default; tests
	// drive it).
	elapsed func() time.Duration
}

func newRateMeter() *rateMeter {
	start := time.Now()
	return &rateMeter{elapsed: func() time.Duration { return time.Since(start) }}
}

// add counts n pushes and, once a window has passed, decides whether the hub is busy.
func (m *rateMeter) add(n int) {
	total := m.pushes.Add(int64(n))
	now := int64(m.elapsed())
	since := m.since.Load()
	if elapsed := now - since; elapsed >= int64(rateWindow) && m.since.CompareAndSwap(since, now) {
		m.pushes.Add(-total)
		m.busy.Store(float64(total)/time.Duration(elapsed).Seconds() >= busyRate)
	}
}

// isBusy reports the last measured state; a window without any push ends it.
func (m *rateMeter) isBusy() bool {
	if !m.busy.Load() {
		return false
	}
	if m.elapsed()-time.Duration(m.since.Load()) > 2*rateWindow {
		m.busy.Store(false) // nothing was pushed for a while
		return false
	}
	return true
}
