// Package snowflake makes the service's ids: 64-bit snowflakes (milliseconds since the platform
// epoch in the top 42 bits, then a worker and a sequence), serialized as decimal strings on the
// wire.
package snowflake

import (
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// Epoch is the first millisecond of 2015, the platform's snowflake epoch.
const Epoch = 1420070400000

// Generator hands out strictly increasing ids. It never repeats an id, even when the clock stands
// still or goes back: it then counts on from the last id it made.
type Generator struct {
	mu    sync.Mutex
	clock clock.Clock
	last  uint64 // the last id handed out
}

// New returns a generator that never returns an id at or below floor (the largest id already
// stored, so that ids stay unique across a restart).
func New(c clock.Clock, floor uint64) *Generator { return &Generator{clock: c, last: floor} }

// Next returns a new id.
func (g *Generator) Next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := g.clock.Now().UnixMilli() - Epoch
	if ms < 0 {
		ms = 0
	}
	id := uint64(ms) << 22
	if id <= g.last {
		id = g.last + 1
	}
	g.last = id
	return id
}

// Time returns the creation time encoded in id.
func Time(id uint64) time.Time { return time.UnixMilli(int64(id>>22) + Epoch).UTC() }

// At returns the smallest id of the millisecond of t (0 before the epoch): ids made before t are
// below it, and so are ids made in that millisecond before the one a clock standing still there
// counts on from.
func At(t time.Time) uint64 {
	ms := t.UnixMilli() - Epoch
	if ms < 0 {
		return 0
	}
	return uint64(ms) << 22
}
