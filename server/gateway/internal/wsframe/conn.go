package wsframe

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/gobwas/ws"

	"sdkpp/server/gateway/internal/nonblock"
)

// maxBatchBytes is how much a Conn holds before it writes anyway.
const maxBatchBytes = 64 << 10

// ErrCloseSent is the error of a write after the close frame: RFC 6455 (5.5.1) allows no frame
// after it.
var ErrCloseSent = errors.New("wsframe: close frame already sent")

// Conn writes the server's WebSocket frames (RFC 6455: unmasked, unfragmented, without
// extensions, which the gateway does not negotiate) to the connection it owns, each frame's
// header encoded by ws.WriteHeaderBuffer. Every frame goes through it, so it decides how they
// reach the socket:
//
//   - Between Hold and Release, frames are kept and then written with one system call, so that
//     a connection that has several dispatches waiting sends them together: one write, one
//     wake-up of the peer, instead of one per frame.
//   - WriteNow writes a dispatcher's frames without waiting for the socket, keeping what the
//     socket does not take for the connection's loop.
//   - Otherwise a frame is written at once, within its timeout, after anything kept.
//
// After the close frame, every write fails with ErrCloseSent. It is safe for concurrent use.
type Conn struct {
	net.Conn

	mu        sync.Mutex
	holding   bool
	deadline  time.Time // the hold's: writing what is kept must finish by then
	closeSent bool
	buf       *[]byte // from batchBufs while something is kept, so that idle connections hold none

	// Scratch for ws.WriteHeaderBuffer, guarded by mu: part of the connection, so that encoding
	// a header allocates nothing.
	hdr [ws.MaxHeaderSize]byte
	app appender

	// z compresses text messages (see Compress); nil sends them as they are. Guarded by mu.
	z *compressor

	nb nonblock.Writer // WriteNow's, guarded by mu
}

// Compress makes the connection's later text messages go out compressed in mode, unless they
// already are (transport compression takes precedence over payload compression).
func (b *Conn) Compress(mode Compression) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.z == nil {
		b.z = newCompressor(mode)
	}
}

// appender is an io.Writer that appends to its slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// batchBufs recycles the buffers of held writes among connections.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// appendHeaderLocked appends the header of a final frame of op with n payload bytes to dst.
func (b *Conn) appendHeaderLocked(dst []byte, op ws.OpCode, n int) []byte {
	b.app.b = dst
	// Cannot fail: the scratch is large enough, n is not negative, and appender never fails.
	_ = ws.WriteHeaderBuffer(&b.app, ws.Header{Fin: true, OpCode: op, Length: int64(n)}, b.hdr[:])
	dst, b.app.b = b.app.b, nil
	return dst
}

// appendDispatchLocked appends the dispatch as one text frame to *buf, its payload built
// in place.
func (b *Conn) appendDispatchLocked(buf *[]byte, e Dispatch) error {
	if b.z != nil {
		op, p, err := b.z.frame(e.Frame(), true)
		if err != nil {
			return err
		}
		*buf = b.appendHeaderLocked(*buf, op, len(p))
		*buf = append(*buf, p...)
		return nil
	}
	*buf = b.appendHeaderLocked(*buf, ws.OpText, dispatchLen(e.Seq, e.Event, e.Data))
	*buf = appendDispatch(*buf, e.Seq, e.Event, e.Data)
	return nil
}

// WriteFrame writes one frame of op with payload p: kept while the connection is held (and
// written with Release), else at once after what is kept, within timeout. Writing a close frame
// ends writing.
func (b *Conn) WriteFrame(op ws.OpCode, p []byte, timeout time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closeSent {
		return ErrCloseSent
	}
	if op == ws.OpClose {
		b.closeSent = true
	}
	if op == ws.OpText {
		var err error
		if op, p, err = b.z.frame(p, false); err != nil {
			return err
		}
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = b.appendHeaderLocked(*b.buf, op, len(p))
	*b.buf = append(*b.buf, p...)
	if b.holding {
		if len(*b.buf) >= maxBatchBytes {
			return b.writeHeldLocked()
		}
		return nil
	}
	if err := b.Conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		b.dropLocked()
		return err
	}
	err := b.writeLocked()
	if derr := b.Conn.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// WriteNow writes the dispatches' frames at once, with one system call that does not wait for the
// socket: a dispatcher writes through it instead of waking the connection's loop, which would
// cost the dispatch a hand-off between goroutines (on a machine with two cores, often tens of
// microseconds). What the socket does not take now is kept, and written first by the next write,
// which must come from the loop (the caller wakes it): kept reports that. When the connection is
// held, already keeps something, or cannot write without waiting (see CanWriteNow), every frame
// is kept, after what was kept before. err means the connection failed.
func (b *Conn) WriteNow(list []Dispatch) (kept bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closeSent {
		return false, ErrCloseSent
	}
	buf := b.buf
	if buf == nil {
		buf = batchBufs.Get().(*[]byte)
	}
	for _, e := range list {
		if err := b.appendDispatchLocked(buf, e); err != nil {
			*buf = (*buf)[:0]
			batchBufs.Put(buf)
			if b.buf == buf {
				b.buf = nil
			}
			return false, err
		}
	}
	if b.holding || b.buf != nil || !nonblock.Supported(b.Conn) {
		b.buf = buf
		return true, nil
	}
	n, err := b.nb.Write(b.Conn, *buf)
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

// CanWriteNow reports whether WriteNow can write to the connection at once: its socket is the
// operating system's (a TLS connection's is not: its records are written by crypto/tls).
func (b *Conn) CanWriteNow() bool { return nonblock.Supported(b.Conn) }

// Keeps reports whether WriteNow left bytes that wait for the next write.
func (b *Conn) Keeps() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf != nil
}

// WriteDispatch keeps the dispatch as one text frame until Release; a connection's loop uses it
// for dispatches, which it writes in batches.
func (b *Conn) WriteDispatch(e Dispatch) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closeSent:
		return ErrCloseSent
	case !b.holding:
		return errors.New("wsframe: WriteDispatch outside hold") // the gateway's loop always holds
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	if err := b.appendDispatchLocked(b.buf, e); err != nil {
		return err
	}
	if len(*b.buf) >= maxBatchBytes {
		return b.writeHeldLocked()
	}
	return nil
}

// Hold starts keeping writes; until Release, writing to the connection (when more than
// maxBatchBytes are kept, and in Release) must finish within timeout.
func (b *Conn) Hold(timeout time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = true
	b.deadline = time.Now().Add(timeout)
}

// Release writes what was kept and stops keeping writes.
func (b *Conn) Release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = false
	if b.buf == nil {
		return nil
	}
	return b.writeHeldLocked()
}

// writeHeldLocked writes the kept bytes of a hold: what the socket takes at once with one
// system call that does not wait (nonblock), and only then, when some are left, the rest
// within the hold's deadline. Most writes fit the socket's buffer, and setting a deadline
// and clearing it (two updates of the runtime's timers) cost a fair share of a write.
func (b *Conn) writeHeldLocked() error {
	if nonblock.Supported(b.Conn) {
		n, err := b.nb.Write(b.Conn, *b.buf)
		if err != nil || n == len(*b.buf) {
			b.dropLocked()
			return err
		}
		*b.buf = (*b.buf)[:copy(*b.buf, (*b.buf)[n:])]
	}
	if err := b.Conn.SetWriteDeadline(b.deadline); err != nil {
		b.dropLocked()
		return err
	}
	err := b.writeLocked()
	if derr := b.Conn.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// writeLocked writes the kept bytes and gives the buffer back; after an error the connection
// is unusable and they are dropped.
func (b *Conn) writeLocked() error {
	_, err := b.Conn.Write(*b.buf)
	b.dropLocked()
	return err
}

// dropLocked gives the buffer of kept bytes back.
func (b *Conn) dropLocked() {
	if cap(*b.buf) <= maxBatchBytes*2 {
		*b.buf = (*b.buf)[:0]
		batchBufs.Put(b.buf)
	}
	b.buf = nil
}
