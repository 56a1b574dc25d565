// Package window tracks the minimum or the maximum of a stream of values over a sliding window of
// the most recent values, in constant memory and without allocating per value.
//
// The window is split into a fixed number of sub-windows of equal length. The extreme of the
// current, still filling sub-window is combined with those of the last subs completed ones; when a
// sub-window completes and the ring is full, the oldest is forgotten. The window therefore covers
// between subs*length and (subs+1)*length of the latest values, and an old extreme leaves it all
// at once when its sub-window ages out, which is what noise-floor and jitter estimators want.
package window

// MaxSubs is the largest number of sub-windows a Window supports.
const MaxSubs = 16

// Window is a sliding minimum or maximum. The zero value is not usable; call New.
// A Window is not safe for concurrent use.
type Window struct {
	max    bool // true tracks the maximum, false the minimum
	subs   int
	length int

	done  [MaxSubs]float64 // extremes of completed sub-windows, a ring
	nDone int              // how many entries of done are valid
	head  int              // index of the oldest completed sub-window in done
	cur   float64          // extreme of the filling sub-window
	count int              // values in the filling sub-window
}

// New returns a window of subs sub-windows (clamped to 1..MaxSubs) of length values each
// (at least 1); max selects whether it tracks the maximum (true) or the minimum (false).
func New(subs, length int, max bool) *Window {
	w := &Window{}
	w.Init(subs, length, max)
	return w
}

// Init (re)initialises w in place with the same meaning as New's arguments, forgetting every
// value. It lets a Window live inside another struct without a separate allocation.
func (w *Window) Init(subs, length int, max bool) {
	subs = min(max0(subs, 1), MaxSubs)
	*w = Window{max: max, subs: subs, length: max0(length, 1)}
}

func max0(v, lo int) int {
	if v < lo {
		return lo
	}
	return v
}

// Reset forgets every value, keeping the window's shape.
func (w *Window) Reset() { w.Init(w.subs, w.length, w.max) }

// Len returns how many of the values seen since the last reset the window covers.
func (w *Window) Len() int { return w.nDone*w.length + w.count }

// Add records one value.
func (w *Window) Add(v float64) {
	if w.count == 0 || w.better(v, w.cur) {
		w.cur = v
	}
	w.count++
	if w.count < w.length {
		return
	}
	// The filling sub-window is complete: append it to the ring, evicting the oldest
	// completed one when the ring is full.
	if w.nDone == w.subs {
		w.head = (w.head + 1) % w.subs
		w.nDone--
	}
	w.done[(w.head+w.nDone)%w.subs] = w.cur
	w.nDone++
	w.count = 0
}

// Value returns the extreme over the window and whether the window holds any value.
func (w *Window) Value() (float64, bool) {
	have := w.count > 0
	v := w.cur
	for i := 0; i < w.nDone; i++ {
		d := w.done[(w.head+i)%w.subs]
		if !have || w.better(d, v) {
			v, have = d, true
		}
	}
	return v, have
}

func (w *Window) better(a, b float64) bool {
	if w.max {
		return a > b
	}
	return a < b
}
