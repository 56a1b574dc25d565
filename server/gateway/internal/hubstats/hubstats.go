// Package hubstats counts what a gateway hub has done, for its Stats: the sessions it started
// and resumed, the dispatches of each event and their deliveries, the connections it closed by
// close code.
package hubstats

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Counters are a hub's counters. The zero value is ready; it is safe for concurrent use.
type Counters struct {
	Identifies atomic.Uint64 // sessions started by Identify
	Resumes    atomic.Uint64 // sessions re-attached by Resume
	Replayed   atomic.Uint64 // dispatches sent again by those resumes

	events sync.Map // event name -> *eventCounts

	mu     sync.Mutex
	closes map[int]uint64
}

type eventCounts struct{ dispatches, deliveries atomic.Uint64 }

// Dispatched counts one dispatch of event pushed to sessions sessions.
func (s *Counters) Dispatched(event string, sessions int) {
	c, ok := s.events.Load(event)
	if !ok {
		c, _ = s.events.LoadOrStore(event, &eventCounts{})
	}
	ec := c.(*eventCounts)
	ec.dispatches.Add(1)
	ec.deliveries.Add(uint64(sessions))
}

// Closed counts a connection ended with code.
func (s *Counters) Closed(code int) {
	s.mu.Lock()
	if s.closes == nil {
		s.closes = map[int]uint64{}
	}
	s.closes[code]++
	s.mu.Unlock()
}

// Events calls fn with the counts of each event dispatched: the dispatches, and the sessions
// they were pushed to.
func (s *Counters) Events(fn func(event string, dispatches, deliveries uint64)) {
	s.events.Range(func(k, v any) bool {
		c := v.(*eventCounts)
		fn(k.(string), c.dispatches.Load(), c.deliveries.Load())
		return true
	})
}

// Closes returns a copy of the counts of ended connections by close code (nil before any).
func (s *Counters) Closes() map[int]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.closes)
}
