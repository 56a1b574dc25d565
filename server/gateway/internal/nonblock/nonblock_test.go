//go:build unix

package nonblock

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A TCP socket takes what its buffer has room for at once; a pipe is no socket.
func TestWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	peer, err := ln.Accept()
	require.NoError(t, err)
	defer peer.Close()

	require.True(t, Supported(c))
	n, err := Write(c, []byte("hello"))
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	got := make([]byte, 5)
	_, err = io.ReadFull(peer, got)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))

	// The peer reads nothing: the socket's buffers fill, and a full socket takes nothing
	// without blocking.
	big := make([]byte, 1<<20)
	for range 64 {
		if n, err = Write(c, big); err != nil || n == 0 {
			break
		}
	}
	require.NoError(t, err)
	assert.Zero(t, n, "a full socket took more")

	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	assert.False(t, Supported(p1), "a pipe is no socket")
	n, err = Write(p1, []byte("x"))
	assert.Zero(t, n)
	assert.NoError(t, err)
}
