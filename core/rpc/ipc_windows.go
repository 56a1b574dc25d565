//go:build windows

package rpc

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/windows"
)

// DefaultDir is empty on Windows: the endpoints are named pipes.
func DefaultDir() string { return "" }

func endpoint(_, name string) string { return `\\?\pipe\` + name }

// pipeBufSize is the in and out buffer size of each pipe instance.
const pipeBufSize = 64 << 10

// dial opens the pipe for overlapped I/O; os.NewFile then puts the handle on the runtime's I/O
// completion port, so reads and writes do not hold a thread, deadlines work, and Close
// interrupts a blocked Read.
func dial(ctx context.Context, path string) (io.ReadWriteCloser, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	for {
		h, err := windows.CreateFile(name, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil,
			windows.OPEN_EXISTING, windows.FILE_FLAG_OVERLAPPED|windows.SECURITY_SQOS_PRESENT|windows.SECURITY_IDENTIFICATION, 0)
		if err == nil {
			return os.NewFile(uintptr(h), path), nil
		}
		if !errors.Is(err, windows.ERROR_PIPE_BUSY) {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		// Every instance is taken; the server makes another as it accepts.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

type pipeListener struct {
	path   *uint16
	name   string
	closed windows.Handle // event set by Close

	mu   sync.Mutex // serialises Accept
	next windows.Handle

	closeOnce sync.Once
}

func listen(path string) (Listener, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	// The first instance fails if another process owns the name.
	h, err := newPipe(name, true)
	if err != nil {
		return nil, &os.PathError{Op: "listen", Path: path, Err: err}
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	return &pipeListener{path: name, name: path, closed: ev, next: h}, nil
}

func newPipe(name *uint16, first bool) (windows.Handle, error) {
	flags := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	return windows.CreateNamedPipe(name, flags,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		windows.PIPE_UNLIMITED_INSTANCES, pipeBufSize, pipeBufSize, 0, nil)
}

// Accept waits for a client on the pending instance, makes the next instance so that clients
// always find one, and returns the connected one.
func (l *pipeListener) Accept() (io.ReadWriteCloser, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next == 0 {
		return nil, net.ErrClosed
	}
	h := l.next
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(ev)
	ov := &windows.Overlapped{HEvent: ev}
	err = windows.ConnectNamedPipe(h, ov)
	switch {
	case err == nil, errors.Is(err, windows.ERROR_PIPE_CONNECTED):
	case errors.Is(err, windows.ERROR_IO_PENDING):
		w, werr := windows.WaitForMultipleObjects([]windows.Handle{ev, l.closed}, false, windows.INFINITE)
		if werr != nil || w != windows.WAIT_OBJECT_0 {
			windows.CancelIoEx(h, ov)
			var n uint32
			windows.GetOverlappedResult(h, ov, &n, true)
			windows.CloseHandle(h)
			l.next = 0
			return nil, net.ErrClosed
		}
		var n uint32
		if err := windows.GetOverlappedResult(h, ov, &n, false); err != nil {
			windows.CloseHandle(h)
			l.next = 0
			return nil, err
		}
	default:
		windows.CloseHandle(h)
		l.next = 0
		return nil, err
	}
	next, err := newPipe(l.path, false)
	if err != nil {
		next = 0
	}
	l.next = next
	return os.NewFile(uintptr(h), l.name), nil
}

// Close makes a pending Accept return net.ErrClosed and releases the pending instance.
func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() {
		windows.SetEvent(l.closed)
		l.mu.Lock()
		if l.next != 0 {
			windows.CloseHandle(l.next)
			l.next = 0
		}
		windows.CloseHandle(l.closed)
		l.mu.Unlock()
	})
	return nil
}
