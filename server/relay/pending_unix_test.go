//go:build unix

package relay

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// pending tells, without waiting, whether a datagram waits on the socket (and its size); it
// reads it.
func pending(t *testing.T, c *net.UDPConn) (int, bool) {
	rc, err := c.SyscallConn()
	require.NoError(t, err)
	buf := make([]byte, 2048)
	var n int
	var rerr error
	require.NoError(t, rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
		return true
	}))
	if errors.Is(rerr, syscall.EAGAIN) {
		return 0, false
	}
	require.NoError(t, rerr)
	return n, true
}
