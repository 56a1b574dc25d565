package gateway

import (
	"encoding/binary"
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

// Write writes p, or keeps it while the connection is held.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding {
		return b.Conn.Write(p)
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = append(*b.buf, p...)
	if len(*b.buf) >= maxBatchBytes {
		if err := b.writeLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// writeText writes payload as one unmasked, unfragmented WebSocket text frame (the server's side
// of RFC 6455, without compression, which the gateway does not negotiate). The loop uses it for
// dispatches instead of the WebSocket library's writer, which spends more on each frame (its own
// locks, a context, a copy through its buffer) than the frame itself; it must be called only
// while no frame of the library's is half written, which holds for the loop: the library writes
// a frame in one call, under this connection's lock.
func (b *batchConn) writeText(payload []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding {
		return b.writeThroughLocked(payload)
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = appendTextFrame(*b.buf, payload)
	if len(*b.buf) >= maxBatchBytes {
		return b.writeLocked()
	}
	return nil
}

// writeThroughLocked writes one frame at once, outside a hold.
func (b *batchConn) writeThroughLocked(payload []byte) error {
	frame := appendTextFrame(make([]byte, 0, len(payload)+10), payload)
	_, err := b.Conn.Write(frame)
	return err
}

// appendTextFrame appends the frame header (FIN, text opcode, unmasked length) and payload.
func appendTextFrame(dst, payload []byte) []byte {
	n := len(payload)
	switch {
	case n < 126:
		dst = append(dst, 0x81, byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 0x81, 126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x81, 127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	return append(dst, payload...)
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
