// Package ring provides a lock-free single-producer single-consumer ring of int16 samples, the
// hand-over between an audio device's data callback and the engine.
//
// One goroutine or thread writes and one reads; each side may be the device callback. Write and
// Read use atomics only: they never allocate, lock or block, so the device callback may call them.
// The side that runs in the engine waits with WaitData or WaitSpace, which the other side wakes
// without blocking (see Ring.WaitData).
package ring

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// cacheLine pads the producer's and the consumer's fields apart so that they do not share a cache
// line.
const cacheLine = 64

// state is the part of a Ring that both sides touch. Its layout is fixed (64-bit fields at fixed
// offsets, no Go pointers) so that C code may play one side of the ring through Shared: audio/device
// declares the same struct in C (sdkpp_ring_state) and its tests check that the two agree.
type state struct {
	// w is the count of samples ever written; only the producer stores it.
	w atomic.Uint64
	_ [cacheLine - 8]byte
	// r is the count of samples ever read; only the consumer stores it.
	r atomic.Uint64
	_ [cacheLine - 8]byte

	overruns        atomic.Uint64
	overrunSamples  atomic.Uint64
	underruns       atomic.Uint64
	underrunSamples atomic.Uint64

	// The consumer waiting for samples and the producer waiting for room (see waker).
	dataNeed     atomic.Uint64
	spaceNeed    atomic.Uint64
	dataWaiting  atomic.Uint32
	spaceWaiting atomic.Uint32
}

// Ring is a single-producer single-consumer ring of int16 samples with a power-of-two capacity.
// Exactly one goroutine (or C thread) may call Write and WaitSpace, and exactly one may call Read
// and WaitData; Len, Cap and Stats may be called from anywhere. The zero Ring is not usable; make
// one with New.
type Ring struct {
	st   *state // its own allocation: C may hold it, and it holds no Go pointers
	buf  []int16
	mask uint64

	data  waker // the producer wakes a consumer waiting for samples
	space waker // the consumer wakes a producer waiting for room
}

// New returns an empty ring that holds at least capacity samples; the capacity is rounded up to a
// power of two (at least 2).
func New(capacity int) *Ring {
	if capacity < 2 {
		capacity = 2
	}
	size := uint64(1) << bits.Len64(uint64(capacity-1))
	r := &Ring{
		st:   new(state),
		buf:  make([]int16, size),
		mask: size - 1,
	}
	r.data = waker{waiting: &r.st.dataWaiting, need: &r.st.dataNeed, ch: make(chan struct{}, 1)}
	r.space = waker{waiting: &r.st.spaceWaiting, need: &r.st.spaceNeed, ch: make(chan struct{}, 1)}
	return r
}

// Shared pins the ring's state and buffer with p and returns their addresses, for C code that
// plays one side of the ring (audio/device's data callbacks). The C side follows the same
// protocol as Write or Read on the state's layout, and instead of sending on the ring's channel
// when it wakes the Go side (it cannot), it claims the wake-up (clears the waiting flag) and lets
// some goroutine call WakeData or WakeSpace. The addresses stay valid while p pins them.
func (r *Ring) Shared(p *runtime.Pinner) (st, buf unsafe.Pointer) {
	p.Pin(r.st)
	p.Pin(&r.buf[0])
	return unsafe.Pointer(r.st), unsafe.Pointer(&r.buf[0])
}

// WakeData delivers a wake-up a C producer claimed to the consumer's WaitData or DataSignal. It
// never blocks.
func (r *Ring) WakeData() { r.data.deliver() }

// WakeSpace delivers a wake-up a C consumer claimed to the producer's WaitSpace or SpaceSignal.
// It never blocks.
func (r *Ring) WakeSpace() { r.space.deliver() }

// Cap returns the number of samples the ring holds when full.
func (r *Ring) Cap() int { return len(r.buf) }

// Len returns the number of samples ready to read. Seen from the consumer it can only grow until
// the consumer reads; seen from the producer it can only shrink until the producer writes.
func (r *Ring) Len() int { return int(r.st.w.Load() - r.st.r.Load()) }

// Free returns the number of samples that can be written without an overrun.
func (r *Ring) Free() int { return len(r.buf) - r.Len() }

// Write copies as many samples of p as fit into the ring and returns their number. Samples that do
// not fit are dropped and counted as an overrun. It wakes a consumer waiting in WaitData. Only the
// producer may call it; it never blocks or allocates.
func (r *Ring) Write(p []int16) int {
	w := r.st.w.Load()
	free := uint64(len(r.buf)) - (w - r.st.r.Load())
	n := uint64(len(p))
	if n > free {
		r.st.overruns.Add(1)
		r.st.overrunSamples.Add(n - free)
		n = free
	}
	if n > 0 {
		start := w & r.mask
		done := copy(r.buf[start:], p[:n])
		copy(r.buf, p[done:n])
		r.st.w.Store(w + n)
	}
	r.data.wakeAt(w + n - r.st.r.Load())
	return int(n)
}

// Read copies up to len(p) samples from the ring into p and returns their number. A Read that
// finds fewer samples than len(p) counts as an underrun (the rest of p is left as it was). It wakes
// a producer waiting in WaitSpace. Only the consumer may call it; it never blocks or allocates.
func (r *Ring) Read(p []int16) int {
	rd := r.st.r.Load()
	avail := r.st.w.Load() - rd
	n := uint64(len(p))
	if n > avail {
		r.st.underruns.Add(1)
		r.st.underrunSamples.Add(n - avail)
		n = avail
	}
	if n > 0 {
		start := rd & r.mask
		done := copy(p[:n], r.buf[start:])
		copy(p[done:n], r.buf)
		r.st.r.Store(rd + n)
	}
	r.space.wake()
	return int(n)
}

// Discard drops up to n samples from the front of the ring without copying them and returns how
// many it dropped. Only the consumer may call it; it does not count as an underrun.
func (r *Ring) Discard(n int) int {
	rd := r.st.r.Load()
	avail := r.st.w.Load() - rd
	k := uint64(max(n, 0))
	k = min(k, avail)
	r.st.r.Store(rd + k)
	r.space.wake()
	return int(k)
}

// WaitData blocks the consumer until at least n samples are ready (n is capped at Cap) or done is
// closed, and reports whether the samples are there. The producer's Write wakes it without
// blocking: Write sends on a one-slot channel only when a waiter has announced itself, and never
// waits for the send (a full slot means a wake-up is already pending).
func (r *Ring) WaitData(n int, done <-chan struct{}) bool {
	n = min(n, len(r.buf))
	return r.data.wait(func() bool { return r.Len() >= n }, done)
}

// WaitSpace blocks the producer until at least n samples can be written (n is capped at Cap) or
// done is closed, and reports whether the room is there. The consumer's Read wakes it the way
// Write wakes WaitData.
func (r *Ring) WaitSpace(n int, done <-chan struct{}) bool {
	n = min(n, len(r.buf))
	return r.space.wait(func() bool { return r.Free() >= n }, done)
}

// DataSignal arms the ring for a consumer that waits for samples and for other events at once:
// the returned channel receives at the producer's next Write. Check Len after arming and select
// on the channel only if it is still short, as WaitData does; a stale signal costs one more check.
func (r *Ring) DataSignal() <-chan struct{} { return r.data.arm() }

// DataSignalAt is DataSignal for a consumer that needs n samples at once (n is capped at Cap):
// the producer's Writes wake it only once the ring holds at least n samples, so a consumer that
// has nothing to do with fewer sleeps through the device periods in between.
func (r *Ring) DataSignalAt(n int) <-chan struct{} {
	return r.data.armAt(uint64(max(min(n, len(r.buf)), 0)))
}

// SpaceSignal is DataSignal for a producer: the returned channel receives at the consumer's next
// Read or Discard.
func (r *Ring) SpaceSignal() <-chan struct{} { return r.space.arm() }

// Stats counts the ring's overruns (writes that did not fit) and underruns (reads that found too
// few samples), as events and as samples lost or missing.
type Stats struct {
	// Overruns is the number of Write calls that dropped samples.
	Overruns uint64
	// OverrunSamples is the number of samples those writes dropped.
	OverrunSamples uint64
	// Underruns is the number of Read calls that found fewer samples than asked for.
	Underruns uint64
	// UnderrunSamples is the number of samples those reads were short.
	UnderrunSamples uint64
}

// Stats returns the ring's counters so far. It may be called from any goroutine.
func (r *Ring) Stats() Stats {
	return Stats{
		Overruns:        r.st.overruns.Load(),
		OverrunSamples:  r.st.overrunSamples.Load(),
		Underruns:       r.st.underruns.Load(),
		UnderrunSamples: r.st.underrunSamples.Load(),
	}
}

// waker lets one goroutine sleep until another side, possibly an audio callback, wakes it. The
// waking side only loads an atomic flag when nobody waits; when somebody does, it claims the
// wake-up by clearing the flag and makes a non-blocking send on a one-slot channel (a full slot
// means a wake-up is already pending). Its flag and fill live in the ring's state, where a C side
// can claim wake-ups too.
type waker struct {
	waiting *atomic.Uint32 // 1 while somebody waits
	need    *atomic.Uint64 // the fill the waiter waits for (wakeAt); 0: any
	ch      chan struct{}
}

// wake wakes the waiter, if any. It never blocks or allocates.
func (k *waker) wake() {
	if k.waiting.Load() == 0 || !k.waiting.CompareAndSwap(1, 0) {
		return
	}
	k.deliver()
}

// deliver sends a claimed wake-up. It never blocks or allocates.
func (k *waker) deliver() {
	select {
	case k.ch <- struct{}{}:
	default:
	}
}

// wakeAt wakes the waiter, if any, once fill reaches what it waits for. It never blocks or
// allocates.
func (k *waker) wakeAt(fill uint64) {
	if fill < k.need.Load() {
		return
	}
	k.wake()
}

// arm announces a waiter and returns the channel its wake-up comes on.
func (k *waker) arm() <-chan struct{} { return k.armAt(0) }

// armAt announces a waiter that needs a fill of n and returns the channel its wake-up comes on.
func (k *waker) armAt(n uint64) <-chan struct{} {
	k.need.Store(n)
	k.waiting.Store(1)
	return k.ch
}

// wait returns true as soon as ready does, or false once done is closed. The waiter announces
// itself before checking ready again, so a wake that races with the check is never lost: either
// the check sees the other side's progress or the other side sees the announcement. A stale
// wake-up only costs one more check.
func (k *waker) wait(ready func() bool, done <-chan struct{}) bool {
	for {
		if ready() {
			return true
		}
		k.need.Store(0) // ready decides; any write may be the one
		k.waiting.Store(1)
		if ready() {
			k.waiting.Store(0)
			return true
		}
		select {
		case <-k.ch:
		case <-done:
			k.waiting.Store(0)
			return ready()
		}
	}
}
