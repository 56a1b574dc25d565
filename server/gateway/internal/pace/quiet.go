package pace

import (
	"sync"
	"time"
)

// QuietAfter is how often Quiet looks at the hub's pushes while paced writes are due: the unit
// of the pauses it tells apart.
//
// A paced write waits for what is pushed during its pace, to carry it in the same write. Once
// the pushes stop (the end of a burst: a lobby's players stop talking, or make bench's turn
// ends), nothing more comes to join it, and the dispatches pushed last would wait the rest of
// BusyPace for nothing: in make bench's 10-member fan-out, 7 to 19 ms from the sender's last
// answer to its members' last dispatch, a tenth of each turn. A pause in a stream that goes on
// is no end, though: a node of a cluster pushes what it reads from the bus in groups, a few
// milliseconds apart, and writing at each of those pauses took its writes per message from
// about 1.5 to 5. So Quiet learns the pauses after which the pushes went on (decaying, so that
// it follows the stream), and makes the writes due at a pause longer than nine in ten of them.
// Not longer than all of them: one stall of the machine (a collection, a busy core) then held
// every burst's last dispatches that long for a second or more after it, 4 to 8 ms at the end
// of each of make bench's fan-out turns on a loaded machine.
const QuietAfter = time.Millisecond

// Quiet's learning of the pauses, in QuietAfter ticks.
const (
	watchTicks = int(BusyPace / QuietAfter) // a pause this long is an end whatever was learnt
	decayTicks = 1024                       // ticks with pushes after which the pauses learnt count half
	leastUsual = 1                          // a pause of a tick alone is no end (a thread's stall)
	usualShare = 0.9                        // the share of the pauses learnt that a usual pause covers
)

// Flusher is a connection whose paced write Quiet can make at once.
type Flusher interface {
	// FlushPaced has the paced write due made now, not at its pace. It must not block.
	FlushPaced()
}

// Quiet makes the paced writes due at once when the pushes a Meter counts pause for longer than
// the pauses the stream went on after (at least QuietAfter). While writes are due, and for a
// while after it made some (to learn whether the stream goes on), it looks at the meter's count
// every QuietAfter, on a timer (no goroutine of its own). It is safe for concurrent use.
type Quiet struct {
	meter *Meter
	after time.Duration

	mu      sync.Mutex
	due     map[Flusher]struct{}
	timer   *time.Timer
	running bool  // the timer is set
	last    int64 // the meter's count at the last tick
	pause   int   // ticks since the count last changed
	usual   int   // the pause that usualShare of those the pushes went on after were not longer than
	ticks   int   // ticks with pushes, for the decay
	// seen counts the pauses the pushes went on after, by their length in ticks, decaying.
	seen    [watchTicks + 1]float64
	stopped bool
}

// NewQuiet returns a Quiet of the pushes m counts.
func NewQuiet(m *Meter) *Quiet {
	return &Quiet{meter: m, after: QuietAfter, due: map[Flusher]struct{}{}, usual: leastUsual}
}

// Due tells that f has a paced write due, to be made at once should the pushes pause first.
func (q *Quiet) Due(f Flusher) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	q.due[f] = struct{}{}
	if q.running {
		return
	}
	q.running, q.last, q.pause = true, q.meter.Count(), 0
	if q.timer == nil {
		q.timer = time.AfterFunc(q.after, q.tick)
	} else {
		q.timer.Reset(q.after)
	}
}

// Done tells that f has made its paced write, or no longer has one.
func (q *Quiet) Done(f Flusher) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.due, f)
}

// Stop stops the timer; Due does nothing after it.
func (q *Quiet) Stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	if q.timer != nil {
		q.timer.Stop()
	}
	clear(q.due)
}

// tick is the timer's: it learns the pauses, has the writes due made at a pause longer than
// those the stream went on after, and sets the timer again while writes are due or a pause is
// watched.
func (q *Quiet) tick() {
	q.mu.Lock()
	if q.stopped {
		q.running = false
		q.mu.Unlock()
		return
	}
	if n := q.meter.Count(); n != q.last {
		if q.pause > 0 { // the pushes went on after this pause
			q.seen[min(q.pause, watchTicks)]++
			q.learn()
		}
		q.last, q.pause = n, 0
		if q.ticks++; q.ticks%decayTicks == 0 {
			for i := range q.seen {
				q.seen[i] /= 2
			}
		}
	} else {
		q.pause++
	}
	var fs []Flusher
	if len(q.due) > 0 && q.pause > q.usual {
		fs = make([]Flusher, 0, len(q.due))
		for f := range q.due {
			fs = append(fs, f)
		}
		clear(q.due)
	}
	if len(q.due) > 0 || q.pause > 0 && q.pause < watchTicks {
		q.timer.Reset(q.after)
	} else {
		q.running = false
	}
	q.mu.Unlock()
	for _, f := range fs {
		f.FlushPaced()
	}
}

// learn sets usual to the shortest pause that usualShare of the pauses seen were not longer
// than (at least leastUsual). Call with mu.
func (q *Quiet) learn() {
	var total float64
	for _, n := range q.seen {
		total += n
	}
	var below float64
	for p, n := range q.seen {
		if below += n; below >= usualShare*total {
			q.usual = max(p, leastUsual)
			return
		}
	}
}
