package gateway

import (
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
