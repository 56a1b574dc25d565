// Package snowflake makes the service's ids: 64-bit snowflakes in the platform's layout, serialized
// as decimal strings on the wire: milliseconds since the platform epoch in the top 42 bits, then
// 10 bits of node (the platform's 5 worker and 5 process bits), then a 12-bit increment. Nodes
// with different node ids never make the same id.
package snowflake

import (
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// Epoch is the first millisecond of 2015, the platform's snowflake epoch.
const Epoch = 1420070400000

// Bit layout below the timestamp.
const (
	NodeBits      = 10
	IncrementBits = 12
	// MaxNode is the largest node id.
	MaxNode = 1<<NodeBits - 1

	maxIncrement = 1<<IncrementBits - 1
	timeShift    = NodeBits + IncrementBits
)

// Generator hands out strictly increasing ids carrying its node id. It never repeats an id,
// even when the clock stands still or goes back: it then counts on from the last id it made.
type Generator struct {
	mu    sync.Mutex
	clock clock.Clock
	node  uint64
	last  uint64 // the last id handed out, or the floor
}

// New returns a generator of node 0 that never returns an id at or below floor (the largest id
// already stored, so that ids stay unique across a restart).
func New(c clock.Clock, floor uint64) *Generator { return NewNode(c, floor, 0) }

// NewNode returns a generator of node (0 to MaxNode; higher bits are dropped) that never returns
// an id at or below floor.
func NewNode(c clock.Clock, floor uint64, node int) *Generator {
	return &Generator{clock: c, node: uint64(node) & MaxNode, last: floor}
}

// Next returns a new id.
func (g *Generator) Next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := g.clock.Now().UnixMilli() - Epoch
	if ms < 0 {
		ms = 0
	}
	id := uint64(ms)<<timeShift | g.node<<IncrementBits
	if id <= g.last {
		// The clock stands still or went back, or the floor is ahead: go on from the last id,
		// in its millisecond when this node's bits and the increment leave room above it.
		lastMs, lastNode, lastInc := g.last>>timeShift, g.last>>IncrementBits&MaxNode, g.last&maxIncrement
		switch {
		case lastNode == g.node && lastInc < maxIncrement:
			id = g.last + 1
		case lastNode < g.node:
			id = lastMs<<timeShift | g.node<<IncrementBits
		default:
			id = (lastMs+1)<<timeShift | g.node<<IncrementBits
		}
	}
	g.last = id
	return id
}

// NextAbove returns the next id, above floor as well as above every id the generator made: ids
// made under a cluster-wide lock that carries the largest id used (store.DB.OrderLock) then
// increase across nodes.
func (g *Generator) NextAbove(floor uint64) uint64 {
	g.mu.Lock()
	if floor > g.last {
		g.last = floor
	}
	g.mu.Unlock()
	return g.Next()
}

// Node returns the node id in id.
func Node(id uint64) int { return int(id >> IncrementBits & MaxNode) }

// Time returns the creation time encoded in id.
func Time(id uint64) time.Time { return time.UnixMilli(int64(id>>timeShift) + Epoch).UTC() }

// At returns the smallest id of the millisecond of t (0 before the epoch): ids made before t are
// below it, and so are ids made in that millisecond before the one a clock standing still there
// counts on from.
func At(t time.Time) uint64 {
	ms := t.UnixMilli() - Epoch
	if ms < 0 {
		return 0
	}
	return uint64(ms) << timeShift
}
