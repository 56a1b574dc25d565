// Package sharedread shares reads of a value among the goroutines that want it at the same time,
// each getting a value read after it asked.
package sharedread

import (
	"context"
	"sync"
)

// Reader shares the reads of one value: a caller that finds no read running starts one; a caller
// that finds one running (which may have begun before it asked, and so may miss a change it must
// see) waits for the next read, which begins once the running one ends and serves every caller
// that waited for it. However many callers come at once, at most two reads run back to back, and
// every caller gets a value read after it called, as if it had read the value itself.
//
// On PostgreSQL, the lobby service reads the database's cache epoch before each message: eight
// messages sent at once made eight queries, where two do. The zero Reader is ready for use.
type Reader[T any] struct {
	mu   sync.Mutex
	cur  *call[T] // the read running; nil when none is
	next *call[T] // the read that callers arriving now wait for; nil when none waits
}

// call is one read and its result, set before done is closed.
type call[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// Read returns a value that read returned after Read was called: from a read of its own, or of a
// caller that asked at the same time. read runs with ctx without its cancellation, as other
// callers may wait for its result.
func (r *Reader[T]) Read(ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	r.mu.Lock()
	for {
		if r.cur == nil { // none runs: run the read the waiters wait for, if any, or one's own
			c := r.next
			if c == nil {
				c = &call[T]{done: make(chan struct{})}
			}
			r.next, r.cur = nil, c
			r.mu.Unlock()
			c.v, c.err = read(context.WithoutCancel(ctx))
			r.mu.Lock()
			r.cur = nil
			close(c.done)
			r.mu.Unlock()
			return c.v, c.err
		}
		if r.next == nil {
			r.next = &call[T]{done: make(chan struct{})}
		}
		c, running := r.next, r.cur
		r.mu.Unlock()
		select {
		case <-c.done:
			return c.v, c.err
		case <-running.done: // c can begin: this caller begins it, unless another waiter did
		}
		r.mu.Lock()
		if r.cur == c {
			r.mu.Unlock()
			<-c.done
			return c.v, c.err
		}
		// c has not begun (r.cur is nil and r.next is c), or has ended (c.done is closed) and
		// another read may run: the loop runs c, or this returns its result.
		select {
		case <-c.done:
			r.mu.Unlock()
			return c.v, c.err
		default:
		}
	}
}
