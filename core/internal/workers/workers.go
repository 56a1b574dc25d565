// Package workers runs a Client's operations on goroutines it keeps for the next one.
//
// A new goroutine starts on the smallest stack, and an operation (a request encoded and written
// to the gateway connection) grows it several times before its first write, copying it each
// time. A Pool hands an operation to one of its idle workers when one waits, else to a new one,
// and keeps up to MaxIdle workers waiting, each with the stack its goroutine has grown.
package workers

import (
	"context"
	"sync"
	"sync/atomic"
)

// MaxIdle is how many workers wait for operations between them.
const MaxIdle = 4

// Pool runs operations under one context: once it is cancelled, the idle workers end, and Wait
// returns when every worker has.
type Pool struct {
	ctx      context.Context
	panicked func(v any)
	jobs     chan func(ctx context.Context)
	idle     atomic.Int32
	wg       sync.WaitGroup
}

// New returns a pool whose operations run with ctx; panicked is told of an operation's panic
// (its worker goes on).
func New(ctx context.Context, panicked func(v any)) *Pool {
	return &Pool{ctx: ctx, panicked: panicked, jobs: make(chan func(ctx context.Context))}
}

// Go runs fn on an idle worker, or on a new one when none waits. The caller makes sure that no
// Go comes after Wait has begun.
func (p *Pool) Go(fn func(ctx context.Context)) {
	select {
	case p.jobs <- fn: // an idle worker took it
		return
	default:
	}
	p.wg.Add(1)
	go p.work(fn)
}

// Idle returns how many workers wait for an operation.
func (p *Pool) Idle() int32 { return p.idle.Load() }

// Wait waits until every worker has ended: the running ones after their operation, the idle ones
// once the pool's context is cancelled.
func (p *Pool) Wait() { p.wg.Wait() }

// work runs fn, then the operations handed to it while it waits among the idle workers, until
// there are enough of those or the context is cancelled.
func (p *Pool) work(fn func(ctx context.Context)) {
	defer p.wg.Done()
	for {
		p.run(fn)
		if p.idle.Add(1) > MaxIdle {
			p.idle.Add(-1)
			return
		}
		select {
		case fn = <-p.jobs:
			p.idle.Add(-1)
		case <-p.ctx.Done():
			p.idle.Add(-1)
			return
		}
	}
}

// run runs one operation, telling panicked of a panic in it.
func (p *Pool) run(fn func(ctx context.Context)) {
	defer func() {
		if v := recover(); v != nil {
			p.panicked(v)
		}
	}()
	fn(p.ctx)
}
