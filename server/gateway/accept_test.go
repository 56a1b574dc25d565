package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/httpx"
	gwire "sdkpp/wire/gateway"
)

// acceptAPI is a Config.Accept that takes POST requests: each is reported on accepted (its path),
// and its answer waits for a value on release (a commit) and echoes the path and the body; a
// path "/panic" panics. Other requests go to Requests.
type acceptAPI struct {
	accepted chan string
	release  chan struct{}
}

func (a acceptAPI) accept(ctx context.Context, _, auth, method, path string, body []byte) (func() (int, []byte), bool) {
	if method != http.MethodPost {
		return nil, false
	}
	if path == "/panic" {
		panic("accept")
	}
	if httpx.SessionMemoOf(ctx) == nil || auth != "Bearer user-1" {
		return func() (int, []byte) { return http.StatusUnauthorized, nil }, true
	}
	a.accepted <- path
	out, _ := json.Marshal(map[string]string{"path": path, "body": string(body)})
	return func() (int, []byte) { <-a.release; return http.StatusOK, out }, true
}

// A request Accept takes is served without Requests; the connection reads and accepts the next
// requests while an earlier one's answer waits, and the answers leave in the order of the
// requests. A request Accept leaves to Requests runs only once the answers before it were sent.
// A panic in Accept is a 500 for its request.
func TestAcceptedRequestsPipeline(t *testing.T) {
	api := echoAPI{entered: make(chan struct{}, 1), release: make(chan struct{})}
	acc := acceptAPI{accepted: make(chan string, 8), release: make(chan struct{}, 8)}
	e := newEnv(t, func(c *Config) { c.Requests, c.Accept = api, acc.accept })
	c := e.dial()
	c.identify("user-1")
	c.send(gwire.OpRequest, gwire.Request{Nonce: "a1", Method: "POST", Path: "/one", Body: json.RawMessage(`{"n":1}`)})
	c.send(gwire.OpRequest, gwire.Request{Nonce: "a2", Method: "POST", Path: "/two"})
	c.send(gwire.OpRequest, gwire.Request{Nonce: "g", Method: "GET", Path: "/none"})
	// Both are accepted before either answer is released.
	assert.Equal(t, "/one", <-acc.accepted)
	assert.Equal(t, "/two", <-acc.accepted)
	acc.release <- struct{}{}
	acc.release <- struct{}{}
	r := c.result("a1", 2)
	assert.Equal(t, 200, r.Status)
	assert.JSONEq(t, `{"path":"/one","body":"{\"n\":1}"}`, string(r.Body))
	r = c.result("a2", 3)
	assert.Equal(t, 200, r.Status)
	assert.JSONEq(t, `{"path":"/two","body":""}`, string(r.Body))
	assert.Equal(t, 204, c.result("g", 4).Status, "the request Requests serves, after them")

	c.send(gwire.OpRequest, gwire.Request{Nonce: "p", Method: "POST", Path: "/panic"})
	r = c.result("p", 5)
	assert.Equal(t, 500, r.Status, "a panic in Accept")
	require.JSONEq(t, `{"code":0,"message":"500: Internal Server Error"}`, string(r.Body))
	c.heartbeat()
}

// A client that goes while its accepted requests wait gets their answers when it resumes: the
// connection's end waits for them.
func TestAcceptedAnswersOutliveTheConnection(t *testing.T) {
	acc := acceptAPI{accepted: make(chan string, 8), release: make(chan struct{}, 8)}
	e := newEnv(t, func(c *Config) { c.Requests, c.Accept = echoAPI{}, acc.accept })
	a := e.dial()
	ready := a.identify("user-1")
	a.send(gwire.OpRequest, gwire.Request{Nonce: "w", Method: "POST", Path: "/wait"})
	<-acc.accepted
	answeredAfterResume(e, a, ready, "w", func() { acc.release <- struct{}{} })
}

// The connection accepts the next requests while the first one's answer waits in its commit
// (a pipeline of batches); a client with more requests in flight than maxQueued, the bound that
// holds the reader back (oprequest's TestQueueBound), gets every answer, in the order of the
// requests.
func TestAcceptedBatchesPipelineUpToTheBound(t *testing.T) {
	const n = 3 * maxQueued
	acc := acceptAPI{accepted: make(chan string, n), release: make(chan struct{}, n)}
	e := newEnv(t, func(c *Config) { c.Requests, c.Accept = echoAPI{}, acc.accept })
	c := e.dial()
	c.identify("user-1")
	c.send(gwire.OpRequest, gwire.Request{Nonce: "r0", Method: "POST", Path: "/0"})
	assert.Equal(t, "/0", <-acc.accepted)
	c.send(gwire.OpRequest, gwire.Request{Nonce: "r1", Method: "POST", Path: "/1"})
	assert.Equal(t, "/1", <-acc.accepted, "accepted while the first answer waits")
	for i := 2; i < n; i++ {
		c.send(gwire.OpRequest, gwire.Request{Nonce: "r" + strconv.Itoa(i), Method: "POST", Path: "/" + strconv.Itoa(i)})
	}
	for i := 2; i < maxQueued; i++ {
		assert.Equal(t, "/"+strconv.Itoa(i), <-acc.accepted)
	}
	for i := 0; i < n; i++ {
		acc.release <- struct{}{}
	}
	for i := 0; i < n; i++ {
		r := c.result("r"+strconv.Itoa(i), int64(2+i))
		assert.Equal(t, 200, r.Status)
	}
	assert.Len(t, acc.accepted, n-maxQueued, "the rest accepted once answers left")
	c.heartbeat()
}

// While the hub is busy, when a connection's writes are paced, a request's answer is still
// written at once: a client with requests in flight waits for it. The pace is an hour here, so
// that an answer that was paced would not come before the test client's read gives up.
func TestAnswersAreNotPaced(t *testing.T) {
	const n = 40
	acc := acceptAPI{accepted: make(chan string, n), release: make(chan struct{}, n)}
	e := newEnv(t, func(c *Config) { c.Requests, c.Accept, c.busyPace = echoAPI{}, acc.accept, time.Hour })
	c := e.dial()
	c.identify("user-1")
	defer e.keepBusy()()
	for i := range n {
		acc.release <- struct{}{}
		c.send(gwire.OpRequest, gwire.Request{Nonce: "r" + strconv.Itoa(i), Method: "POST", Path: "/" + strconv.Itoa(i)})
		require.Equal(t, 200, c.result("r"+strconv.Itoa(i), int64(2+i)).Status)
		<-acc.accepted
	}
}

// With Config.AnswerInline, the answers of requests that arrive together are taken on the
// connection's reader when nothing is in flight, with no hand-off to the queue's goroutine; a
// lone request's answer, and without AnswerInline every answer, on the queue's goroutine, so
// that the reader accepts what follows meanwhile. Either way every request is answered, in order.
func TestAnswerInlineTakesAnswersOnTheReader(t *testing.T) {
	for _, tc := range []struct {
		name            string
		inline          bool
		requests        int
		wantOnTheReader bool
	}{
		{"inline, three together", true, 3, true},
		{"inline, one alone", true, 1, false},
		{"handed, three together", false, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onReader := make(chan bool, tc.requests)
			accept := func(_ context.Context, _, _, method, path string, _ []byte) (func() (int, []byte), bool) {
				if method != http.MethodPost {
					return nil, false
				}
				return func() (int, []byte) {
					stack := make([]byte, 8<<10)
					stack = stack[:runtime.Stack(stack, false)]
					onReader <- strings.Contains(string(stack), "gateway.(*conn).read(")
					return http.StatusOK, []byte(`{"path":"` + path + `"}`)
				}, true
			}
			e := newEnv(t, func(c *Config) { c.Requests, c.Accept, c.AnswerInline = echoAPI{}, accept, tc.inline })
			conn, rw := rawIdentified(t, e, "user-1")
			var frames bytes.Buffer // written in one system call, so that they are read together
			for i := range tc.requests {
				d, err := json.Marshal(map[string]any{"op": gwire.OpRequest, "d": gwire.Request{
					Nonce: "r" + strconv.Itoa(i), Method: "POST", Path: "/" + strconv.Itoa(i)}})
				require.NoError(t, err)
				require.NoError(t, ws.WriteFrame(&frames, ws.MaskFrame(ws.NewTextFrame(d))))
			}
			_, err := conn.Write(frames.Bytes())
			require.NoError(t, err)
			for i := range tc.requests {
				r := rawResult(t, rw)
				assert.Equal(t, "r"+strconv.Itoa(i), r.Nonce, "in order")
				assert.JSONEq(t, `{"path":"/`+strconv.Itoa(i)+`"}`, string(r.Body))
				assert.Equal(t, tc.wantOnTheReader, <-onReader, "taken on the reader")
			}
		})
	}
}

// rawIdentified dials the gateway with a bare WebSocket connection, whose frames a test writes
// itself, and identifies with token; the frames it reads come through rw.
func rawIdentified(t *testing.T, e *env, token string) (net.Conn, io.ReadWriter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	conn, br, _, err := ws.Dial(ctx, e.wsURL("?v=10&encoding=json"))
	require.NoError(t, err, "dial")
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(wait)))
	rw := struct {
		io.Reader
		io.Writer
	}{conn, conn}
	if br != nil { // what came after the handshake's answer
		rw.Reader = br
	}
	_, err = wsutil.ReadServerText(rw) // HELLO
	require.NoError(t, err)
	d, err := json.Marshal(map[string]any{"op": gwire.OpIdentify, "d": identifyData(token)})
	require.NoError(t, err)
	require.NoError(t, wsutil.WriteClientText(rw, d))
	for {
		raw, err := wsutil.ReadServerText(rw)
		require.NoError(t, err)
		var p gwire.Payload
		require.NoError(t, json.Unmarshal(raw, &p))
		if p.T != nil && *p.T == gwire.EventReady {
			return conn, rw
		}
	}
}

// While an answer is in flight, a request read together with the start of a frame whose rest
// has not arrived is handed at once, as when nothing more was read: its answer does not wait for
// bytes the client may only send once answered (Reader.MessageBuffered, not Buffered).
func TestAnswerWaitsForNoFrameStillArriving(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run("inline="+strconv.FormatBool(inline), func(t *testing.T) {
			acc := acceptAPI{accepted: make(chan string, 4), release: make(chan struct{}, 4)}
			e := newEnv(t, func(c *Config) { c.Requests, c.Accept, c.AnswerInline = echoAPI{}, acc.accept, inline })
			conn, rw := rawIdentified(t, e, "user-1")
			frame := func(nonce, path string) []byte {
				d, err := json.Marshal(map[string]any{"op": gwire.OpRequest, "d": gwire.Request{Nonce: nonce, Method: "POST", Path: path}})
				require.NoError(t, err)
				var b bytes.Buffer
				require.NoError(t, ws.WriteFrame(&b, ws.MaskFrame(ws.NewTextFrame(d))))
				return b.Bytes()
			}
			_, err := conn.Write(frame("a", "/a"))
			require.NoError(t, err)
			require.Equal(t, "/a", <-acc.accepted, "in flight")
			// b, then the first half of c, in one write: b is read with bytes of c behind it.
			c := frame("c", "/c")
			_, err = conn.Write(append(frame("b", "/b"), c[:len(c)/2]...))
			require.NoError(t, err)
			require.Equal(t, "/b", <-acc.accepted)
			acc.release <- struct{}{}
			acc.release <- struct{}{}
			for _, nonce := range []string{"a", "b"} { // with c still arriving
				r := rawResult(t, rw)
				assert.Equal(t, nonce, r.Nonce, "in order")
				assert.Equal(t, 200, r.Status)
			}
			_, err = conn.Write(c[len(c)/2:])
			require.NoError(t, err)
			require.Equal(t, "/c", <-acc.accepted, "c, once whole")
			acc.release <- struct{}{}
			assert.Equal(t, "c", rawResult(t, rw).Nonce)
		})
	}
}

// rawResult reads from rw, a connection of rawIdentified, up to the next request's result.
func rawResult(t *testing.T, rw io.ReadWriter) gwire.RequestResult {
	t.Helper()
	var p gwire.Payload
	for p.T == nil || *p.T != gwire.EventRequestResult {
		raw, err := wsutil.ReadServerText(rw)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &p))
	}
	var r gwire.RequestResult
	require.NoError(t, json.Unmarshal(p.D, &r))
	return r
}
