package relay

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire/voice"
)

// trio is three participants of call 1, bound.
func (e *env) trio() (a, b, c *client) {
	a, b, c = e.join(1), e.join(1), e.join(1)
	for _, p := range []*client{a, b, c} {
		p.bind()
	}
	return a, b, c
}

func TestOpenGivesDistinctSSRCsAndTokens(t *testing.T) {
	e := newEnv(t, nil)
	seen := map[voice.Token]bool{}
	for i := range 5 {
		f, err := e.r.Open(1)
		require.NoError(t, err)
		assert.Equal(t, uint32(i+1), f.SSRC)
		assert.False(t, seen[f.Token], "token reused")
		seen[f.Token] = true
	}
	other, err := e.r.Open(2)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), other.SSRC, "SSRCs count per call")
}

// TestMediaReachesTheOthers: three members bind, and each one's media reaches the other two,
// byte for byte as sent (the relay does not alter packets), and not itself; a participant of
// another call hears nothing.
func TestMediaReachesTheOthers(t *testing.T) {
	e := newEnv(t, nil)
	a, b, c := e.trio()
	stranger := e.join(2)
	stranger.bind()
	all := []*client{a, b, c}
	for i, from := range all {
		// A sealed frame is random-looking bytes; include every byte value.
		payload := make([]byte, 256)
		for j := range payload {
			payload[j] = byte(j + i)
		}
		pkt := from.media(payload)
		for _, to := range all {
			if to != from {
				to.expect(pkt)
			}
		}
		from.expectNothing()
		stranger.expectNothing()
	}
	st := e.r.Stats()
	assert.Equal(t, uint64(6), st.Forwarded)
	assert.Equal(t, uint64(4), st.Binds)
	assert.Zero(t, st.Dropped())
}

func TestLossReportsGoToTheOthers(t *testing.T) {
	e := newEnv(t, nil)
	a, b, c := e.trio()
	report := voice.AppendReportBlock(voice.AppendReportBlock(nil, voice.ReportBlock{SSRC: b.flow.SSRC, FractionLost: 12}),
		voice.ReportBlock{SSRC: c.flow.SSRC, JitterMillis: 30})
	pkt := voice.AppendPacket(nil, voice.Header{Type: voice.TypeLossReport, SSRC: a.flow.SSRC}, report)
	a.sendRaw(pkt)
	b.expect(pkt)
	c.expect(pkt)
	a.expectNothing()
}

// TestLeaverStopsReceiving: once signaling removes a flow, the next packet reaches only those
// who stay, and the leaver's own packets go nowhere.
func TestLeaverStopsReceiving(t *testing.T) {
	e := newEnv(t, nil)
	a, b, c := e.trio()
	a.media([]byte("before"))
	b.recv()
	c.recv()

	e.r.Remove(b.flow.Token)
	pkt := a.media([]byte("after"))
	c.expect(pkt) // the fence: b's copy would have been sent in the same batch
	b.expectNothing()

	b.media([]byte("from the leaver"))
	fence := a.media([]byte("fence"))
	c.expect(fence)
	a.expectNothing()
	assert.Equal(t, uint64(1), e.r.Stats().Unbound)

	// Its token no longer binds.
	b.sendRaw(voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: b.flow.SSRC}, b.flow.Token[:]))
	c.expect(a.media([]byte("fence 2")))
	b.expectNothing()
	assert.Equal(t, uint64(1), e.r.Stats().BadToken)
}

// TestNATRebinding: a bind with the same token from a new address moves the flow there; the
// old address is forgotten.
func TestNATRebinding(t *testing.T) {
	e := newEnv(t, nil)
	a, b, _ := e.trio()
	old := b.conn
	b.conn = e.socket() // the NAT gave b's traffic a new source port
	b.bind()

	pkt := a.media([]byte("to the new address"))
	b.expect(pkt)
	assert.Equal(t, uint64(1), e.r.Stats().Rebinds)
	n, ok := pending(t, old)
	assert.False(t, ok, "the old address got %d bytes", n)

	// The old address is no longer b.
	_, err := old.WriteToUDPAddrPort(voice.AppendPacket(nil, voice.Header{Type: voice.TypeMedia, SSRC: b.flow.SSRC}, []byte("x")), e.r.Addr())
	require.NoError(t, err)
	a.keepalive() // the fence: the relay serves packets in order
	assert.Equal(t, uint64(1), e.r.Stats().Unbound)
}

// TestFlowExpiry: a flow that sends nothing for FlowTimeout (the relay's clock) stops
// receiving; a keepalive keeps a flow alive; binding again restores it.
func TestFlowExpiry(t *testing.T) {
	e := newEnv(t, nil)
	a, b, c := e.trio()
	e.clk.Advance(voice.FlowTimeout * 3 / 4)
	a.keepalive()
	c.keepalive()
	e.clk.Advance(voice.FlowTimeout/2 + time.Second) // b: 1.25 timeouts of silence; a and c: 0.5
	pkt := a.media([]byte("b is gone"))
	c.expect(pkt)
	b.expectNothing()
	assert.GreaterOrEqual(t, e.r.Stats().Expired, uint64(1))

	b.bind()
	pkt = a.media([]byte("b is back"))
	b.expect(pkt)
	c.expect(pkt)
}

// TestJanitorForgetsSilentFlows: with no traffic at all, the relay's clock passing the timeout
// unbinds every flow.
func TestJanitorForgetsSilentFlows(t *testing.T) {
	e := newEnv(t, nil)
	e.trio()
	// The janitor wakes every half timeout of the relay's clock, from whenever it last woke: it
	// wakes once within this move, re-arms, and finds the flows expired within the next.
	armed := e.clk.Armed()
	e.clk.Advance(voice.FlowTimeout + time.Second)
	require.NoError(t, e.clk.WaitArmed(t.Context(), armed+1))
	e.clk.Advance(voice.FlowTimeout)
	require.Eventually(t, func() bool { return e.r.Stats().Expired == 3 }, wait, time.Millisecond)
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	assert.Empty(t, e.r.byAddr)
}

// TestBadPacketsDropped: malformed, unbound, spoofed or oversized packets and binds with a wrong
// token are dropped and counted; the relay goes on serving.
func TestBadPacketsDropped(t *testing.T) {
	e := newEnv(t, nil)
	a, b, c := e.trio()
	stranger := e.socket()
	wrong := a.flow.Token
	wrong[0] ^= 1
	media := func(ssrc uint32, payload []byte) []byte {
		return voice.AppendPacket(nil, voice.Header{Type: voice.TypeMedia, SSRC: ssrc}, payload)
	}
	tests := []struct {
		name    string
		from    *net.UDPConn
		pkt     []byte
		counter func(Stats) uint64
	}{
		{"empty", a.conn, []byte{}, func(s Stats) uint64 { return s.Malformed }},
		{"short", a.conn, media(a.flow.SSRC, []byte("x"))[:voice.HeaderBytes-1], func(s Stats) uint64 { return s.Malformed }},
		{"wrong version", a.conn, append([]byte{2}, media(a.flow.SSRC, []byte("x"))[1:]...), func(s Stats) uint64 { return s.Malformed }},
		{"unknown type", a.conn, voice.AppendPacket(nil, voice.Header{Type: 9, SSRC: a.flow.SSRC}, []byte("x")), func(s Stats) uint64 { return s.Malformed }},
		{"empty media", a.conn, media(a.flow.SSRC, nil), func(s Stats) uint64 { return s.Malformed }},
		{"a reply sent to the relay", a.conn, voice.AppendPacket(nil, voice.Header{Type: voice.TypeKeepalive, Flags: voice.FlagReply, SSRC: a.flow.SSRC}, nil), func(s Stats) uint64 { return s.Malformed }},
		{"too long", a.conn, media(a.flow.SSRC, make([]byte, voice.MaxPayloadBytes+1)), func(s Stats) uint64 { return s.TooLong }},
		{"much too long", a.conn, media(a.flow.SSRC, make([]byte, 8000)), func(s Stats) uint64 { return s.TooLong }},
		{"wrong token", stranger, voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: a.flow.SSRC}, wrong[:]), func(s Stats) uint64 { return s.BadToken }},
		{"right token, another SSRC", stranger, voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: b.flow.SSRC}, a.flow.Token[:]), func(s Stats) uint64 { return s.BadToken }},
		{"unbound sender", stranger, media(a.flow.SSRC, []byte("x")), func(s Stats) uint64 { return s.Unbound }},
		{"spoofed SSRC", a.conn, media(b.flow.SSRC, []byte("x")), func(s Stats) uint64 { return s.Spoofed }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.r.Stats()
			_, err := tt.from.WriteToUDPAddrPort(tt.pkt, e.r.Addr())
			require.NoError(t, err)
			fence := a.media([]byte(tt.name))
			b.expect(fence)
			c.expect(fence)
			a.expectNothing()
			n, ok := pending(t, tt.from)
			assert.False(t, ok, "answered with %d bytes", n)
			after := e.r.Stats()
			assert.Equal(t, tt.counter(before)+1, tt.counter(after), "counter")
			assert.Equal(t, before.Dropped()+1, after.Dropped(), "dropped")
			assert.Equal(t, before.Forwarded+2, after.Forwarded, "only the fence was forwarded")
		})
	}
	// The stranger's bind with a's token did not move a's flow.
	a.keepalive()
}

// TestRateLimit: a flow gets Burst packets at once and Rate a second after that, by the
// relay's clock.
func TestRateLimit(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Rate, c.Burst = 10, 5 })
	a, b := e.join(1), e.join(1)
	a.bind() // takes one packet of a's burst
	b.bind()
	var sent [][]byte
	for i := range 6 {
		sent = append(sent, a.media(fmt.Appendf(nil, "frame %d", i)))
	}
	for _, pkt := range sent[:4] {
		b.expect(pkt)
	}
	// b's own burst is untouched. Its packet reaches a only after the relay has read a's last
	// two (one socket, read in order): then they have been counted, and they cannot take the
	// refill below.
	a.expect(b.media([]byte("fence")))
	assert.Equal(t, uint64(2), e.r.Stats().RateLimited)

	e.clk.Advance(200 * time.Millisecond) // two more packets
	for i := range 3 {
		sent = append(sent, a.media(fmt.Appendf(nil, "later %d", i)))
	}
	b.expect(sent[6])
	b.expect(sent[7])
	a.expect(b.media([]byte("fence 2"))) // "later 2" has been read
	assert.Equal(t, uint64(3), e.r.Stats().RateLimited)
}

// TestRepliesAreNoLarger: the relay never answers with more bytes than it got.
func TestRepliesAreNoLarger(t *testing.T) {
	e := newEnv(t, nil)
	a := e.join(1)
	bind := voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: a.flow.SSRC, Sequence: 4}, a.flow.Token[:])
	a.sendRaw(bind)
	reply := a.recvRaw()
	assert.Len(t, reply, voice.HeaderBytes)
	assert.Less(t, len(reply), len(bind))

	ka := voice.AppendPacket(nil, voice.Header{Type: voice.TypeKeepalive, SSRC: a.flow.SSRC, Sequence: 5, Timestamp: 77}, nil)
	a.sendRaw(ka)
	echo := a.recvRaw()
	want := bytes.Clone(ka)
	want[2] |= byte(voice.FlagReply)
	assert.Equal(t, want, echo)
}

// TestRejoinFromTheSameAddress: a client that leaves and joins again binds its new flow from
// the address its old one had.
func TestRejoinFromTheSameAddress(t *testing.T) {
	e := newEnv(t, nil)
	a, b, _ := e.trio()
	e.r.Remove(b.flow.Token)
	f, err := e.r.Open(1)
	require.NoError(t, err)
	b.flow = f
	b.bind()
	pkt := a.media([]byte("hello again"))
	b.expect(pkt)
}

func TestCloseEndsEverything(t *testing.T) {
	e := newEnv(t, nil)
	e.trio()
	require.NoError(t, e.r.Close())
	require.NoError(t, e.r.Close(), "a second Close")
	_, err := e.r.Open(1)
	assert.ErrorIs(t, err, ErrClosed)
}
