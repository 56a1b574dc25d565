//go:build !windows

package rpc

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// DefaultDir is the directory of the sockets: $XDG_RUNTIME_DIR, else $TMPDIR, else /tmp.
func DefaultDir() string {
	for _, v := range []string{"XDG_RUNTIME_DIR", "TMPDIR"} {
		if d := os.Getenv(v); d != "" {
			return d
		}
	}
	return "/tmp"
}

func endpoint(dir, name string) string {
	if dir == "" {
		dir = DefaultDir()
	}
	return filepath.Join(dir, name)
}

func dial(ctx context.Context, path string) (io.ReadWriteCloser, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}

type unixListener struct{ net.Listener }

func (l unixListener) Accept() (io.ReadWriteCloser, error) { return l.Listener.Accept() }

func listen(path string) (Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil && errors.Is(err, syscall.EADDRINUSE) {
		// A socket file nobody answers on is left over from a process that died.
		c, derr := net.Dial("unix", path)
		if derr == nil {
			c.Close()
			return nil, err
		}
		if errors.Is(derr, syscall.ECONNREFUSED) && os.Remove(path) == nil {
			ln, err = net.Listen("unix", path)
		}
	}
	if err != nil {
		return nil, err
	}
	// Only this user may connect.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return unixListener{ln}, nil
}
