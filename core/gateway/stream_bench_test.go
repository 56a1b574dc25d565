package gateway

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"sdkpp/core/messages"
	"sdkpp/internal/jsonscan"
	"sdkpp/wire"

	"github.com/stretchr/testify/require"
)

// BenchmarkReceiveStream measures what a lobby member's Client spends on each lobby message,
// from its WebSocket frame to OnDispatch, without a socket: the handshake's HTTP client answers
// with a connection whose reads replay a recorded stream (Hello, READY, then LOBBY_MESSAGE_CREATE
// frames as the service writes them, their sequence numbers growing), so the figure has no
// system call, no wake of the reader and no other process in it, and is steady on a shared
// machine. Everything else is the real client: the session's loop, wsConn.ReadMessage over its
// bufio.Reader (gobwas/ws's header reads), the envelope's decode with Config.DataChecked, the
// sequence check and the dispatch. The stream hands the reader readBufferSize bytes per read, as
// a socket does under fan-out.
//
// OnDispatch is, in "check", what the realtime bench's members do (the data checked as
// messages.Decode checks it, then counted); in "decode", core's decode of the message
// (messages.Decode), without the message cache and callback queue that core's
// BenchmarkLobbyMessageDispatch times.
func BenchmarkReceiveStream(b *testing.B) {
	for _, tc := range []struct {
		name   string
		handle func(event string, data json.RawMessage) bool
	}{
		{"check", func(event string, data json.RawMessage) bool {
			return event == wire.EventLobbyMessageCreate && jsonscan.Valid(data)
		}},
		{"decode", func(event string, data json.RawMessage) bool {
			ev, err := messages.Decode(event, data)
			return err == nil && ev.Created
		}},
	} {
		b.Run(tc.name, func(b *testing.B) { benchReceiveStream(b, tc.handle) })
	}
}

func benchReceiveStream(b *testing.B, handle func(event string, data json.RawMessage) bool) {
	frames, seqAt := streamFrames(1024)
	stream := newReplay(b.N, frames, seqAt)
	var got, bad atomic.Int64
	want := int64(b.N)
	done := make(chan struct{})
	start := make(chan struct{})
	gw := startReady(b, Config{
		URL:        "ws://replay.invalid/gateway",
		HTTPClient: &http.Client{Transport: stream},
		// As core's Client and the realtime bench's members: a message's data is left to
		// OnDispatch's check.
		DataChecked: messages.Checks,
		OnDispatch: func(event string, data json.RawMessage) {
			if event == "READY" {
				return
			}
			<-start // the timer starts once the client is Ready
			if !handle(event, data) {
				bad.Add(1)
			}
			if got.Add(1) == want {
				close(done)
			}
		},
	})
	defer func() {
		gw.Close()
		require.Zero(b, bad.Load(), "every message checked and decoded")
	}()
	b.ReportAllocs()
	b.SetBytes(int64(len(stream.frames) / stream.n)) // a frame's
	b.ResetTimer()
	close(start)
	<-done
	b.StopTimer()
}

// streamFrames returns n LOBBY_MESSAGE_CREATE frames (benchFrame, unmasked as a server sends
// them, their message ids and contents differing) and where each frame's sequence number's
// digits are: 13 of them, so that the frames keep their length as the numbers grow.
func streamFrames(n int) (frames []byte, seqAt []int) {
	base := benchFrame()
	for i := 0; i < n; i++ {
		p := bytes.Replace(base, []byte(`"s":1234`), []byte(`"s":1000000000000`), 1)
		p = bytes.Replace(p, []byte("latency sdkpp 123"), []byte("fanout "+strconv.Itoa(100000+i)), 1)
		seqAt = append(seqAt, len(frames)+frameHeaderLen(p)+bytes.Index(p, []byte(`"s":1`))+len(`"s":`))
		frames = appendFrame(frames, p)
	}
	return frames, seqAt
}

// frameHeaderLen is the length of the header appendFrame writes before p.
func frameHeaderLen(p []byte) int {
	switch {
	case len(p) < 126:
		return 2
	case len(p) <= 0xffff:
		return 4
	}
	return 10
}

// replay is an http.RoundTripper whose one WebSocket handshake is answered with a connection
// (replayConn) that reads Hello, READY and then total of the frames, over and over, each time
// with the following sequence numbers, and then nothing until it is closed; what the client
// writes is dropped. The frames are all of one length.
type replay struct {
	frames []byte
	seqAt  []int
	n      int // frames
	total  int
	once   sync.Once
}

func newReplay(total int, frames []byte, seqAt []int) *replay {
	return &replay{frames: frames, seqAt: seqAt, n: len(seqAt), total: total}
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	served := false
	r.once.Do(func() { served = true })
	if !served {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: req}, nil
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	resp := &http.Response{
		StatusCode: http.StatusSwitchingProtocols, Request: req, Header: http.Header{
			"Connection": {"Upgrade"}, "Upgrade": {"websocket"},
			"Sec-Websocket-Accept": {base64.StdEncoding.EncodeToString(sum[:])},
		},
	}
	var head []byte
	head = appendFrame(head, []byte(`{"op":10,"d":{"heartbeat_interval":3600000}}`))
	head = appendFrame(head, []byte(`{"op":0,"d":{"session_id":"s","resume_gateway_url":""},"s":1,"t":"READY"}`))
	resp.Body = &replayConn{r: r, pending: head, left: r.total, closed: make(chan struct{})}
	return resp, nil
}

// replayConn is the replayed connection: reads return at most readBufferSize bytes of the
// stream; writes succeed, and a close frame ends the connection, as the service answers it.
type replayConn struct {
	r       *replay
	pending []byte // what the next reads return before the frames' next round
	left    int    // the frames still to be read after pending
	seq     int64  // the last sequence number written into the frames
	once    sync.Once
	closed  chan struct{}
}

func (c *replayConn) Read(p []byte) (int, error) {
	select {
	case <-c.closed:
		return 0, io.ErrClosedPipe
	default:
	}
	if len(c.pending) == 0 {
		if c.left == 0 { // all read: the client waits, as for a quiet lobby
			<-c.closed
			return 0, io.ErrClosedPipe
		}
		k := min(c.left, c.r.n)
		for _, at := range c.r.seqAt[:k] {
			c.seq++
			strconv.AppendInt(c.r.frames[:at], 1000000000000+c.seq, 10)
		}
		c.left -= k
		c.pending = c.r.frames[:k*(len(c.r.frames)/c.r.n)]
	}
	n := copy(p[:min(len(p), readBufferSize)], c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *replayConn) Write(p []byte) (int, error) {
	if len(p) > 0 && p[0]&0x0f == 0x8 { // one write per frame (wsConn.writeFrame)
		c.Close()
	}
	return len(p), nil
}

func (c *replayConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}
