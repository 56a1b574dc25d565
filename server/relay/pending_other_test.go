//go:build !unix

package relay

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pending tells whether a datagram waits on the socket (and its size); it reads it. Without
// a non-blocking receive it waits a moment.
func pending(t *testing.T, c *net.UDPConn) (int, bool) {
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	buf := make([]byte, 2048)
	n, _, err := c.ReadFromUDPAddrPort(buf)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, false
	}
	require.NoError(t, err)
	return n, true
}
