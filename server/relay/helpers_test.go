package relay

import (
	"bytes"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/wire/voice"
)

var epoch = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// wait bounds every read that must succeed (real time).
const wait = 5 * time.Second

// env is a relay on loopback with a fake clock and seeded tokens.
type env struct {
	t   *testing.T
	clk *clock.Fake
	r   *Relay
}

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	clk := clock.NewFake(epoch)
	cfg := Config{Clock: clk, Rand: rand.NewChaCha8([32]byte{7}), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	return &env{t: t, clk: clk, r: r}
}

// client is a participant's UDP socket and flow.
type client struct {
	t    *testing.T
	e    *env
	conn *net.UDPConn
	flow Flow
	seq  uint32
}

// join opens a flow in call and a socket for it (not bound yet).
func (e *env) join(call uint64) *client {
	e.t.Helper()
	f, err := e.r.Open(call)
	require.NoError(e.t, err)
	return &client{t: e.t, e: e, conn: e.socket(), flow: f}
}

// socket is a new loopback UDP socket connected to nothing.
func (e *env) socket() *net.UDPConn {
	e.t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { c.Close() })
	return c
}

// sendRaw sends pkt to the relay from the client's socket.
func (c *client) sendRaw(pkt []byte) {
	c.t.Helper()
	_, err := c.conn.WriteToUDPAddrPort(pkt, c.e.r.Addr())
	require.NoError(c.t, err)
}

// bind sends a bind packet and reads the reply.
func (c *client) bind() {
	c.t.Helper()
	c.sendRaw(voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: c.flow.SSRC}, c.flow.Token[:]))
	h, payload := c.recv()
	require.Equal(c.t, voice.Header{Type: voice.TypeBind, Flags: voice.FlagReply, SSRC: c.flow.SSRC}, h)
	require.Empty(c.t, payload)
}

// media sends a media packet with the payload and returns the packet as sent.
func (c *client) media(payload []byte) []byte {
	c.t.Helper()
	c.seq++
	pkt := voice.AppendPacket(nil, voice.Header{Type: voice.TypeMedia, SSRC: c.flow.SSRC, Sequence: c.seq, Timestamp: c.seq * 960}, payload)
	c.sendRaw(pkt)
	return pkt
}

// keepalive sends a keepalive and reads its echo.
func (c *client) keepalive() {
	c.t.Helper()
	c.seq++
	h := voice.Header{Type: voice.TypeKeepalive, SSRC: c.flow.SSRC, Sequence: c.seq}
	c.sendRaw(voice.AppendPacket(nil, h, nil))
	got, _ := c.recv()
	h.Flags = voice.FlagReply
	require.Equal(c.t, h, got)
}

// recvRaw reads the next packet exactly as the relay sent it.
func (c *client) recvRaw() []byte {
	c.t.Helper()
	buf := make([]byte, voice.MaxPacketBytes+1)
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(wait)))
	n, from, err := c.conn.ReadFromUDPAddrPort(buf)
	require.NoError(c.t, err, "reading from the relay")
	require.Equal(c.t, c.e.r.Addr(), from, "sender")
	return buf[:n]
}

func (c *client) recv() (voice.Header, []byte) {
	c.t.Helper()
	h, payload, err := voice.Parse(c.recvRaw())
	require.NoError(c.t, err)
	return h, payload
}

// expect reads the next packet and checks it is pkt, byte for byte.
func (c *client) expect(pkt []byte) {
	c.t.Helper()
	got := c.recvRaw()
	require.True(c.t, bytes.Equal(pkt, got), "packet changed by the relay:\nsent %x\ngot  %x", pkt, got)
}

// expectNothing checks that no packet waits on the client's socket. Call it after a fence: a
// packet the relay sent after (or in the same batch as) any packet it might have sent here, and
// that another client has received. Loopback delivers a datagram into the receiving socket
// during the send, so anything sent here before the fence is there.
func (c *client) expectNothing() {
	c.t.Helper()
	n, ok := pending(c.t, c.conn)
	require.False(c.t, ok, "unexpected packet of %d bytes", n)
}
