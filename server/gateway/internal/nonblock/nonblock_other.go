//go:build !unix

package nonblock

import "net"

// Supported is false where there is no non-blocking write: the gateway's dispatches wait for the
// connection's loop.
func Supported(net.Conn) bool { return false }

// Write is never called where Supported is false.
func Write(net.Conn, []byte) (int, error) { return 0, nil }
