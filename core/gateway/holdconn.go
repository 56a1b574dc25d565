package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// holdConn is the connection under the WebSocket connection (wsConn, and TLS if any), which
// writes each frame with a write of its own, under its own lock. holdConn lets the messages of
// several goroutines share system calls without a goroutine of its own:
//
//   - a write made while the connection is held (writeRaw holds it around the frame's write)
//     is kept, and Flush writes it: when no other goroutine is writing, the caller writes
//     everything kept, itself, in one system call; when one is, its frame is left to that
//     goroutine, which writes what was kept meanwhile as soon as its own write returns, and so on
//     until nothing is kept;
//   - a write made while it is not held (wsConn's own frames: a pong, a close) is kept and
//     flushed the same way at once;
//   - but a write flushed with FlushLater while the connection's reader is between reads (it has
//     read bytes and not yet asked for more: it is decoding and dispatching what it read, whose
//     answers may wake the goroutines that write) is left to the reader, which writes everything
//     kept in one system call when it next reads (Read), before it waits for the socket. This is
//     the sending half of a burst: the answers read together wake the senders together, and
//     their next requests go out together, as a client that wrote them from its reader would.
//
// A lone message therefore goes out at once on the sending goroutine, as it did without
// holdConn, and messages sent while a write is in progress, or (FlushLater) while the reader
// dispatches, go out together in the next system call instead of one call each.
//
// What is kept is bounded (maxHeld): a write that would keep more waits for the writing
// goroutine's round. Each system call has a deadline (timeout, give or take half of it); a write
// that fails (the deadline included) closes the connection, so that its reader fails too and the
// session ends, and the error is sticky: every later write, Flush and Read reports it.
type holdConn struct {
	net.Conn
	timeout  time.Duration // each system call's write deadline, about (writeRound); 0: none
	deadline time.Time     // the write deadline set last; the goroutine writing's

	hold atomic.Bool // writes are kept for Flush

	mu       sync.Mutex
	drained  sync.Cond // signalled at the end of each round of writing; L is &mu
	held     []byte    // kept, in the order written
	spare    []byte    // the last round's buffer, reused by the next
	flushing bool      // a goroutine writes what is kept (flushLocked)
	reading  bool      // the reader is between reads: it writes what is kept when it next reads (FlushLater)
	err      error     // the first write error, or net.ErrClosed after Close
}

// maxHeld bounds what a holdConn keeps while a round is being written.
const maxHeld = 64 << 10

// newHoldConn wraps conn; timeout is each system call's write deadline (0: none).
func newHoldConn(conn net.Conn, timeout time.Duration) *holdConn {
	c := &holdConn{Conn: conn, timeout: timeout}
	c.drained.L = &c.mu
	return c
}

// Hold makes the writes that follow kept until Flush (on), or flushed at once (off).
func (c *holdConn) Hold(on bool) { c.hold.Store(on) }

// Write keeps p; unless the connection is held, it then flushes it (Flush). It waits while
// maxHeld bytes are kept and being written.
func (c *holdConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && c.flushing && len(c.held)+len(p) > maxHeld && len(c.held) > 0 {
		c.drained.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	c.held = append(c.held, p...)
	if c.hold.Load() {
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is kept, or leaves it to the goroutine writing already, which writes it
// before it returns; it reports the connection's write error, if any.
func (c *holdConn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

// Settle returns once what is kept has been written, by the goroutine writing already (it
// waits for its rounds) or by itself; it reports the connection's write error, if any. A close
// frame is settled before the connection is closed, which drops what is still kept.
func (c *holdConn) Settle() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && len(c.held) > 0 {
		if !c.flushing {
			return c.flushLocked()
		}
		c.drained.Wait()
	}
	return c.err
}

// FlushLater is Flush, except that while the reader is between reads it leaves what is kept to
// the reader, which writes it when it next reads. The reader may be descheduled meanwhile: use it
// for a write that may wait a little, such as a request sent while others are in flight, whose
// answers the reader is reading.
func (c *holdConn) FlushLater() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reading && len(c.held) <= maxHeld {
		return c.err
	}
	return c.flushLocked()
}

// Read writes what was left to it while it was between reads (FlushLater), then reads from the
// connection; from when it returns bytes until the next Read, FlushLater leaves writes to it.
// Only the connection's reader calls it (one goroutine at a time: the HTTP client's while it
// reads the handshake's answer, then wsConn's).
func (c *holdConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	c.reading = false
	err := c.flushLocked()
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 && err == nil {
		c.mu.Lock()
		c.reading = true
		c.mu.Unlock()
	}
	return n, err
}

// flushLocked is Flush with mu held; mu is released during each system call.
func (c *holdConn) flushLocked() error {
	if c.flushing {
		return c.err // the goroutine writing takes what was kept before it returns
	}
	c.flushing = true
	for len(c.held) > 0 && c.err == nil {
		round := c.held
		c.held = c.spare[:0]
		c.mu.Unlock()
		err := c.writeRound(round)
		c.mu.Lock()
		if err != nil && c.err == nil {
			c.err = err
		}
		if cap(round) <= maxHeld {
			c.spare = round
		}
		c.drained.Broadcast()
	}
	c.flushing = false
	if c.err != nil {
		c.held = nil
	}
	return c.err
}

// writeRound writes b in one system call, within the deadline; a failure closes the connection.
// The deadline moves only when less than half the timeout is left of it, so that most writes
// move no timer: a write gets between half the timeout and all of it. Only the goroutine
// writing (flushLocked) calls it.
func (c *holdConn) writeRound(b []byte) error {
	if c.timeout > 0 {
		if now := time.Now(); c.deadline.Sub(now) < c.timeout/2 {
			c.deadline = now.Add(c.timeout)
			if err := c.Conn.SetWriteDeadline(c.deadline); err != nil {
				c.Conn.Close()
				return err
			}
		}
	}
	if _, err := c.Conn.Write(b); err != nil { // a net.Conn writes all of b or fails
		c.Conn.Close()
		return err
	}
	return nil
}

// Close closes the connection: what is still kept is dropped, and later writes fail.
func (c *holdConn) Close() error {
	c.mu.Lock()
	c.held = nil
	if c.err == nil {
		c.err = net.ErrClosed
	}
	c.drained.Broadcast()
	c.mu.Unlock()
	return c.Conn.Close()
}

// holdingClient returns an HTTP client for the WebSocket handshake whose connections are
// holdConns with write deadline timeout, handed to took as they are dialed, and true; base is the
// client to copy (nil: the default). It returns base itself and false when base's transport is
// not an *http.Transport it can copy: then no connection is a holdConn.
func holdingClient(base *http.Client, timeout time.Duration, took func(*holdConn)) (*http.Client, bool) {
	if base == nil {
		base = http.DefaultClient
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return base, false
	}
	t = t.Clone()
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if conn == nil {
			return nil, errors.New("gateway: the dialer returned no connection")
		}
		hc := newHoldConn(conn, timeout)
		took(hc)
		return hc, nil
	}
	hc := *base
	hc.Transport = t
	return &hc, true
}
