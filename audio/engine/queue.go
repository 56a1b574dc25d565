package engine

import (
	"sync"
	"time"

	"sdkpp/audio/jitter"
)

// queueSlots is how many received packets wait for the engine goroutine at most: 256 packets,
// over half a second of eight senders. Packets beyond it are dropped (and counted).
const queueSlots = 256

// queued is one received packet waiting for the engine goroutine, its payload in a slot of its
// own allocated up front.
type queued struct {
	sender  uint64
	pkt     jitter.Packet
	arrival time.Duration
	buf     [jitter.MaxPayload]byte
}

// queue hands received packets from the network's goroutines to the engine goroutine. Push and
// drain hold a mutex only while copying one packet or swapping two slices; neither allocates.
type queue struct {
	mu      sync.Mutex
	in      []*queued // filled by push, swapped with out by drain
	out     []*queued
	free    []*queued
	dropped uint64
}

func newQueue() *queue {
	q := &queue{
		in:   make([]*queued, 0, queueSlots),
		out:  make([]*queued, 0, queueSlots),
		free: make([]*queued, queueSlots),
	}
	slots := make([]queued, queueSlots)
	for i := range slots {
		q.free[i] = &slots[i]
	}
	return q
}

// push copies a packet into a free slot; it reports false when the queue is full or the payload
// too large.
func (q *queue) push(sender uint64, p jitter.Packet, arrival time.Duration) bool {
	if len(p.Payload) > jitter.MaxPayload {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.free)
	if n == 0 {
		q.dropped++
		return false
	}
	s := q.free[n-1]
	q.free = q.free[:n-1]
	s.sender, s.arrival = sender, arrival
	s.pkt = jitter.Packet{Seq: p.Seq, Timestamp: p.Timestamp, EndOfSpeech: p.EndOfSpeech}
	s.pkt.Payload = s.buf[:copy(s.buf[:], p.Payload)]
	q.in = append(q.in, s)
	return true
}

// pending reports whether packets wait to be drained.
func (q *queue) pending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.in) > 0
}

// drain calls fn for every queued packet in arrival order, then returns the slots. Only the
// engine goroutine calls it; fn runs without the mutex held.
func (q *queue) drain(fn func(*queued)) {
	q.mu.Lock()
	q.in, q.out = q.out[:0], q.in
	q.mu.Unlock()
	if len(q.out) == 0 {
		return
	}
	for _, s := range q.out {
		fn(s)
	}
	q.mu.Lock()
	q.free = append(q.free, q.out...)
	q.mu.Unlock()
	q.out = q.out[:0]
}
