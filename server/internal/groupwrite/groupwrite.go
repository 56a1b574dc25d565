// Package groupwrite joins the writes that callers make at the same moment into groups, each
// written by one call of a flush function (a group commit): one statement, round trip and commit
// for the whole group instead of one of each per write.
//
// No goroutine of its own: the first caller flushes at once, alone when it is alone, so a write
// that meets no other pays no wait. The callers who come while a group is being flushed wait,
// and together form the next group, which the first of them flushes once the previous one is
// done: the busier the writes, the larger the groups. Before it takes its group, the flusher
// may let the goroutines that are ready to run go first (Options.Yields), so that those about to
// write join it, and, when more callers wrote at once a moment ago than are waiting now, may wait
// a bounded moment for them to come back (Options.Gather, the only timer). Every caller returns
// only once the flush that holds its write has returned, so an answer that follows a write is
// never sent before the write is stored.
package groupwrite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// ErrClosed is what Write returns once the Writer is closed.
var ErrClosed = errors.New("groupwrite: closed")

// Flush writes a group of items, in the order their callers came. It may set errs[i] (errs is
// as long as items) for an item that failed alone; a non-nil return fails every item of the
// group with that error, and must then leave none of them written. Its context is the first
// caller's, without its cancellation (the group is several callers').
type Flush[T any] func(ctx context.Context, items []T, errs []error) error

// Writer groups the writes of its callers; see the package documentation. Its zero value is
// not usable: make one with New.
type Writer[T any] struct {
	flush Flush[T]
	opts  Options

	// waiters are the callers' waiters, each with its channel, used again: a caller's wake
	// channel is empty again when its Write returns (it is sent on at most once, and received).
	waiters sync.Pool

	mu      sync.Mutex
	pending []*waiter[T] // callers waiting for the next group, the first of them its flusher
	running bool         // a group is being flushed
	closed  bool
	drained chan struct{} // made by Close while a group runs, closed when the last one ends

	// crowd is how many callers the last flush served or saw come while it ran: about as many
	// as are writing in turn, each coming back with its next write after its answer.
	crowd int
	// gathered is closed when pending reaches gather while a flusher gathers its group; nil
	// when none does.
	gathered chan struct{}
	gather   int
	// timer times the gathering waits, one at a time (the flusher's): made by the first, then
	// reset by each, not made anew.
	timer *time.Timer
}

// waiter is one caller's write.
type waiter[T any] struct {
	item T
	err  error
	// wake says true once the item is flushed (err set), false when its caller is to flush the
	// next group, which it heads.
	wake chan bool
}

// Options tune a Writer.
type Options struct {
	// Max bounds how many items a group holds; less than 1 is 1.
	Max int
	// Yields is how many times the flusher of a group lets the goroutines that are ready to run
	// go first (runtime.Gosched) before it takes its group, unless the group is full. On a busy
	// process, the callers about to write are often ready but not running (every processor is
	// busy): they then join this group instead of forming the next, and the per-flush cost (a
	// commit, a statement, a round trip) is shared by more writes. When none is ready, a yield
	// returns at once, so a lone write is not held.
	Yields int
	// Gather, when positive, is how long at most the flusher of a group waits while fewer
	// callers are pending than the crowd the last flush saw (those it served and those who came
	// while it ran, at most Max). It ends as soon as that many are pending, and the flush
	// begins. Without it, callers who write in turn (each after its last write's answer, like
	// the requests of a client's connections) split into two groups that take turns, each
	// flushed while the other's callers are away, say 7 and 1 for 8 callers: the lone one pays
	// a whole flush. With it, they join in one group, and each flush serves all of them. A
	// wait runs out only when the crowd has shrunk (a caller stopped writing), once: the flush
	// then sets the crowd anew.
	Gather time.Duration
}

// New returns a Writer that flushes its groups with flush.
func New[T any](opts Options, flush Flush[T]) *Writer[T] {
	opts.Max = max(1, opts.Max)
	return &Writer[T]{flush: flush, opts: opts}
}

// Write writes item in a group and returns once that group is flushed: with the item's own
// error, the group's, or ErrClosed when the Writer was closed before item came.
func (w *Writer[T]) Write(ctx context.Context, item T) error {
	me, _ := w.waiters.Get().(*waiter[T])
	if me == nil {
		me = &waiter[T]{wake: make(chan bool, 1)}
	}
	me.item = item
	defer w.release(me)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.pending = append(w.pending, me)
	if w.gathered != nil && len(w.pending) >= w.gather {
		close(w.gathered)
		w.gathered = nil
	}
	if w.running {
		w.mu.Unlock()
		if <-me.wake {
			return me.err
		}
		w.mu.Lock() // this caller flushes the next group: it is pending's first
	}
	w.running = true
	for range w.opts.Yields {
		if len(w.pending) >= w.opts.Max {
			break
		}
		w.mu.Unlock()
		runtime.Gosched()
		w.mu.Lock()
	}
	if want := min(w.crowd, w.opts.Max); w.opts.Gather > 0 && len(w.pending) < want {
		w.waitFor(want)
	}
	n := min(len(w.pending), w.opts.Max)
	group := w.pending[:n:n]
	w.pending = w.pending[n:]
	w.mu.Unlock()

	defer w.handOn(n)
	w.run(context.WithoutCancel(ctx), group)
	for _, o := range group[1:] {
		o.wake <- true
	}
	return me.err
}

// release puts me back for another Write, once its caller has its outcome and nothing else
// refers to it: its flusher wakes it last thing (run, Write), and pending no longer holds it.
// A Write that panics does not come here with a waiter whose channel may still be sent on.
func (w *Writer[T]) release(me *waiter[T]) {
	var zero T
	me.item, me.err = zero, nil
	w.waiters.Put(me)
}

// waitFor waits, with w.mu held (it releases it meanwhile), until n callers are pending, Gather
// has passed or the Writer is closed.
func (w *Writer[T]) waitFor(n int) {
	gathered := make(chan struct{})
	w.gathered, w.gather = gathered, n
	if w.timer == nil {
		w.timer = time.NewTimer(w.opts.Gather)
	} else {
		w.timer.Reset(w.opts.Gather) // stopped by the last wait: nothing stale in its channel
	}
	t := w.timer
	w.mu.Unlock()
	select {
	case <-gathered:
	case <-t.C:
	}
	t.Stop()
	w.mu.Lock()
	if w.gathered == gathered {
		w.gathered = nil
	}
}

// run flushes group and gives each of its waiters its outcome. A flush that panics fails the
// whole group, whose other callers return, and the panic goes on up this caller's goroutine.
func (w *Writer[T]) run(ctx context.Context, group []*waiter[T]) {
	items := make([]T, len(group))
	for i, o := range group {
		items[i] = o.item
	}
	errs := make([]error, len(group))
	var err error
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("groupwrite: the flush of a group of %d panicked: %v", len(group), r)
			for _, o := range group {
				o.err = err
			}
			for _, o := range group[1:] {
				o.wake <- true
			}
			panic(r)
		}
	}()
	err = w.flush(ctx, items, errs)
	for i, o := range group {
		if err != nil {
			o.err = fmt.Errorf("groupwrite: a group of %d writes failed: %w", len(group), err)
		} else {
			o.err = errs[i]
		}
	}
}

// handOn wakes the first pending caller to flush the next group, or ends the running, after a
// flush of n callers.
func (w *Writer[T]) handOn(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.crowd = n + len(w.pending)
	if len(w.pending) > 0 {
		w.pending[0].wake <- false
		return
	}
	w.running = false
	if w.drained != nil {
		close(w.drained)
		w.drained = nil
	}
}

// Close refuses further writes and returns once every write accepted before it is flushed and
// its outcome given to its caller.
func (w *Writer[T]) Close() {
	w.mu.Lock()
	w.closed = true
	if w.gathered != nil { // no caller comes any more
		close(w.gathered)
		w.gathered = nil
	}
	if !w.running {
		w.mu.Unlock()
		return
	}
	if w.drained == nil {
		w.drained = make(chan struct{})
	}
	drained := w.drained
	w.mu.Unlock()
	<-drained
}
