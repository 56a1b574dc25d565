package wsframe

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// clientFrames is the wire form of the frames as a client sends them: masked, unless raw.
func clientFrames(t *testing.T, raw bool, list ...ws.Frame) *bufio.Reader {
	t.Helper()
	var b bytes.Buffer
	for _, f := range list {
		if !raw {
			f = ws.MaskFrame(f)
		}
		require.NoError(t, ws.WriteFrame(&b, f))
	}
	return bufio.NewReader(&b)
}

// A message may come in fragments with control frames between them: pings are answered with a
// pong of their payload, pongs ignored, and the message arrives whole.
func TestReaderFragmentsAndControl(t *testing.T) {
	out := &writesConn{}
	r := NewReader(clientFrames(t, false,
		ws.NewFrame(ws.OpText, false, []byte(`{"op":`)),
		ws.NewPingFrame([]byte("are you there")),
		ws.NewFrame(ws.OpContinuation, false, []byte(`1,"d"`)),
		ws.NewPongFrame([]byte("unsolicited")),
		ws.NewFrame(ws.OpContinuation, true, []byte(`:null}`)),
		ws.NewTextFrame([]byte("next")),
	), &Conn{Conn: out}, time.Second)
	data, _, stopped := r.ReadMessage(4096)
	require.False(t, stopped)
	assert.Equal(t, `{"op":1,"d":null}`, string(data))
	require.Len(t, out.writes, 1, "one pong")
	assert.Equal(t, compile(t, ws.NewPongFrame([]byte("are you there"))), out.writes[0])
	data, _, stopped = r.ReadMessage(4)
	require.False(t, stopped)
	assert.Equal(t, "next", string(data), "a message of exactly the limit")
	_, stop, stopped := r.ReadMessage(4096)
	assert.True(t, stopped)
	assert.Equal(t, Gone, stop, "the end of the connection")
}

// The client's close frame is answered with one that echoes its code (1002 for a malformed
// one), and ends the session only for 1000 and 1001.
func TestReaderAnswersClose(t *testing.T) {
	cases := []struct {
		name  string
		body  []byte
		reply []byte
		end   bool
	}{
		{"normal", ws.NewCloseFrameBody(ws.StatusNormalClosure, "bye"), ws.NewCloseFrameBody(ws.StatusNormalClosure, ""), true},
		{"going away", ws.NewCloseFrameBody(ws.StatusGoingAway, ""), ws.NewCloseFrameBody(ws.StatusGoingAway, ""), true},
		{"resumable", ws.NewCloseFrameBody(4000, "later"), ws.NewCloseFrameBody(4000, ""), false},
		{"no status", nil, nil, false},
		{"one-byte body", []byte{3}, ws.NewCloseFrameBody(ws.StatusProtocolError, ""), false},
		{"undefined code", ws.NewCloseFrameBody(1004, ""), ws.NewCloseFrameBody(ws.StatusProtocolError, ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := &writesConn{}
			r := NewReader(clientFrames(t, false, ws.NewCloseFrame(tc.body)), &Conn{Conn: out}, time.Second)
			_, stop, stopped := r.ReadMessage(4096)
			require.True(t, stopped)
			assert.Equal(t, Close{End: tc.end}, stop, "no close frame of the server's own")
			require.Len(t, out.writes, 1)
			assert.Equal(t, compile(t, ws.NewCloseFrame(tc.reply)), out.writes[0])
		})
	}
}

// Frames that break RFC 6455 stop reading with 1002, a text message that is not UTF-8 with 1007,
// and binary or oversized messages with 4002, as the platform does. Drain then skips what is
// left of the refused frame and the frames after it until the client's close frame.
func TestReaderRefuses(t *testing.T) {
	const msg = `{"op":1,"d":null}`
	over := strings.Repeat(" ", 4096)
	cases := []struct {
		name   string
		code   int
		frames []ws.Frame
		raw    bool // send the frames unmasked
	}{
		{"unmasked frame", 1002, []ws.Frame{ws.NewTextFrame([]byte(msg))}, true},
		{"reserved bit", 1002, []ws.Frame{{Header: ws.Header{Fin: true, Rsv: ws.Rsv(true, false, false), OpCode: ws.OpText,
			Length: int64(len(msg))}, Payload: []byte(msg)}}, false},
		{"reserved opcode", 1002, []ws.Frame{ws.NewFrame(ws.OpCode(0x3), true, []byte("x"))}, false},
		{"continuation without a message", 1002, []ws.Frame{ws.NewFrame(ws.OpContinuation, true, []byte(msg))}, false},
		{"new message inside a fragmented one", 1002, []ws.Frame{
			ws.NewFrame(ws.OpText, false, []byte("{")), ws.NewTextFrame([]byte(msg))}, false},
		{"fragmented ping", 1002, []ws.Frame{ws.NewFrame(ws.OpPing, false, []byte("x"))}, false},
		{"ping over 125 bytes", 1002, []ws.Frame{ws.NewPingFrame(make([]byte, 126))}, false},
		{"invalid UTF-8", 1007, []ws.Frame{ws.NewTextFrame([]byte(`{"op":1,"d":"` + "\xff\xfe" + `"}`))}, false},
		{"a UTF-8 sequence broken across fragments", 1007, []ws.Frame{
			ws.NewFrame(ws.OpText, false, []byte(`{"op":1,"d":"`+"\xc3")), ws.NewFrame(ws.OpContinuation, true, []byte(`"}`))}, false},
		{"binary", gwire.CloseDecodeError, []ws.Frame{ws.NewBinaryFrame([]byte(msg))}, false},
		{"binary in fragments", gwire.CloseDecodeError, []ws.Frame{ws.NewFrame(ws.OpBinary, false, []byte("{"))}, false},
		{"oversized frame", gwire.CloseDecodeError, []ws.Frame{ws.NewTextFrame([]byte(msg + over))}, false},
		{"oversized in fragments", gwire.CloseDecodeError, []ws.Frame{
			ws.NewFrame(ws.OpText, false, []byte(over)), ws.NewFrame(ws.OpContinuation, true, []byte(msg))}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// After the refused frames: a message that crosses the server's close frame, then
			// the client's answer, then a frame that must stay unread.
			in := clientFrames(t, tc.raw, tc.frames...)
			tail := clientFrames(t, false, ws.NewTextFrame([]byte(msg)), ws.NewCloseFrame(nil),
				ws.NewTextFrame([]byte("after")))
			out := &writesConn{}
			r := NewReader(bufio.NewReader(io.MultiReader(in, tail)), &Conn{Conn: out}, time.Second)
			_, stop, stopped := r.ReadMessage(4096)
			require.True(t, stopped)
			assert.Equal(t, tc.code, stop.Code)
			assert.NotEmpty(t, stop.Reason)
			assert.False(t, stop.End)
			assert.Empty(t, out.writes, "the reader writes no close frame of its own")
			r.Drain()
			f, err := ws.ReadFrame(r.br)
			require.NoError(t, err, "Drain read past the client's close frame")
			assert.Equal(t, "after", string(ws.UnmaskFrame(f).Payload))
		})
	}

	// A frame that announces more than the limit is refused from its header, without its payload.
	in := clientFrames(t, false, ws.Frame{Header: ws.Header{Fin: true, OpCode: ws.OpText, Length: 1 << 40}})
	_, stop, stopped := NewReader(in, &Conn{Conn: &writesConn{}}, time.Second).ReadMessage(4096)
	require.True(t, stopped)
	assert.Equal(t, gwire.CloseDecodeError, stop.Code)
}

// MessageBuffered tells a whole unfragmented message from what is still arriving, whatever
// whole control frames come first.
func TestReaderMessageBuffered(t *testing.T) {
	frames := func(list ...ws.Frame) []byte {
		var b bytes.Buffer
		for _, f := range list {
			require.NoError(t, ws.WriteFrame(&b, ws.MaskFrame(f)))
		}
		return b.Bytes()
	}
	text := frames(ws.NewTextFrame([]byte(`{"op":100}`)))
	long := frames(ws.NewTextFrame(bytes.Repeat([]byte("x"), 300)))   // a 16-bit length
	huge := frames(ws.NewTextFrame(bytes.Repeat([]byte("x"), 70000))) // a 64-bit length
	ping := frames(ws.NewPingFrame([]byte("hi")))
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"nothing", nil, false},
		{"a whole message", text, true},
		{"a message cut short", text[:len(text)-1], false},
		{"a header cut short", long[:3], false},
		{"a 16-bit length, whole", long, true},
		{"a 16-bit length, cut short", long[:len(long)-1], false},
		{"a 64-bit length, whole", huge, true},
		{"a 64-bit length, cut short", huge[:len(huge)-1], false},
		{"a ping, then a whole message", append(append([]byte{}, ping...), text...), true},
		{"a ping alone", ping, false},
		{"a ping, then a message cut short", append(append([]byte{}, ping...), text[:4]...), false},
		{"a first fragment", frames(ws.NewFrame(ws.OpText, false, []byte("a"))), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReaderSize(bytes.NewReader(tc.in), 1<<17)
			_, _ = br.Peek(len(tc.in)) // all of it has arrived
			r := NewReader(br, &Conn{Conn: &writesConn{}}, time.Second)
			assert.Equal(t, tc.want, r.MessageBuffered())
			if tc.want {
				_, _, stopped := r.ReadMessage(1 << 17)
				assert.False(t, stopped, "ReadMessage returns it")
			}
		})
	}
}
