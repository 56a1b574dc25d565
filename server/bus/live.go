package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"sdkpp/server/internal/bustrace"
)

// LiveSubject is where the stream republishes each message once it stored it, with the message's
// sequence number and the one of the message stored before it (the headers Nats-Sequence and
// Nats-Last-Sequence). A node reads the stream live there, on a plain subscription: the server
// sends each message once to each node, from the stream's own loop, rather than through a
// consumer per node, which cost each message a wake-up of each consumer's goroutine and a load
// from the store. A plain subscription gets no message twice and keeps the server's order, but
// may miss some (a reconnection, a node too slow to keep up): the sequence number before each tells a node what it missed,
// which it then reads from the stream (a consumer made for the gap) before going on.
const LiveSubject = "sdkpp.live"

// Headers of a republished message (LiveSubject).
const (
	hdrSequence     = "Nats-Sequence"
	hdrLastSequence = "Nats-Last-Sequence"
)

// stallCheck is how often a reader that has read nothing since its last check asks the stream
// whether it holds more (a message missed at the end of a burst has no next one to tell of it).
const stallCheck = time.Second

// reader is one Subscribe: it hands its handler each message of the stream once, in stream
// order, from the live subject, and reads from the stream what it missed there.
type reader struct {
	b      *Bus
	handle Handler
	sub    *nats.Subscription
	kick   chan struct{} // a reconnection: read what was missed meanwhile
	ctx    context.Context
	stop   context.CancelFunc // close: ends ctx, and the reads under it
	done   chan struct{}      // the stall checks' goroutine ended

	mu     sync.Mutex // held while a message is handled
	next   uint64     // the sequence number of the next message to handle
	closed bool
}

// Subscribe delivers to handle every message after sequence number after (0: every message the
// stream holds), in stream order, then every message published later, until Close. Messages the
// stream no longer holds are skipped.
func (b *Bus) Subscribe(ctx context.Context, after uint64, handle Handler) error {
	r := newReader(b, after, handle)
	r.mu.Lock() // the live messages wait for what the stream holds now
	defer r.mu.Unlock()
	// What waits to be handled is bounded (the client's pending limits): a message dropped
	// past them is read from the stream, as one missed in a reconnection.
	sub, err := b.nc.Subscribe(LiveSubject, r.live)
	if err != nil {
		r.stop()
		return fmt.Errorf("bus: subscribe: %w", err)
	}
	last, err := b.Last(ctx)
	if err == nil {
		err = r.readUpTo(ctx, last)
	}
	if err != nil {
		_ = sub.Unsubscribe()
		r.stop()
		return err
	}
	r.sub = sub
	b.mu.Lock()
	b.readers = append(b.readers, r)
	b.mu.Unlock()
	go r.watch()
	return nil
}

// newReader is a reader that hands handle the messages after sequence number after, not yet
// subscribed.
func newReader(b *Bus, after uint64, handle Handler) *reader {
	ctx, stop := context.WithCancel(context.Background())
	return &reader{b: b, handle: handle, next: after + 1, kick: make(chan struct{}, 1),
		ctx: ctx, stop: stop, done: make(chan struct{})}
}

// live handles a message of the live subject, after reading from the stream those it missed.
func (r *reader) live(m *nats.Msg) {
	got := bustrace.Default.Now()
	seq, err := strconv.ParseUint(m.Header.Get(hdrSequence), 10, 64)
	prev, perr := strconv.ParseUint(m.Header.Get(hdrLastSequence), 10, 64)
	if err != nil || perr != nil {
		r.b.log.Error("bus: live message without its sequence numbers", "err", errors.Join(err, perr))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || seq < r.next {
		return
	}
	if prev >= r.next { // missed: read them from the stream
		ctx, cancel := context.WithTimeout(r.ctx, readTimeout)
		err := r.readUpTo(ctx, prev)
		cancel()
		if err != nil { // left for the stall check
			r.b.log.Warn("bus: missed messages not read", "from", r.next, "to", prev, "err", err)
			return
		}
	}
	r.handle(seq, m.Data)
	r.next = seq + 1
	bustrace.Default.Record(bustrace.Receive, seq, got)
}

// readTimeout bounds a reader's read of the messages it missed.
const readTimeout = 10 * time.Second

// readUpTo hands the handler the messages from r.next to last that the stream holds, in
// order, from the stream. Call with r.mu held.
func (r *reader) readUpTo(ctx context.Context, last uint64) error {
	if last < r.next {
		return nil
	}
	info, err := r.b.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("bus: stream info: %w", err)
	}
	if info.State.Msgs == 0 || info.State.LastSeq < r.next {
		// Every message up to last has expired (or the stream has none yet).
		r.next = max(r.next, min(last, info.State.LastSeq)+1)
		return nil
	}
	r.next = max(r.next, info.State.FirstSeq)
	if last < r.next {
		return nil
	}
	return r.b.readFrom(ctx, r.next, last, func(seq uint64, data []byte) {
		r.handle(seq, data)
		r.next = seq + 1
	})
}

// watch reads from the stream what the live subject did not bring: after a reconnection, and
// when the reader has read nothing for a while though the stream holds more.
func (r *reader) watch() {
	defer close(r.done)
	t := time.NewTicker(stallCheck)
	defer t.Stop()
	var seen uint64
	for {
		stalled := false
		select {
		case <-r.ctx.Done():
			return
		case <-r.kick:
			stalled = true
		case <-t.C:
			if r.b.nc.Status() != nats.CONNECTED {
				continue // the reconnection kicks
			}
			r.mu.Lock()
			stalled, seen = r.next == seen, r.next
			r.mu.Unlock()
		}
		if stalled {
			r.catchUp()
		}
	}
}

// catchUp reads from the stream up to its last message.
func (r *reader) catchUp() {
	ctx, cancel := context.WithTimeout(r.ctx, readTimeout)
	defer cancel()
	last, err := r.b.Last(ctx)
	if err != nil {
		r.b.log.Warn("bus: catching up", "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if err := r.readUpTo(ctx, last); err != nil {
		r.b.log.Warn("bus: catching up", "err", err)
	}
}

// close stops r; a message being handled is handled first.
func (r *reader) close() {
	r.stop()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	_ = r.sub.Unsubscribe()
	<-r.done
}

// reconnected tells the readers that the connection came back: what was published meanwhile
// did not reach the live subject.
func (b *Bus) reconnected() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.readers {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}
