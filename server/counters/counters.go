// Package counters counts events in fixed windows, by key: the state behind the service's
// limits (REST rate limits, a bot's session starts, member requests, slowmode). A Counter keeps
// the windows in this process's memory (Memory), or in the store (Stored) where several nodes
// share one database, so that a limit holds for a caller whose requests reach any of them.
//
// A window starts at the first event after the last one ended and lasts its Hit's Window; it
// counts at most Limit events. An event is counted in all of its hits' windows or, when one is
// full, in none.
package counters

import (
	"context"
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// Hit is a counter an event must fit in: at most Limit events per Window.
type Hit struct {
	Key    string
	Limit  int
	Window time.Duration
}

// Window is a counter's current window: when it started and ends, and the events it counted.
type Window struct {
	Start, End time.Time
	Count      int
}

// Store keeps windows for every node of a database (store.SharedStateStore).
type Store interface {
	// Shared tells whether other nodes may share the store.
	Shared() bool
	HitWindows(ctx context.Context, now time.Time, hits []Hit) (bool, []Window, error)
	TakeWindows(ctx context.Context, now time.Time, hits []Hit, n []int) ([]Window, []int, error)
	PeekWindow(ctx context.Context, key string, now time.Time) (Window, error)
	SweepWindows(ctx context.Context, now time.Time) error
}

// Counter counts events in fixed windows. Implementations are safe for concurrent use.
type Counter interface {
	// Hit counts one event at now in the windows of every hit (their keys differ) when each
	// has room, else in none. It returns whether the event was counted and each window as it
	// is after, in the order of hits.
	Hit(ctx context.Context, now time.Time, hits ...Hit) (bool, []Window, error)
	// Peek returns key's window current at now, the zero Window when there is none.
	Peek(ctx context.Context, key string, now time.Time) (Window, error)
}

// For returns the counter fit for st: Stored when other nodes may share the database, else a
// Memory, which costs no store round trip.
func For(st Store) Counter {
	if st.Shared() {
		return NewStored(st)
	}
	return NewMemory()
}

// ForRequests returns the counter fit for st for a limit checked at every request (the REST
// rate limits): Leased when other nodes may share the database, which writes to it once per
// share of a window rather than once per request, else a Memory.
func ForRequests(st Store) Counter {
	if st.Shared() {
		return NewLeased(st)
	}
	return NewMemory()
}

// sweepEvery is how often, on the clock of the events, ended windows are forgotten.
const sweepEvery = time.Minute

// Memory is a Counter in this process's memory.
type Memory struct {
	mu      sync.Mutex
	windows map[string]*Window
	sweep   clock.Chore
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{windows: map[string]*Window{}} }

// Hit implements Counter.
func (m *Memory) Hit(_ context.Context, now time.Time, hits ...Hit) (bool, []Window, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	ws := make([]*Window, len(hits))
	ok := true
	for i, h := range hits {
		w := m.windows[h.Key]
		if w == nil || !now.Before(w.End) || now.Before(w.Start) {
			w = &Window{Start: now, End: now.Add(h.Window)}
			m.windows[h.Key] = w
		}
		ws[i] = w
		ok = ok && w.Count < h.Limit
	}
	out := make([]Window, len(hits))
	for i, w := range ws {
		if ok {
			w.Count++
		}
		out[i] = *w
	}
	return ok, out, nil
}

// Peek implements Counter.
func (m *Memory) Peek(_ context.Context, key string, now time.Time) (Window, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.windows[key]
	if w == nil || !now.Before(w.End) || now.Before(w.Start) {
		return Window{}, nil
	}
	return *w, nil
}

// sweepLocked forgets ended windows, at most once per sweepEvery.
func (m *Memory) sweepLocked(now time.Time) {
	if !m.sweep.Due(now, sweepEvery) {
		return
	}
	for k, w := range m.windows {
		if !now.Before(w.End) {
			delete(m.windows, k)
		}
	}
}

// Stored is a Counter in the store, shared by every node of its database.
type Stored struct {
	st    Store
	sweep clock.Chore
}

// NewStored returns a Counter on st.
func NewStored(st Store) *Stored { return &Stored{st: st} }

// Hit implements Counter: one statement (two when the event is refused), and at most once per
// sweepEvery of this node's events a sweep of the ended windows.
func (s *Stored) Hit(ctx context.Context, now time.Time, hits ...Hit) (bool, []Window, error) {
	if s.sweep.Due(now, sweepEvery) {
		if err := s.st.SweepWindows(ctx, now); err != nil {
			return false, nil, err
		}
	}
	return s.st.HitWindows(ctx, now, hits)
}

// Peek implements Counter.
func (s *Stored) Peek(ctx context.Context, key string, now time.Time) (Window, error) {
	return s.st.PeekWindow(ctx, key, now)
}
