package gateway

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkConn is an upgraded connection whose reads return stream chunk bytes at a time (then
// io.EOF), and whose writes are kept: a wsConn's reader sees frames arrive together (a large
// chunk: wsConn.buffered reads them in place) or one byte per read (always readMessage).
type chunkConn struct {
	stream []byte
	chunk  int
	mu     sync.Mutex
	wrote  bytes.Buffer
	closed bool
}

func (c *chunkConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	if len(c.stream) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.chunk)], c.stream)
	c.stream = c.stream[n:]
	return n, nil
}

func (c *chunkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wrote.Write(p)
}

func (c *chunkConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// readAll reads stream's messages with a wsConn whose connection returns chunk bytes per read,
// until the first error, and returns the messages, copied, the error's text and what the client
// wrote (pongs, a close).
func readAll(stream []byte, chunk int, limit int64) (msgs []string, errText string, wrote []byte) {
	conn := &chunkConn{stream: stream, chunk: chunk}
	c := newWSConn(conn, limit)
	var buf []byte
	for len(msgs) < 10000 {
		m, inBuf, err := c.ReadMessage(buf)
		if err != nil {
			errText = err.Error()
			break
		}
		if inBuf {
			buf = m
		}
		msgs = append(msgs, string(m))
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	return msgs, errText, bytes.Clone(conn.wrote.Bytes())
}

// serverFrame appends one frame as a server would write it (unmasked unless masked is set).
func serverFrame(b []byte, op ws.OpCode, fin bool, payload string, masked bool) []byte {
	f := ws.NewFrame(op, fin, []byte(payload))
	if masked {
		f = ws.MaskFrame(f)
	}
	var w bytes.Buffer
	if err := ws.WriteFrame(&w, f); err != nil {
		panic(err)
	}
	return append(b, w.Bytes()...)
}

// The messages a client reads, and how a stream it cannot read fails, are the same whether its
// frames arrive together, read in place from the reader's buffer (wsConn.buffered), or one byte
// per read, each copied (readMessage): every check of a frame is made on both paths.
func TestReadMessageInPlaceAsCopied(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := map[string][]byte{
		"text and binary, 7- and 16-bit lengths": serverFrame(serverFrame(serverFrame(serverFrame(nil,
			ws.OpText, true, `{"op":0}`, false), ws.OpBinary, true, long, false), ws.OpText, true, "", false), ws.OpText, true, "end", false),
		"a ping between messages": serverFrame(serverFrame(serverFrame(nil,
			ws.OpText, true, "a", false), ws.OpPing, true, "p", false), ws.OpText, true, "b", false),
		"a fragmented message": serverFrame(serverFrame(serverFrame(nil,
			ws.OpText, false, "frag", false), ws.OpContinuation, true, "ment", false), ws.OpText, true, "after", false),
		"a masked frame":            serverFrame(serverFrame(nil, ws.OpText, true, "a", false), ws.OpText, true, "masked", true),
		"a reserved bit":            append(serverFrame(nil, ws.OpText, true, "a", false), 0x80|0x40|0x1, 1, 'x'),
		"a reserved opcode":         append(serverFrame(nil, ws.OpText, true, "a", false), 0x80|0x3, 1, 'x'),
		"a continuation unexpected": serverFrame(serverFrame(nil, ws.OpText, true, "a", false), ws.OpContinuation, true, "b", false),
		"a message over the limit":  serverFrame(serverFrame(nil, ws.OpText, true, "a", false), ws.OpText, true, strings.Repeat("y", 1200), false),
		"a 64-bit length":           serverFrame(serverFrame(nil, ws.OpText, true, "a", false), ws.OpText, true, strings.Repeat("z", 70000), false),
		"a truncated frame":         serverFrame(nil, ws.OpText, true, long, false)[:200],
		"a truncated header":        append(serverFrame(nil, ws.OpText, true, "a", false), 0x81, 126, 1),
		"a close":                   serverFrame(serverFrame(nil, ws.OpText, true, "a", false), ws.OpClose, true, "\x03\xe8bye", false),
	}
	for name, stream := range cases {
		t.Run(name, func(t *testing.T) {
			limit := int64(1000)
			if name == "a 64-bit length" {
				limit = 1 << 20
			}
			wantMsgs, wantErr, wantWrote := readAll(stream, 1, limit)
			gotMsgs, gotErr, gotWrote := readAll(stream, len(stream), limit)
			assert.Equal(t, wantMsgs, gotMsgs)
			assert.Equal(t, wantErr, gotErr)
			assert.Equal(t, len(wantWrote), len(gotWrote), "the same frames written (their masks differ)")
			assert.NotEmpty(t, wantErr, "every stream ends in an error")
		})
	}
}

// A message read in place is capped at its end: appending to it (as a handler may, to data it
// was told to copy) does not write over the frames after it.
func TestReadMessageInPlaceCapped(t *testing.T) {
	stream := serverFrame(serverFrame(nil, ws.OpText, true, "first", false), ws.OpText, true, "second", false)
	c := newWSConn(&chunkConn{stream: stream, chunk: len(stream)}, 1000)
	// The first frame fills the reader's buffer through readMessage; the second is then in it.
	first, _, err := c.ReadMessage(nil)
	require.NoError(t, err)
	require.Equal(t, "first", string(first))
	second, inBuf, err := c.ReadMessage(nil)
	require.NoError(t, err)
	require.False(t, inBuf, "read in place")
	require.Equal(t, "second", string(second))
	third := serverFrame(nil, ws.OpText, true, "third", false)
	c2 := newWSConn(&chunkConn{stream: append(bytes.Clone(stream), third...), chunk: 1 << 20}, 1000)
	for _, want := range []string{"first", "second", "third"} {
		m, _, err := c2.ReadMessage(nil)
		require.NoError(t, err)
		_ = append(m, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"...)
		require.Equal(t, want, string(m))
	}
	_, _, err = c2.ReadMessage(nil)
	require.True(t, errors.Is(err, io.EOF), "the stream's end: %v", err)
}

// FuzzReadMessage reads any stream of bytes both ways (TestReadMessageInPlaceAsCopied): the same
// messages and the same error, and never a crash.
func FuzzReadMessage(f *testing.F) {
	f.Add(serverFrame(serverFrame(nil, ws.OpText, true, `{"op":0}`, false), ws.OpText, true, "b", false), uint8(7))
	f.Add(serverFrame(serverFrame(nil, ws.OpText, false, "frag", false), ws.OpContinuation, true, "ment", false), uint8(3))
	f.Add(serverFrame(serverFrame(nil, ws.OpText, true, "a", false), ws.OpText, true, strings.Repeat("y", 300), true), uint8(200))
	f.Add([]byte{0x81, 126, 0, 5, 'h', 'e', 'l', 'l', 'o', 0x89, 0}, uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		wantMsgs, wantErr, _ := readAll(stream, 1, 512)
		for _, n := range []int{int(chunk) + 2, len(stream) + 1} {
			gotMsgs, gotErr, _ := readAll(stream, n, 512)
			require.Equal(t, wantMsgs, gotMsgs)
			require.Equal(t, wantErr, gotErr)
		}
	})
}
