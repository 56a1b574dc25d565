//go:build unix

package nonblock

import (
	"errors"
	"net"
	"syscall"
)

// Supported reports whether a Writer can write to c: a socket of the operating system.
func Supported(c net.Conn) bool {
	_, ok := c.(syscall.Conn)
	return ok
}

// Writer writes to one connection's socket without waiting, from one goroutine at a time. It
// keeps the socket's syscall.RawConn and its system call's state, so that a write allocates
// nothing. Its zero value is ready.
type Writer struct {
	raw  syscall.RawConn
	call func(fd uintptr) bool // writes p, setting n and err
	p    []byte
	n    int
	err  error
}

// Write writes what the socket under c takes now, with one system call, and returns how much
// that was: the socket is non-blocking (the Go runtime's poller keeps it so), and the write is
// not retried when it is full. c must be the same connection at every call.
func (w *Writer) Write(c net.Conn, p []byte) (int, error) {
	if w.raw == nil {
		sc, ok := c.(syscall.Conn)
		if !ok {
			return 0, nil
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return 0, err
		}
		w.raw, w.call = raw, w.write
	}
	w.p = p
	err := w.raw.Write(w.call)
	n, werr := w.n, w.err
	w.p, w.err = nil, nil
	switch {
	case err != nil:
		return 0, err
	case errors.Is(werr, syscall.EAGAIN):
		return 0, nil
	case werr != nil:
		return 0, werr
	case n < 0:
		return 0, nil
	}
	return n, nil
}

func (w *Writer) write(fd uintptr) bool {
	for {
		w.n, w.err = syscall.Write(int(fd), w.p)
		if w.err != syscall.EINTR {
			break
		}
	}
	return true // never wait for the socket: the loop writes the rest
}
