//go:build !unix

package gateway

import "net"

// canWriteNow is false where the gateway has no non-blocking write: dispatches wait for the
// connection's loop.
func canWriteNow(net.Conn) bool { return false }

// nonblockingWrite is never called where canWriteNow is false.
func nonblockingWrite(net.Conn, []byte) (int, error) { return 0, nil }
