package rpc

import (
	"context"
	"io"
	"strconv"
)

// DefaultPrefix is the name of the IPC endpoints before their index.
const DefaultPrefix = "sdkpp-ipc-"

// Slots is how many endpoint indexes a client tries, 0 to Slots-1, in order.
const Slots = 10

// Listener accepts IPC connections: a unix socket, or a named pipe on Windows.
type Listener interface {
	Accept() (io.ReadWriteCloser, error)
	Close() error
}

// Path returns the endpoint with index n: on Unix the socket dir/prefix+n (dir "" is DefaultDir),
// on Windows the named pipe \\?\pipe\prefix+n (dir is ignored). prefix "" is DefaultPrefix.
func Path(dir, prefix string, n int) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return endpoint(dir, prefix+strconv.Itoa(n))
}

// DialIPC connects to the endpoint at path.
func DialIPC(ctx context.Context, path string) (io.ReadWriteCloser, error) { return dial(ctx, path) }

// ListenIPC listens on the endpoint at path. It fails if another process is listening there; a
// stale unix socket left by a process that died is replaced.
func ListenIPC(path string) (Listener, error) { return listen(path) }
