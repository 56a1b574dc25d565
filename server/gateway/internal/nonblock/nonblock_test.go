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
	c, peer := tcpPair(t)

	require.True(t, Supported(c))
	var w Writer
	n, err := w.Write(c, []byte("hello"))
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
		if n, err = w.Write(c, big); err != nil || n == 0 {
			break
		}
	}
	require.NoError(t, err)
	assert.Zero(t, n, "a full socket took more")

	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	assert.False(t, Supported(p1), "a pipe is no socket")
	var pw Writer
	n, err = pw.Write(p1, []byte("x"))
	assert.Zero(t, n)
	assert.NoError(t, err)
}

// A Writer's writes after its first allocate nothing.
func TestWriterAllocatesNothing(t *testing.T) {
	c, peer := tcpPair(t)
	go io.Copy(io.Discard, peer) //nolint:errcheck // ends when the test closes peer

	var w Writer
	p := []byte("hello")
	_, err := w.Write(c, p)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if n, err := w.Write(c, p); err != nil || n != len(p) {
			t.Fatal(n, err)
		}
	}))
}

// tcpPair is a TCP connection on loopback and its peer, closed when the test ends.
func tcpPair(t *testing.T) (c, peer net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	peer, err = ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { peer.Close() })
	return c, peer
}
