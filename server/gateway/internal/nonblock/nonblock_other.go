//go:build !unix

package nonblock

import "net"

// Supported is false where there is no non-blocking write: the gateway's dispatches wait for the
// connection's loop.
func Supported(net.Conn) bool { return false }

// Writer writes to one connection without waiting; never used where Supported is false.
type Writer struct{}

// Write is never called where Supported is false.
func (*Writer) Write(net.Conn, []byte) (int, error) { return 0, nil }
