//go:build unix

package nonblock

import (
	"errors"
	"net"
	"syscall"
)

// Supported reports whether Write can write to c: a socket of the operating system.
func Supported(c net.Conn) bool {
	_, ok := c.(syscall.Conn)
	return ok
}

// Write writes what the socket under c takes now, with one system call, and returns how much
// that was: the socket is non-blocking (the Go runtime's poller keeps it so), and the write is
// not retried when it is full.
func Write(c net.Conn, p []byte) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = raw.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), p)
			if werr != syscall.EINTR {
				break
			}
		}
		return true // never wait for the socket: the loop writes the rest
	})
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
