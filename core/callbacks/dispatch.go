// Package callbacks is the callback queue of sdkpp: goroutines queue results and events, and Run
// executes them on whichever thread calls it (the game's thread, once per frame).
//
// Every callback belongs to a Scope (a Client, or one registered handler of it). Closing a scope
// stops its queued events, resolves its pending one-shot callbacks through their cancel function
// (so each one-shot runs exactly once), and releases the handler's resources once no Run can still
// be calling it. A Slot holds one replaceable handler of the game with its scope.
package callbacks

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Queue holds callbacks until Run. The zero Queue is not usable; use New.
type Queue struct {
	runMu sync.Mutex // held by the one Run in progress

	mu       sync.Mutex
	items    []item
	running  bool     // a Run is invoking callbacks
	deferred []func() // releases asked for while running, done when Run ends
	size     atomic.Int64
	wake     chan struct{} // closed by the next push, for the threads in Wait; nil when none waits
	woke     atomic.Bool   // a push closed wake since the last Yield
	holds    int           // HoldWakes not yet released
	held     bool          // an item was queued while holds > 0: the next ReleaseWakes wakes

	// OnPanic, if set, receives the value of a callback that panicked; Run then goes on with the
	// next item. Set it before the first Run.
	OnPanic func(v any)

	// OnPush, if set, runs after each item is queued, on the queuing thread, outside the queue's
	// lock: for waiters that wait elsewhere than in Wait. Items queued while wakes are held
	// (HoldWakes) run it once, in ReleaseWakes. Set it before the first item is queued.
	OnPush func()
}

type item struct {
	scope   *Scope
	fn      func()
	once    *Once // set for one-shot items
	release func()
}

// New returns an empty queue.
func New() *Queue { return &Queue{} }

// Len returns the number of queued items.
func (q *Queue) Len() int { return int(q.size.Load()) }

func (q *Queue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.size.Add(1)
	hold := q.holds > 0
	if hold {
		q.held = true
	} else {
		q.wakeLocked()
	}
	q.mu.Unlock()
	if !hold && q.OnPush != nil {
		q.OnPush()
	}
}

// wakeLocked wakes the threads waiting in Wait; q.mu is held.
func (q *Queue) wakeLocked() {
	if q.wake != nil {
		close(q.wake)
		q.wake = nil
		q.woke.Store(true)
	}
}

// HoldWakes makes the items queued from now until ReleaseWakes leave the threads waiting in Wait
// asleep (and OnPush uncalled) until then: a goroutine that queues, one by one, the callbacks of
// what arrived together (the gateway's reader, dispatching the frames of one socket read) wakes
// the game's thread once for all of them instead of once for each, which then ran a Run for one
// item and waited again while the next was being queued. Items are queued and visible at once:
// a thread that calls Wait or Run meanwhile finds them; only the threads already asleep in Wait
// (or outside Go, OnPush) are woken later, when the holder has queued the rest. Call
// ReleaseWakes soon, before anything that may block. Holds may overlap (several goroutines
// may hold); each ReleaseWakes wakes for what was queued before it.
func (q *Queue) HoldWakes() {
	q.mu.Lock()
	q.holds++
	q.mu.Unlock()
}

// ReleaseWakes ends a HoldWakes: if items were queued while wakes were held, it wakes the threads
// waiting in Wait and calls OnPush, once.
func (q *Queue) ReleaseWakes() {
	q.mu.Lock()
	if q.holds > 0 {
		q.holds--
	}
	wake := q.held
	if wake {
		q.held = false
		q.wakeLocked()
	}
	q.mu.Unlock()
	if wake && q.OnPush != nil {
		q.OnPush()
	}
}

// Yield lets a goroutine that a push since the last Yield woke from Wait run now, ahead of the
// rest of the caller's work, and reports whether there was one. A goroutine that queues callbacks
// and goes on (the gateway's reader, which reads on until the socket is empty) would otherwise
// keep the processor the woken goroutine was readied on for a few microseconds, and the game's
// thread waiting in Wait would see its callback that much later. Call it only from a goroutine
// not locked to its thread (a locked one would hand its thread over to yield).
func (q *Queue) Yield() bool {
	if !q.woke.Load() || !q.woke.Swap(false) {
		return false
	}
	runtime.Gosched()
	return true
}

// Wait blocks the calling thread until an item is queued or timeout passes, and reports whether
// items are queued. It returns at once when some already are; it runs nothing. Any number of
// threads may wait; one push wakes them all. It can report false before timeout when another
// thread's Run or Reset took the items meanwhile.
func (q *Queue) Wait(timeout time.Duration) bool {
	if q.size.Load() > 0 {
		return true
	}
	if timeout <= 0 {
		return false
	}
	q.mu.Lock()
	if len(q.items) > 0 {
		q.mu.Unlock()
		return true
	}
	if q.wake == nil {
		q.wake = make(chan struct{})
	}
	wake := q.wake
	q.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	}
	return q.size.Load() > 0
}

// Run invokes the items queued before it started, in order, on the calling thread, and returns how
// many it took. Items queued while it runs wait for the next Run. A Run called while another is in
// progress (from a callback, or from a second thread) returns 0 at once.
func (q *Queue) Run() int {
	if q.size.Load() == 0 {
		return 0
	}
	if !q.runMu.TryLock() {
		return 0
	}
	defer q.runMu.Unlock()

	q.mu.Lock()
	items := q.items
	q.items = nil
	q.size.Add(-int64(len(items)))
	q.running = true
	q.mu.Unlock()

	defer q.finish()
	for i := range items {
		it := &items[i]
		q.invoke(it)
		*it = item{} // let the GC have what the callback held
	}
	return len(items)
}

// finish ends a Run: it clears the running flag and performs releases that waited for it.
func (q *Queue) finish() {
	q.mu.Lock()
	q.running = false
	deferred := q.deferred
	q.deferred = nil
	q.mu.Unlock()
	for _, f := range deferred {
		f()
	}
}

// invoke runs one item; a panic in it is reported and does not stop the Run.
func (q *Queue) invoke(it *item) {
	defer func() {
		if v := recover(); v != nil {
			if q.OnPanic == nil {
				panic(v)
			}
			q.OnPanic(v)
		}
	}()
	it.invoke()
}

func (it *item) invoke() {
	if it.once != nil {
		it.once.run(it.fn)
		return
	}
	if it.scope != nil && it.scope.Closed() {
		return
	}
	it.fn()
}

// Reset discards every queued item without invoking it. Pending one-shots are released (their
// resources freed) but never called.
func (q *Queue) Reset() {
	q.mu.Lock()
	items := q.items
	q.items = nil
	q.size.Add(-int64(len(items)))
	q.mu.Unlock()
	for _, it := range items {
		if it.once != nil {
			it.once.discard()
		}
	}
}

// release runs f now, or at the end of the Run in progress so that f cannot free what a running
// callback still uses.
func (q *Queue) release(f func()) {
	if f == nil {
		return
	}
	q.mu.Lock()
	if q.running {
		q.deferred = append(q.deferred, f)
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	f()
}

// Scope is the lifetime that queued callbacks belong to.
type Scope struct {
	q       *Queue
	release func()

	mu       sync.Mutex
	closed   bool
	children map[*Scope]struct{}
	onces    map[*Once]struct{}
	parent   *Scope
}

// NewScope returns an open top-level scope; release runs once after Close, when no Run can be
// invoking the scope's callbacks.
func (q *Queue) NewScope(release func()) *Scope {
	return &Scope{q: q, release: release}
}

// NewScope returns a child scope, closed when s closes. If s is already closed the child is
// returned closed and its release has run.
func (s *Scope) NewScope(release func()) *Scope {
	c := &Scope{q: s.q, release: release, parent: s}
	if !track(s, &s.children, c) {
		c.Close()
	}
	return c
}

// track adds v to *set unless s is closed, and reports whether it did.
func track[T comparable](s *Scope, set *map[T]struct{}, v T) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if *set == nil {
		*set = map[T]struct{}{}
	}
	(*set)[v] = struct{}{}
	return true
}

// Closed reports whether Close was called.
func (s *Scope) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Post queues fn; it runs in a later Run unless s is closed by then. It returns false if s is
// already closed.
func (s *Scope) Post(fn func()) bool {
	if s.Closed() {
		return false
	}
	s.q.push(item{scope: s, fn: fn})
	return true
}

// Close closes s and its children. Pending one-shots are queued with their cancel function.
// It is safe to call more than once and from any thread, including from a callback.
func (s *Scope) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	children := s.children
	onces := s.onces
	s.children, s.onces = nil, nil
	parent := s.parent
	s.mu.Unlock()

	if parent != nil {
		parent.mu.Lock()
		delete(parent.children, s)
		parent.mu.Unlock()
	}
	for c := range children {
		c.Close()
	}
	for o := range onces {
		o.cancelNow()
	}
	s.q.release(s.release)
}

// Once is a one-shot callback: exactly one of the function given to Fire and the cancel function
// runs, inside Run, and then release.
type Once struct {
	scope   *Scope
	cancel  func()
	release func()

	mu     sync.Mutex
	queued bool // fire or cancel was queued
	done   bool // ran or was discarded
}

// Once registers a one-shot callback in s. If s is already closed, cancel is queued at once.
func (s *Scope) Once(cancel, release func()) *Once {
	o := &Once{scope: s, cancel: cancel, release: release}
	if !track(s, &s.onces, o) {
		o.cancelNow()
	}
	return o
}

// Fire queues fn as the result; it reports false if the one-shot was already fired or cancelled.
// If the scope closes before fn runs, cancel runs instead.
func (o *Once) Fire(fn func()) bool {
	o.mu.Lock()
	if o.queued {
		o.mu.Unlock()
		return false
	}
	o.queued = true
	o.mu.Unlock()
	o.scope.q.push(item{scope: o.scope, fn: fn, once: o})
	return true
}

func (o *Once) cancelNow() {
	o.mu.Lock()
	if o.queued {
		o.mu.Unlock()
		return // the queued fire item will see the closed scope and cancel
	}
	o.queued = true
	o.mu.Unlock()
	o.scope.q.push(item{scope: o.scope, fn: o.cancel, once: o})
}

// run invokes fn, or cancel when the scope closed after fn was queued, then release.
func (o *Once) run(fn func()) {
	if !o.finish() {
		return
	}
	if o.scope.Closed() {
		fn = o.cancel
	}
	defer func() {
		if o.release != nil {
			o.release()
		}
	}()
	if fn != nil {
		fn()
	}
}

// discard releases the one-shot without calling it (Reset).
func (o *Once) discard() {
	if o.finish() && o.release != nil {
		o.release()
	}
}

// finish marks the one-shot done and removes it from its scope; false if it already was.
func (o *Once) finish() bool {
	o.mu.Lock()
	if o.done {
		o.mu.Unlock()
		return false
	}
	o.done = true
	o.mu.Unlock()
	s := o.scope
	s.mu.Lock()
	delete(s.onces, o)
	s.mu.Unlock()
	return true
}

// Batch holds the queue's wakes for one goroutine that queues in batches, such as a gateway
// reader: Begin before queuing each item of a batch, End when the batch is queued. Its methods
// are for that one goroutine; the zero Batch is unusable (Queue.Batch).
type Batch struct {
	q       *Queue
	holding bool
}

// Batch returns a Batch of q.
func (q *Queue) Batch() *Batch { return &Batch{q: q} }

// Begin holds the queue's wakes (HoldWakes) unless the batch holds them already.
func (b *Batch) Begin() {
	if !b.holding {
		b.holding = true
		b.q.HoldWakes()
	}
}

// End releases the batch's hold, which wakes the threads waiting for its items, and lets the
// goroutine woken run first (Yield). It does nothing when the batch holds nothing.
func (b *Batch) End() {
	if !b.holding {
		return
	}
	b.holding = false
	b.q.ReleaseWakes()
	b.q.Yield()
}
