// Package lockpark keeps a node's cluster-wide order locks (package order) a moment after their
// last use, so that a node that keeps sending under one lock (a lobby's messages, one group
// after the other) takes it once instead of once per group: taking and releasing it are a round
// trip to the database each. A kept lock is released once it has been idle for Park.Linger, or
// at its next release after it has been held Park.Max in all, so that the other nodes waiting
// for it get their turn.
package lockpark

import (
	"sync"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/order"
)

// Park keeps released locks by key. Make one with New.
type Park struct {
	clock       clock.Clock
	linger, max time.Duration

	mu     sync.Mutex
	held   map[uint64]*kept
	closed bool
	wg     sync.WaitGroup // kept locks not yet handed out again or released
}

// kept is a lock of the park.
type kept struct {
	held  order.Held
	since time.Time // when it was taken
	timer clock.Timer
}

// New returns a park that keeps a lock for linger after its last use, unless it has been held
// for max since it was taken.
func New(c clock.Clock, linger, max time.Duration) *Park {
	return &Park{clock: c, linger: linger, max: max, held: map[uint64]*kept{}}
}

// Take hands out the lock of key the park keeps, with when it was taken, and forgets it; false
// when it keeps none (the caller takes the lock itself).
func (p *Park) Take(key uint64) (held order.Held, since time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.held[key]
	if k == nil {
		return order.Held{}, time.Time{}, false
	}
	delete(p.held, key)
	k.timer.Stop()
	p.wg.Done()
	return k.held, k.since, true
}

// Put keeps held, the lock of key taken at since, for Linger; it is released now when it has
// been held Max already or the park is closed. Call it instead of held.Release.
func (p *Park) Put(key uint64, since time.Time, held order.Held) {
	p.mu.Lock()
	if p.closed || p.clock.Now().Sub(since) >= p.max || p.held[key] != nil {
		p.mu.Unlock()
		held.Release()
		return
	}
	k := &kept{held: held, since: since}
	p.wg.Add(1)
	k.timer = p.clock.AfterFunc(p.linger, func() { // owned by the park: Take stops it, Close waits
		p.mu.Lock()
		if p.held[key] != k {
			p.mu.Unlock()
			return // handed out again, or released by Close
		}
		delete(p.held, key)
		p.mu.Unlock()
		defer p.wg.Done()
		k.held.Release()
	})
	p.held[key] = k
	p.mu.Unlock()
}

// Close releases every lock the park keeps, waits for the releases under way, and releases every
// lock Put gives it from now on at once.
func (p *Park) Close() {
	p.mu.Lock()
	p.closed = true
	held := p.held
	p.held = map[uint64]*kept{}
	p.mu.Unlock()
	for _, k := range held { // a timer that fires meanwhile finds its lock gone
		k.timer.Stop()
		k.held.Release()
		p.wg.Done()
	}
	p.wg.Wait()
}
