package counters

import (
	"context"
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// LeaseShare is the share of a window's limit that Leased takes from the store at once: 1/8 of
// it, at least one event.
const LeaseShare = 8

// Leased is a Counter in the store, shared by every node of its database, that does not write
// to the store at every event: a node takes a share of a window's events at once (a lease of
// Limit/LeaseShare events, at least one) and counts them down in its memory, and goes back to
// the store when its lease is spent. A caller at its limit's full rate costs a node a write per
// lease instead of one per event (about LeaseShare writes per window and key instead of Limit).
//
// The leases of all nodes are taken from the one window in the store, which never hands out
// more than the limit: a limit is never exceeded, across any number of nodes. The slack is the
// other way: events leased by a node and not used by the window's end are not counted anywhere
// else, so a caller whose requests move between nodes may be refused up to (nodes-1)*(lease-1)
// events early in a window (with the defaults, a limit of 50 and three nodes: 10 events). A limit
// of less than LeaseShare events leases one at a time, as Stored counts: exact.
//
// The windows Hit returns count, in this node's view, the events the store has handed out less
// what this node still holds: exact on one node, an upper bound where others hold leases.
type Leased struct {
	st Store

	mu     sync.Mutex
	leases map[string]*lease
	sweep  clock.Chore // this memory's ended leases
	stored clock.Chore // the store's ended windows
}

// lease is a node's share of a window.
type lease struct {
	start, end time.Time
	left       int  // events taken from the store and not counted yet
	count      int  // the window's count in the store after the last take
	full       bool // the store's window had no room left: it has none until it ends
}

// NewLeased returns a Leased on st.
func NewLeased(st Store) *Leased { return &Leased{st: st, leases: map[string]*lease{}} }

// size is how many events a lease of h asks for.
func size(h Hit) int { return max(1, h.Limit/LeaseShare) }

// Hit implements Counter: it counts the event from the leases of the hits' windows, and takes
// new leases from the store (one statement for all, two when a window is full) for those that
// have none left; the store is not asked while its answer is awaited, so no lock is held across
// the round trip.
func (l *Leased) Hit(ctx context.Context, now time.Time, hits ...Hit) (bool, []Window, error) {
	if l.stored.Due(now, sweepEvery) {
		if err := l.st.SweepWindows(ctx, now); err != nil {
			return false, nil, err
		}
	}
	// full: the last take found a window with no room. Each take that found room took some of
	// a window, which has only its limit to give: the loop ends.
	for full := false; ; {
		l.mu.Lock()
		if l.sweep.Due(now, sweepEvery) {
			for k, ls := range l.leases {
				if !now.Before(ls.end) {
					delete(l.leases, k)
				}
			}
		}
		var need []Hit
		var want []int
		for _, h := range hits {
			switch ls := l.current(h.Key, now); {
			case ls != nil && ls.left == 0 && ls.full:
				full = true // refused without asking the store again
			case ls == nil || ls.left == 0:
				need, want = append(need, h), append(want, size(h))
			}
		}
		if len(need) == 0 || full {
			ok := len(need) == 0 && !full
			out := make([]Window, len(hits))
			for i, h := range hits {
				ls := l.current(h.Key, now)
				if ls == nil { // the store's window is not now's (the clock went back): refuse
					out[i] = Window{Start: now, End: now.Add(h.Window), Count: h.Limit}
					ok = false
					continue
				}
				if ok {
					ls.left--
				}
				out[i] = Window{Start: ls.start, End: ls.end, Count: ls.count - ls.left}
			}
			l.mu.Unlock()
			return ok, out, nil
		}
		l.mu.Unlock()

		ws, taken, err := l.st.TakeWindows(ctx, now, need, want)
		if err != nil {
			return false, nil, err
		}
		l.mu.Lock()
		for i, h := range need {
			w := ws[i]
			ls := l.leases[h.Key]
			if ls == nil || !ls.start.Equal(w.Start) {
				ls = &lease{start: w.Start, end: w.End}
				l.leases[h.Key] = ls
			}
			ls.left += taken[i]
			ls.count = max(ls.count, w.Count)
			if taken[i] == 0 {
				ls.full, full = true, true
			}
		}
		l.mu.Unlock()
	}
}

// current returns key's lease of the window current at now, nil when there is none.
func (l *Leased) current(key string, now time.Time) *lease {
	ls := l.leases[key]
	if ls == nil || !now.Before(ls.end) || now.Before(ls.start) {
		return nil
	}
	return ls
}

// Peek implements Counter: the window as the store has it (the events every node has leased).
func (l *Leased) Peek(ctx context.Context, key string, now time.Time) (Window, error) {
	return l.st.PeekWindow(ctx, key, now)
}
