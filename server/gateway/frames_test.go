package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// rawClient speaks RFC 6455 frame by frame (github.com/gobwas/ws as the client), so that tests
// can send what a well-behaved client library would refuse to.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// dialRaw connects with ?v=10&encoding=json and reads gwire.Hello.
func (e *env) dialRaw() *rawClient {
	e.t.Helper()
	d := ws.Dialer{Timeout: wait}
	if e.tls {
		d.TLSConfig = e.srv.Client().Transport.(*http.Transport).TLSClientConfig
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	conn, br, _, err := d.Dial(ctx, e.wsURL("?v=10&encoding=json"))
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = conn.Close() })
	if br == nil { // the server sent nothing after the handshake yet
		br = bufio.NewReader(conn)
	}
	c := &rawClient{t: e.t, conn: conn, br: br}
	f := c.next()
	require.Equal(e.t, ws.OpText, f.Header.OpCode)
	require.Contains(e.t, string(f.Payload), `"op":10`)
	return c
}

// write sends f as it is (masked only if the test masked it).
func (c *rawClient) write(f ws.Frame) {
	c.t.Helper()
	require.NoError(c.t, ws.WriteFrame(c.conn, f))
}

// send sends f masked, as a client must.
func (c *rawClient) send(f ws.Frame) { c.t.Helper(); c.write(ws.MaskFrame(f)) }

// next reads the next frame within the test's wait.
func (c *rawClient) next() ws.Frame {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(wait)))
	f, err := ws.ReadFrame(c.br)
	require.NoError(c.t, err)
	require.False(c.t, f.Header.Masked, "server frames are not masked")
	return f
}

// expectClose reads until the server's close frame and checks its code, answers it, and checks
// that the server then closes the TCP connection.
func (c *rawClient) expectClose(code int) {
	c.t.Helper()
	for {
		f := c.next()
		if f.Header.OpCode != ws.OpClose {
			continue
		}
		got, _ := ws.ParseCloseFrameData(f.Payload)
		require.Equal(c.t, code, int(got), "close code")
		// The answer, unless the server's frame answered the client's close (it may have cut
		// the connection already).
		_ = ws.WriteFrame(c.conn, ws.MaskFrame(ws.NewCloseFrame(f.Payload[:2])))
		c.expectEOF()
		return
	}
}

// expectEOF checks that the server closes the TCP connection and sends nothing more.
func (c *rawClient) expectEOF() { c.t.Helper(); c.expectEOFWithin(wait) }

// expectEOFWithin is expectEOF waiting at most d.
func (c *rawClient) expectEOFWithin(d time.Duration) {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(d)))
	_, err := c.br.ReadByte()
	require.Error(c.t, err)
	var ne net.Error
	require.False(c.t, errors.As(err, &ne) && ne.Timeout(), "the server kept the connection open")
}

const heartbeat = `{"op":1,"d":null}`

// The client's frames are read as RFC 6455 has them: a message in fragments with a ping between
// them, pings answered with their payload, pongs ignored, a message of exactly the limit.
func TestFramesFragmentsAndControl(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[tls], func(t *testing.T) {
			e := newEnv(t, nil)
			if tls {
				e = newTLSEnv(t, nil)
			}
			c := e.dialRaw()
			c.send(ws.NewFrame(ws.OpText, false, []byte(heartbeat[:5])))
			c.send(ws.NewPingFrame([]byte("are you there")))
			c.send(ws.NewFrame(ws.OpContinuation, false, []byte(heartbeat[5:9])))
			c.send(ws.NewPongFrame([]byte("unsolicited")))
			c.send(ws.NewFrame(ws.OpContinuation, true, []byte(heartbeat[9:])))
			pong := c.next()
			assert.Equal(t, ws.OpPong, pong.Header.OpCode)
			assert.Equal(t, "are you there", string(pong.Payload))
			ack := c.next()
			assert.JSONEq(t, `{"op":11,"d":null,"s":null,"t":null}`, string(ack.Payload))

			// Exactly MaxPayloadBytes, in two fragments, is served.
			full := heartbeat[:len(heartbeat)-1] + strings.Repeat(" ", DefaultMaxPayloadBytes-len(heartbeat)) + "}"
			c.send(ws.NewFrame(ws.OpText, false, []byte(full[:100])))
			c.send(ws.NewFrame(ws.OpContinuation, true, []byte(full[100:])))
			assert.Contains(t, string(c.next().Payload), `"op":11`)

			// A client's close 1000 is answered with 1000, the server closes the TCP connection,
			// and the session ends.
			c.send(ws.NewTextFrame(mustJSON(t, map[string]any{"op": gwire.OpIdentify, "d": identifyData("user-1")})))
			var ready gwire.Payload
			require.NoError(t, json.Unmarshal(c.next().Payload, &ready))
			require.Equal(t, gwire.EventReady, deref(ready.T))
			c.send(ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusNormalClosure, "bye")))
			f := c.next()
			require.Equal(t, ws.OpClose, f.Header.OpCode)
			code, _ := ws.ParseCloseFrameData(f.Payload)
			assert.Equal(t, ws.StatusNormalClosure, code, "the close code is echoed")
			c.expectEOF()
			e.waitOffline(1)
			assert.Zero(t, e.numSessions(), "1000 ends the session")
		})
	}
}

// The reader's refusals (package wsframe: 1002 for a frame that breaks RFC 6455, 1007 for a text
// message that is not UTF-8, 4002 for binary or oversized messages, as the platform does) close
// the connection with their code, and each closing handshake completes.
func TestFramesRefused(t *testing.T) {
	cases := []struct {
		name   string
		code   int
		frames []ws.Frame // masked before sending unless unmasked
		raw    bool       // send the frames as they are
	}{
		{"unmasked frame", 1002, []ws.Frame{ws.NewTextFrame([]byte(heartbeat))}, true},
		{"close with an undefined code", 1002, []ws.Frame{ws.NewCloseFrame(ws.NewCloseFrameBody(1004, ""))}, false},
		{"invalid UTF-8", 1007, []ws.Frame{ws.NewTextFrame([]byte(`{"op":1,"d":"` + "\xff\xfe" + `"}`))}, false},
		{"binary", gwire.CloseDecodeError, []ws.Frame{ws.NewBinaryFrame([]byte(heartbeat))}, false},
		{"oversized in fragments", gwire.CloseDecodeError, []ws.Frame{
			ws.NewFrame(ws.OpText, false, []byte(strings.Repeat(" ", DefaultMaxPayloadBytes))),
			ws.NewFrame(ws.OpContinuation, true, []byte(heartbeat))}, false},
	}
	e := newEnv(t, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dialRaw()
			c.t = t
			for _, f := range tc.frames {
				if tc.raw {
					c.write(f)
				} else {
					c.send(f)
				}
			}
			c.expectClose(tc.code)
		})
	}

	// A frame that announces more than the limit is refused from its header: the server does not
	// wait for its payload.
	c := e.dialRaw()
	c.write(ws.MaskFrame(ws.Frame{Header: ws.Header{Fin: true, OpCode: ws.OpText, Length: 1 << 40}}))
	c.expectClose(gwire.CloseDecodeError)
}

// The server's close handshake: after its close frame the server sends nothing more, drops the
// client's messages that cross it, and closes the TCP connection once the client answers, or
// after closeTimeout when it does not.
func TestFramesServerClose(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dialRaw()
	c.send(ws.NewTextFrame([]byte(`{"op":42}`)))
	f := c.next()
	require.Equal(t, ws.OpClose, f.Header.OpCode)
	code, reason := ws.ParseCloseFrameData(f.Payload)
	assert.Equal(t, gwire.CloseUnknownOpcode, int(code))
	assert.Equal(t, "unknown opcode", reason)
	c.send(ws.NewTextFrame([]byte(heartbeat))) // crosses the close frame: dropped, not answered
	c.send(ws.NewPingFrame(nil))
	c.send(ws.NewCloseFrame(f.Payload[:2]))
	c.expectEOF()

	// A client that never answers is cut after closeTimeout.
	other := e.dialRaw()
	mute := e.dialRaw()
	// Timed from before the frame that makes the server close: its closeTimeout starts after
	// that, and before the close frame reaches this client (late, on a loaded machine).
	start := time.Now()
	mute.send(ws.NewTextFrame([]byte(`{"op":42}`)))
	require.Equal(t, ws.OpClose, mute.next().Header.OpCode)
	// It is cut, and not before closeTimeout: the server waited for the answer. (No upper bound
	// but a generous deadline: on a loaded machine the cut may come late, which is harmless.)
	mute.expectEOFWithin(closeTimeout + 4*wait)
	assert.GreaterOrEqual(t, time.Since(start), closeTimeout)

	// Meanwhile the HTTP server's read and idle timeouts (httpTimeout) have passed: they do not
	// bound a WebSocket.
	require.Greater(t, closeTimeout, httpTimeout)
	other.send(ws.NewTextFrame([]byte(heartbeat)))
	assert.Contains(t, string(other.next().Payload), `"op":11`)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
