package wsframe

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A held Conn writes nothing until Release, then every frame it kept in one write; outside
// hold each frame is written at once. After the close frame nothing more is written.
func TestBatchConnWritesHeldFramesTogether(t *testing.T) {
	wc := &writesConn{}
	bc := &Conn{Conn: wc}
	bc.Hold(time.Second)
	for _, p := range []string{"one", "two", "three"} {
		require.NoError(t, bc.WriteFrame(ws.OpText, []byte(p), time.Second))
	}
	e := Dispatch{Seq: 1, Event: []byte(`"TEST"`), Data: []byte(`{}`)}
	require.NoError(t, bc.WriteDispatch(e))
	assert.Empty(t, wc.writes, "a held frame reached the socket")
	require.NoError(t, bc.Release())
	want := append(textFrames("one", "two", "three"), frames(e)...)
	if assert.Len(t, wc.writes, 1) {
		assert.Equal(t, want, wc.writes[0], "the held frames, in order, in one write")
	}

	require.NoError(t, bc.WriteFrame(ws.OpText, []byte("four"), time.Second))
	require.NoError(t, bc.WriteFrame(ws.OpPong, []byte("p"), time.Second))
	require.Len(t, wc.writes, 3, "outside hold each frame is written at once")
	assert.Equal(t, textFrames("four"), wc.writes[1])
	assert.Equal(t, compile(t, ws.NewPongFrame([]byte("p"))), wc.writes[2])

	assert.Error(t, bc.WriteDispatch(e), "WriteDispatch outside hold")
	require.NoError(t, bc.WriteFrame(ws.OpClose, ws.NewCloseFrameBody(4002, "x"), time.Second))
	assert.Equal(t, compile(t, ws.NewCloseFrame(ws.NewCloseFrameBody(4002, "x"))), wc.writes[3])
	assert.ErrorIs(t, bc.WriteFrame(ws.OpText, []byte("late"), time.Second), ErrCloseSent)
	_, err := bc.WriteNow([]Dispatch{e})
	assert.ErrorIs(t, err, ErrCloseSent)
	bc.Hold(time.Second)
	assert.ErrorIs(t, bc.WriteDispatch(e), ErrCloseSent)
	require.NoError(t, bc.Release())
	assert.Len(t, wc.writes, 4, "nothing after the close frame")

	failing := &Conn{Conn: &writesConn{fail: true}}
	failing.Hold(time.Second)
	require.NoError(t, failing.WriteFrame(ws.OpText, []byte("lost"), time.Second))
	assert.Error(t, failing.Release(), "Release to a closed peer must fail")
	assert.False(t, failing.Keeps())
}

// WriteNow writes what the socket takes without waiting; when the peer does not read, the rest
// is kept and goes first with the loop's next write, so the peer reads every frame once, in
// order. A held connection, or one that keeps bytes, writes nothing now and keeps the frames
// after what it kept.
func TestBatchConnWriteNowKeepsWhatTheSocketRefuses(t *testing.T) {
	server, peer := smallBufferPair(t)
	bc := &Conn{Conn: server}

	var list []Dispatch
	for i := range 100 { // 2 MB: more than the buffers hold while the peer does not read
		list = append(list, Dispatch{Seq: int64(i + 1), Event: []byte(`"TEST"`), Data: []byte(`{"s":"` + strings.Repeat("x", 20000) + `"}`)})
	}
	kept, err := bc.WriteNow(list)
	require.NoError(t, err)
	require.True(t, kept, "WriteNow to a full socket keeps the rest")
	require.True(t, bc.Keeps())
	// While bytes are kept, or the connection is held, WriteNow keeps its frames after them.
	again := Dispatch{Seq: 101, Event: []byte(`"TEST"`), Data: []byte(`{"again":1}`)}
	kept, err = bc.WriteNow([]Dispatch{again})
	require.NoError(t, err)
	require.True(t, kept, "WriteNow while bytes are kept leaves it to the loop")
	held := Dispatch{Seq: 102, Event: []byte(`"TEST"`), Data: []byte(`{"held":1}`)}
	last := Dispatch{Seq: 103, Event: []byte(`"TEST"`), Data: []byte(`{}`)}
	want := frames(append(list, again, held, last)...)
	got := readBytes(peer, len(want))
	bc.Hold(10 * time.Second)
	kept, _ = bc.WriteNow([]Dispatch{held})
	require.True(t, kept, "WriteNow while held leaves it to the loop")
	require.NoError(t, bc.WriteDispatch(last))
	require.NoError(t, bc.Release())
	assert.True(t, bytes.Equal(<-got, want), "the peer reads every frame once, in order")
	assert.False(t, bc.Keeps(), "Release left bytes kept")
	// A connection with room writes everything now.
	small := frames(last)
	got2 := readBytes(peer, len(small))
	kept, err = bc.WriteNow([]Dispatch{last})
	require.NoError(t, err)
	assert.False(t, kept, "WriteNow with room")
	assert.Equal(t, small, <-got2)
}

// A held write that the socket does not take at once waits for the peer no longer than the
// hold's timeout: the rest of the write fails then, and nothing stays kept.
func TestBatchConnHeldWriteKeepsItsDeadline(t *testing.T) {
	server, _ := smallBufferPair(t) // the peer never reads: the socket's buffers fill up
	bc := &Conn{Conn: server}

	bc.Hold(50 * time.Millisecond)
	var err error
	for i := range 100 { // 2 MB: more than the buffers hold
		e := Dispatch{Seq: int64(i + 1), Event: []byte(`"TEST"`), Data: []byte(`{"s":"` + strings.Repeat("x", 20000) + `"}`)}
		if err = bc.WriteDispatch(e); err != nil {
			break
		}
	}
	if err == nil {
		err = bc.Release()
	}
	var ne net.Error
	require.ErrorAs(t, err, &ne, "a write to a peer that does not read")
	assert.True(t, ne.Timeout(), "the write ends at the hold's deadline: %v", err)
	assert.False(t, bc.Keeps())
}

// A connection whose socket cannot be written without waiting (TLS: crypto/tls writes the
// records) keeps every frame of WriteNow for the loop; none is lost.
func TestBatchConnWriteNowOverTLSKeepsEverything(t *testing.T) {
	a, b := net.Pipe() // not a syscall.Conn, as a *tls.Conn is not
	defer a.Close()
	defer b.Close()
	bc := &Conn{Conn: a}
	require.False(t, bc.CanWriteNow(), "a pipe reports it can be written at once")
	e := Dispatch{Seq: 1, Event: []byte(`"TEST"`), Data: []byte(`{}`)}
	want := frames(e)
	kept, err := bc.WriteNow([]Dispatch{e})
	require.NoError(t, err)
	require.True(t, kept)
	require.True(t, bc.Keeps())
	got := readBytes(b, len(want))
	bc.Hold(time.Second)
	require.NoError(t, bc.Release())
	assert.Equal(t, want, <-got, "the loop's write")
}

// smallBufferPair returns the two ends of a TCP connection on the loopback, the server's with
// a small send buffer; both are closed when the test ends.
func smallBufferPair(t *testing.T) (server, peer net.Conn) {
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
	peer, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { peer.Close() })
	server = <-accepted
	require.NotNil(t, server, "no connection accepted")
	t.Cleanup(func() { server.Close() })
	require.NoError(t, server.(*net.TCPConn).SetWriteBuffer(4096))
	return server, peer
}

// frames is the wire form of the dispatches' dispatch frames, encoded by ws.WriteFrame.
func frames(list ...Dispatch) []byte {
	var b bytes.Buffer
	for _, e := range list {
		_ = ws.WriteFrame(&b, ws.NewTextFrame(e.Frame()))
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
