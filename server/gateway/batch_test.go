package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// writesConn is a net.Conn that records each Write call, so that tests see how many system
// calls the frames took.
type writesConn struct {
	net.Conn // nil: only Write and the deadlines are used
	writes   [][]byte
	fail     bool
}

func (c *writesConn) Write(p []byte) (int, error) {
	if c.fail {
		return 0, net.ErrClosed
	}
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *writesConn) SetWriteDeadline(time.Time) error { return nil }

// A held batchConn writes nothing until release, then every frame it kept in one write; outside
// hold each frame is written at once. After the close frame nothing more is written.
func TestBatchConnWritesHeldFramesTogether(t *testing.T) {
	wc := &writesConn{}
	bc := &batchConn{Conn: wc}
	require.NoError(t, bc.hold(time.Second))
	for _, p := range []string{"one", "two", "three"} {
		require.NoError(t, bc.writeFrame(ws.OpText, []byte(p), time.Second))
	}
	e := entry{seq: 1, event: []byte(`"TEST"`), d: []byte(`{}`)}
	require.NoError(t, bc.writeDispatch(e))
	assert.Empty(t, wc.writes, "a held frame reached the socket")
	require.NoError(t, bc.release())
	want := append(textFrames("one", "two", "three"), frames(e)...)
	if assert.Len(t, wc.writes, 1) {
		assert.Equal(t, want, wc.writes[0], "the held frames, in order, in one write")
	}

	require.NoError(t, bc.writeFrame(ws.OpText, []byte("four"), time.Second))
	require.NoError(t, bc.writeFrame(ws.OpPong, []byte("p"), time.Second))
	require.Len(t, wc.writes, 3, "outside hold each frame is written at once")
	assert.Equal(t, textFrames("four"), wc.writes[1])
	assert.Equal(t, compile(t, ws.NewPongFrame([]byte("p"))), wc.writes[2])

	assert.Error(t, bc.writeDispatch(e), "writeDispatch outside hold")
	require.NoError(t, bc.writeFrame(ws.OpClose, ws.NewCloseFrameBody(4002, "x"), time.Second))
	assert.Equal(t, compile(t, ws.NewCloseFrame(ws.NewCloseFrameBody(4002, "x"))), wc.writes[3])
	assert.ErrorIs(t, bc.writeFrame(ws.OpText, []byte("late"), time.Second), errCloseSent)
	_, err := bc.writeNow([]entry{e})
	assert.ErrorIs(t, err, errCloseSent)
	require.NoError(t, bc.hold(time.Second))
	assert.ErrorIs(t, bc.writeDispatch(e), errCloseSent)
	require.NoError(t, bc.release())
	assert.Len(t, wc.writes, 4, "nothing after the close frame")

	failing := &batchConn{Conn: &writesConn{fail: true}}
	require.NoError(t, failing.hold(time.Second))
	require.NoError(t, failing.writeFrame(ws.OpText, []byte("lost"), time.Second))
	assert.Error(t, failing.release(), "release to a closed peer must fail")
	assert.False(t, failing.keeps())
}

// Dispatches leave as frames the gateway writes itself (ws.WriteHeaderBuffer, appendDispatch): every length encoding
// of RFC 6455 (7-bit, 16-bit, 64-bit) reaches a standard client intact.
func TestDispatchFrameLengths(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	seq := int64(1)
	for _, n := range []int{0, 100, 125 - 40, 126 - 40, 200, 65535 - 40, 65536 - 40, 70000, 200000} {
		s := strings.Repeat("x", n)
		e.hub.Dispatch(1, "TEST_EVENT", map[string]string{"s": s})
		seq++
		p := c.expectDispatch("TEST_EVENT", seq)
		var got map[string]string
		require.NoError(t, json.Unmarshal(p.D, &got))
		require.Equal(t, s, got["s"], "a payload of %d bytes", n)
	}
	c.heartbeat()
}

// writeNow writes what the socket takes without waiting; when the peer does not read, the rest
// is kept and goes first with the loop's next write, so the peer reads every frame once, in
// order. A held connection, or one that keeps bytes, writes nothing now and keeps the frames
// after what it kept.
func TestBatchConnWriteNowKeepsWhatTheSocketRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer peer.Close()
	server := <-accepted
	require.NotNil(t, server, "no connection accepted")
	defer server.Close()
	server.(*net.TCPConn).SetWriteBuffer(4096)
	bc := &batchConn{Conn: server}

	var list []entry
	for i := range 100 { // 2 MB: more than the buffers hold while the peer does not read
		list = append(list, entry{seq: int64(i + 1), event: []byte(`"TEST"`), d: []byte(`{"s":"` + strings.Repeat("x", 20000) + `"}`)})
	}
	kept, err := bc.writeNow(list)
	require.NoError(t, err)
	require.True(t, kept, "writeNow to a full socket keeps the rest")
	require.True(t, bc.keeps())
	// While bytes are kept, or the connection is held, writeNow keeps its frames after them.
	again := entry{seq: 101, event: []byte(`"TEST"`), d: []byte(`{"again":1}`)}
	kept, err = bc.writeNow([]entry{again})
	require.NoError(t, err)
	require.True(t, kept, "writeNow while bytes are kept leaves it to the loop")
	held := entry{seq: 102, event: []byte(`"TEST"`), d: []byte(`{"held":1}`)}
	last := entry{seq: 103, event: []byte(`"TEST"`), d: []byte(`{}`)}
	want := frames(append(list, again, held, last)...)
	got := readBytes(peer, len(want))
	require.NoError(t, bc.hold(10*time.Second))
	kept, _ = bc.writeNow([]entry{held})
	require.True(t, kept, "writeNow while held leaves it to the loop")
	require.NoError(t, bc.writeDispatch(last))
	require.NoError(t, bc.release())
	assert.True(t, bytes.Equal(<-got, want), "the peer reads every frame once, in order")
	assert.False(t, bc.keeps(), "release left bytes kept")
	// A connection with room writes everything now.
	small := frames(last)
	got2 := readBytes(peer, len(small))
	kept, err = bc.writeNow([]entry{last})
	require.NoError(t, err)
	assert.False(t, kept, "writeNow with room")
	assert.Equal(t, small, <-got2)
}

// Data that encodes itself (wire.LobbyMessage.AppendJSON) is sent as its encoding, which is
// encoding/json's.
func TestDispatchOfSelfEncodingData(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	m := wire.LobbyMessage{ID: 5, Content: `<"hi">`, Metadata: map[string]string{"b": "2", "a": "1"}}
	e.hub.Dispatch(1, "TEST_EVENT", m)
	p := c.expectDispatch("TEST_EVENT", 2)
	want, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(p.D))
}

// A connection whose socket cannot be written without waiting (TLS: crypto/tls writes the
// records) keeps every frame of writeNow for the loop; none is lost.
func TestBatchConnWriteNowOverTLSKeepsEverything(t *testing.T) {
	a, b := net.Pipe() // not a syscall.Conn, as a *tls.Conn is not
	defer a.Close()
	defer b.Close()
	bc := &batchConn{Conn: a}
	require.False(t, bc.canWriteNow(), "a pipe reports it can be written at once")
	e := entry{seq: 1, event: []byte(`"TEST"`), d: []byte(`{}`)}
	want := frames(e)
	kept, err := bc.writeNow([]entry{e})
	require.NoError(t, err)
	require.True(t, kept)
	require.True(t, bc.keeps())
	got := readBytes(b, len(want))
	require.NoError(t, bc.hold(time.Second))
	require.NoError(t, bc.release())
	assert.Equal(t, want, <-got, "the loop's write")
}

// Over TLS the dispatcher cannot write itself (crypto/tls writes the records): every dispatch
// still arrives once and in order, written by the connection's loop.
func TestDispatchesOverTLS(t *testing.T) {
	e := newTLSEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	check := func(i int) {
		t.Helper()
		p := c.expectDispatch("TEST_EVENT", int64(i+2))
		require.Equal(t, strconv.Itoa(i), string(p.D), "dispatch %d", i)
	}
	for i := range 10 { // one at a time, each while the connection's loop is idle
		e.hub.Dispatch(1, "TEST_EVENT", i)
		check(i)
	}
	for i := 10; i < 50; i++ { // and a burst
		e.hub.Dispatch(1, "TEST_EVENT", i)
	}
	for i := 10; i < 50; i++ {
		check(i)
	}
}

// frames is the wire form of the entries' dispatch frames, encoded by ws.WriteFrame.
func frames(list ...entry) []byte {
	var b bytes.Buffer
	for _, e := range list {
		_ = ws.WriteFrame(&b, ws.NewTextFrame(e.frame()))
	}
	return b.Bytes()
}

// textFrames is the wire form of text frames with the payloads, encoded by ws.WriteFrame.
func textFrames(payloads ...string) []byte {
	var b bytes.Buffer
	for _, p := range payloads {
		_ = ws.WriteFrame(&b, ws.NewTextFrame([]byte(p)))
	}
	return b.Bytes()
}

// compile is the wire form of f.
func compile(t *testing.T, f ws.Frame) []byte {
	t.Helper()
	b, err := ws.CompileFrame(f)
	require.NoError(t, err)
	return b
}

// readBytes reads n bytes from r in a goroutine and sends them, or nil when reading fails.
func readBytes(r io.Reader, n int) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			b = nil
		}
		got <- b
	}()
	return got
}

// On a cluster a session's sequence numbers come from the bus and have gaps: after finds the
// dispatches above any number, and tells when the buffer dropped some the client missed.
func TestAfterWithSparseSequenceNumbers(t *testing.T) {
	s := &session{}
	for _, m := range []int64{3, 4, 9, 12, 13} {
		s.pushSeq(m<<busShift, []byte(`"E"`), []byte("1"), 3)
	}
	got, ok := s.after(9 << busShift)
	require.True(t, ok)
	require.Len(t, got, 2)
	assert.Equal(t, int64(12)<<busShift, got[0].seq)
	got, ok = s.after(10 << busShift) // a number between two held ones
	require.True(t, ok)
	assert.Len(t, got, 2)
	got, ok = s.after(4<<busShift + 1) // a local push after 4: 9 is the next
	require.True(t, ok)
	assert.Len(t, got, 3)
	_, ok = s.after(3 << busShift) // 4 was dropped
	assert.False(t, ok)
	e := s.push([]byte(`"L"`), []byte("1"), 3) // a push of the node's own follows the last
	assert.Equal(t, int64(13)<<busShift+1, e.seq)
}
