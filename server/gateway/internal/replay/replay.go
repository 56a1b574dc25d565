// Package replay is a gateway session's replay buffer: the last dispatches given to the session,
// with their sequence numbers, kept for a client that resumes or falls behind.
package replay

import (
	"cmp"
	"slices"

	"sdkpp/server/gateway/internal/wsframe"
)

// Buffer gives out a session's sequence numbers and holds its last dispatches, at most a limit
// that each call passes, oldest first. Sequence numbers increase but need not be consecutive.
// The zero Buffer is empty, its last sequence number 0. A Buffer is not safe for concurrent
// use (the hub's lock guards it).
type Buffer struct {
	seq int64 // the last sequence number given out
	// buf[head:] holds the dispatches; dropped is the sequence number of the last one dropped
	// from it (0 when none was).
	buf     []wsframe.Dispatch
	head    int
	dropped int64
}

// Seq returns the last sequence number given out.
func (b *Buffer) Seq() int64 { return b.seq }

// SetSeq sets the last sequence number given out, of a buffer that holds nothing yet: the next
// Push takes the number after seq.
func (b *Buffer) SetSeq(seq int64) { b.seq = seq }

// Push gives the next sequence number to a dispatch of the quoted event with data d, keeps it
// (dropping the oldest beyond limit), and returns it.
func (b *Buffer) Push(event, d []byte, limit int) wsframe.Dispatch {
	return b.PushSeq(b.seq+1, event, d, limit)
}

// PushSeq is Push with the sequence number seq, which must be above Seq. On a cluster the
// dispatches read from the bus take numbers derived from the bus's, so that another node that
// replays them from the bus gives them the same numbers.
func (b *Buffer) PushSeq(seq int64, event, d []byte, limit int) wsframe.Dispatch {
	b.seq = seq
	e := wsframe.Dispatch{Seq: b.seq, Event: event, Data: d}
	b.buf = append(b.buf, e)
	if len(b.buf)-b.head > limit {
		b.dropped = b.buf[b.head].Seq
		b.buf[b.head] = wsframe.Dispatch{}
		b.head++
	}
	if b.head >= limit && b.head >= len(b.buf)/2 { // compact, amortized O(1) per push
		n := copy(b.buf, b.buf[b.head:])
		clear(b.buf[n:])
		b.buf = b.buf[:n]
		b.head = 0
	}
	return e
}

// Prepend keeps list, dispatches numbered below every held one, before those held, dropping
// the oldest beyond limit. The buffer keeps a copy: the caller may go on reading list without
// the lock that guards b (a resumed session writes it out while new dispatches are pushed).
func (b *Buffer) Prepend(list []wsframe.Dispatch, limit int) {
	held := make([]wsframe.Dispatch, 0, len(list)+len(b.buf)-b.head)
	held = append(append(held, list...), b.buf[b.head:]...)
	if over := len(held) - limit; over > 0 {
		b.dropped = held[over-1].Seq
		held = held[over:]
	}
	b.buf, b.head = held, 0
}

// After returns a copy of the held dispatches with a sequence number above seq, and whether the
// buffer still holds all of them (false when some were dropped).
func (b *Buffer) After(seq int64) ([]wsframe.Dispatch, bool) { return b.AppendAfter(nil, seq) }

// AppendAfter is After appending the copy to dst, whose array a caller may use again.
func (b *Buffer) AppendAfter(dst []wsframe.Dispatch, seq int64) ([]wsframe.Dispatch, bool) {
	held := b.buf[b.head:]
	if seq >= b.seq {
		return dst, true
	}
	if seq < b.dropped {
		return dst, false
	}
	// A connection takes what came since its last write, a few dispatches at the end: looked
	// for from there, they are in the cache (a search from the middle of a buffer of a
	// thousand misses it, for each of a node's sessions at each write).
	i := len(held)
	for i > 0 && held[i-1].Seq > seq && len(held)-i < maxScanned {
		i--
	}
	if i > 0 && held[i-1].Seq > seq {
		i, _ = slices.BinarySearchFunc(held[:i], seq+1, func(e wsframe.Dispatch, seq int64) int { return cmp.Compare(e.Seq, seq) })
	}
	return append(dst, held[i:]...), true
}

// maxScanned is the most dispatches AppendAfter looks at from the end before it searches.
const maxScanned = 64

// maxReused is the most dispatches whose array Reusable keeps.
const maxReused = 64

// Reusable returns list, a copy of dispatches (AppendAfter's), to be appended to again in its
// place; nil when it is a catch-up's, too large to keep.
func Reusable(list []wsframe.Dispatch) []wsframe.Dispatch {
	if cap(list) > maxReused {
		return nil
	}
	return list
}
