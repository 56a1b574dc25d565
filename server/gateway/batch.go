package gateway

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"
)

// maxBatchBytes is how much a batchConn holds before it writes anyway.
const maxBatchBytes = 64 << 10

// batchConn is the hijacked TCP connection under a WebSocket. Between hold and release, what the
// WebSocket library writes (it flushes every frame) is kept and then written with one system
// call, so that a connection that has several dispatches waiting sends them together: one
// write, one wake-up of the peer, instead of one per frame. Outside hold it writes through.
type batchConn struct {
	net.Conn

	mu      sync.Mutex
	holding bool
	buf     *[]byte // from batchBufs while something is kept, so that idle connections hold none
}

// batchBufs recycles the buffers of held writes among connections.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// Write writes p, or keeps it while the connection is held. Outside hold, what writeNow left
// unwritten goes first.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding && b.buf == nil {
		return b.Conn.Write(p)
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = append(*b.buf, p...)
	if !b.holding || len(*b.buf) >= maxBatchBytes {
		if err := b.writeLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// writeNow writes the entries' frames at once, with one system call that does not wait for the
// socket: a dispatcher writes through it instead of waking the connection's loop, which would
// cost the dispatch a hand-off between goroutines (on a machine with two cores, often tens of
// microseconds). What the socket does not take now is kept, and written first by the next write,
// which must come from the loop (the caller wakes it): kept reports that. When the connection is
// held, already keeps something, or cannot write without waiting (see canWriteNow), every frame
// is kept, after what was kept before. err means the connection failed.
func (b *batchConn) writeNow(list []entry) (kept bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf := b.buf
	if buf == nil {
		buf = batchBufs.Get().(*[]byte)
	}
	for _, e := range list {
		*buf = appendTextHeader(*buf, dispatchLen(e.seq, e.event, e.d))
		*buf = appendDispatch(*buf, e.seq, e.event, e.d)
	}
	if b.holding || b.buf != nil || !canWriteNow(b.Conn) {
		b.buf = buf
		return true, nil
	}
	n, err := nonblockingWrite(b.Conn, *buf)
	if err != nil {
		*buf = (*buf)[:0]
		batchBufs.Put(buf)
		return false, err
	}
	if n == len(*buf) {
		if cap(*buf) <= maxBatchBytes*2 {
			*buf = (*buf)[:0]
			batchBufs.Put(buf)
		}
		return false, nil
	}
	rest := copy(*buf, (*buf)[n:])
	*buf = (*buf)[:rest]
	b.buf = buf
	return true, nil
}

// canWriteNow reports whether writeNow can write to the connection at once: its socket is the
// operating system's (a TLS connection's is not: its records are written by crypto/tls).
func (b *batchConn) canWriteNow() bool { return canWriteNow(b.Conn) }

// keeps reports whether writeNow left bytes that wait for the next write.
func (b *batchConn) keeps() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf != nil
}

// writeDispatch writes the entry as one unmasked, unfragmented WebSocket text frame (the
// server's side of RFC 6455, without compression, which the gateway does not negotiate), its
// payload built in place in the batch. The loop uses it for dispatches instead of the WebSocket
// library's writer, which spends more on each frame (its own locks, a context, a copy through its
// buffer) than the frame itself. It must be called only while no frame of the library's is half
// written, which holds for the loop: the library writes a frame in one call, under this
// connection's lock.
func (b *batchConn) writeDispatch(e entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding {
		return errors.New("gateway: writeDispatch outside hold") // writeAll always holds
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = appendTextHeader(*b.buf, dispatchLen(e.seq, e.event, e.d))
	*b.buf = appendDispatch(*b.buf, e.seq, e.event, e.d)
	if len(*b.buf) >= maxBatchBytes {
		return b.writeLocked()
	}
	return nil
}

// appendTextHeader appends the header of a frame of n payload bytes: FIN, the text opcode, and
// the unmasked length in its shortest encoding.
func appendTextHeader(dst []byte, n int) []byte {
	switch {
	case n < 126:
		return append(dst, 0x81, byte(n))
	case n <= 0xFFFF:
		return append(dst, 0x81, 126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x81, 127)
		return binary.BigEndian.AppendUint64(dst, uint64(n))
	}
}

// hold starts keeping writes; until release, writing to the connection (when more than
// maxBatchBytes are kept, and in release) must finish within timeout.
func (b *batchConn) hold(timeout time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = true
	return b.Conn.SetWriteDeadline(time.Now().Add(timeout))
}

// release writes what was kept and stops keeping writes.
func (b *batchConn) release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = false
	var err error
	if b.buf != nil {
		err = b.writeLocked()
	}
	if derr := b.Conn.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// writeLocked writes the kept bytes and gives the buffer back; after an error the connection
// is unusable and they are dropped.
func (b *batchConn) writeLocked() error {
	_, err := b.Conn.Write(*b.buf)
	if cap(*b.buf) <= maxBatchBytes*2 {
		*b.buf = (*b.buf)[:0]
		batchBufs.Put(b.buf)
	}
	b.buf = nil
	return err
}
