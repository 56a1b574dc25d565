package gateway

// Stats is what a Hub has done since it was made, and what it holds now, for the service's
// metrics. Reading it takes the hub's lock once.
type Stats struct {
	Connections int // open WebSocket connections
	Sessions    int // sessions, attached to a connection or waiting to be resumed
	Connected   int // sessions attached to a connection
	// Queued is how many dispatches were pushed to connected sessions and not yet taken for
	// writing; QueuedMax is the most for one connection.
	Queued, QueuedMax int64

	Identifies uint64 // sessions started by Identify
	Resumes    uint64 // sessions re-attached by Resume
	Replayed   uint64 // dispatches sent again by those resumes
	// Events counts the dispatches by event name.
	Events map[string]EventStats
	// Closes counts ended connections by the close code sent (0: none, the peer went first).
	Closes map[int]uint64
}

// EventStats counts the dispatches of one event.
type EventStats struct {
	// Dispatches counts the events dispatched, each once however many sessions got it (an
	// event sent in two shapes, with and without message content, counts twice).
	Dispatches uint64
	Deliveries uint64 // sessions the dispatches were pushed to: the fan-out
}

// Stats returns the hub's counters and its current connections, sessions and send queues.
func (h *Hub) Stats() Stats {
	st := Stats{Identifies: h.stats.Identifies.Load(), Resumes: h.stats.Resumes.Load(),
		Replayed: h.stats.Replayed.Load(), Events: map[string]EventStats{}, Closes: h.stats.Closes()}
	h.stats.Events(func(event string, dispatches, deliveries uint64) {
		st.Events[event] = EventStats{Dispatches: dispatches, Deliveries: deliveries}
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	st.Connections, st.Sessions = len(h.conns), len(h.sessions)
	for _, s := range h.sessions {
		if s.conn == nil {
			continue
		}
		st.Connected++
		q := s.Seq() - s.conn.sent
		st.Queued += q
		st.QueuedMax = max(st.QueuedMax, q)
	}
	return st
}
