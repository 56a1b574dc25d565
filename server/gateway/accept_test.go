package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

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

// With Config.AnswerInline, the answers of the requests a connection read together are taken on
// its reader when nothing is in flight, with no hand-off to the queue's goroutine; without it, on
// the queue's goroutine. Either way every request is answered, in order.
func TestAnswerInlineTakesAnswersOnTheReader(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run("inline="+strconv.FormatBool(inline), func(t *testing.T) {
			onReader := make(chan bool, 4)
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
			e := newEnv(t, func(c *Config) { c.Requests, c.Accept, c.AnswerInline = echoAPI{}, accept, inline })
			c := e.dial()
			c.identify("user-1")
			for i := range 3 {
				nonce := "r" + strconv.Itoa(i)
				c.send(gwire.OpRequest, gwire.Request{Nonce: nonce, Method: "POST", Path: "/" + strconv.Itoa(i)})
				r := c.result(nonce, int64(2+i))
				assert.Equal(t, 200, r.Status)
				assert.JSONEq(t, `{"path":"/`+strconv.Itoa(i)+`"}`, string(r.Body))
				assert.Equal(t, inline, <-onReader, "taken on the reader")
			}
			c.heartbeat()
		})
	}
}
