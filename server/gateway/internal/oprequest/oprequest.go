// Package oprequest holds what the gateway needs to answer API requests sent over a connection
// (gwire.OpRequest, an sdkpp extension): the encoding of their results, and the queue of the
// requests a connection accepted whose answers still wait (a lobby message's commit), so that
// requests sent together are accepted together and their answers leave together.
package oprequest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"sdkpp/internal/jsonscan"
	"sdkpp/server/gateway/internal/payload"
	"sdkpp/server/httpx"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Answer gives an accepted request's HTTP status and JSON body (nil or empty: null), once what
// the answer waits for is done.
type Answer = func() (status int, body []byte)

// Valid decodes and checks an OpRequest's d.
func Valid(d json.RawMessage) (gwire.Request, bool) {
	var r gwire.Request
	if !payload.DecodeObject(d, &r) {
		return r, false
	}
	return r, r.Valid()
}

// Read decodes a payload of the client that is a valid gwire.OpRequest; false for anything else,
// a malformed request included.
func Read(data []byte) (gwire.Request, bool) {
	r, ok := gwire.ReadRequest(data)
	if ok {
		return r, r.Valid()
	}
	var p struct {
		Op *int            `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if !payload.DecodeObject(data, &p) || p.Op == nil || *p.Op != gwire.OpRequest {
		return r, false
	}
	return Valid(p.D)
}

// Result encodes the d of gwire.EventRequestResult that answers the request of nonce: body as it
// is when it is one JSON value (surrounding spaces cut), else as a JSON string; null when empty.
func Result(nonce string, status int, body []byte) []byte { return result(nonce, status, body, true) }

// result is Result; without check, body is taken for one JSON value (or spaces) unchecked.
func result(nonce string, status int, body []byte, check bool) []byte {
	body = trimSpace(body)
	d := make([]byte, 0, len(nonce)+len(body)+42)
	d = append(d, `{"nonce":`...)
	d = wire.AppendString(d, nonce)
	d = append(d, `,"status":`...)
	d = strconv.AppendInt(d, int64(status), 10)
	d = append(d, `,"body":`...)
	switch {
	case len(body) == 0:
		d = append(d, "null"...)
	case !check || jsonscan.Valid(body):
		d = append(d, body...)
	default:
		d = wire.AppendString(d, string(body))
	}
	return append(d, '}')
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ErrorBody is the platform's {"code","message"} error body.
func ErrorBody(code int, message string) []byte {
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message})
	return b
}

// Serve runs r through the API handler h with the session's context, address and credential
// (with its scheme), and returns its result (Result); a panic of h is a 500, reported to panicked.
func Serve(h http.Handler, ctx context.Context, remoteAddr, auth string, r gwire.Request, panicked func(p any)) []byte {
	status, body := serve(h, ctx, remoteAddr, auth, r, panicked)
	return Result(r.Nonce, status, body)
}

func serve(h http.Handler, ctx context.Context, remoteAddr, auth string, r gwire.Request, panicked func(p any)) (status int, body []byte) {
	defer func() { // net/http recovers a handler's panic; this goroutine must too
		if p := recover(); p != nil {
			panicked(p)
			status, body = Internal()
		}
	}()
	hr, err := http.NewRequestWithContext(ctx, r.Method, r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return http.StatusBadRequest, ErrorBody(50035, "Invalid Form Body")
	}
	hr.RemoteAddr = remoteAddr
	hr.Header.Set("Authorization", auth)
	if len(r.Body) > 0 {
		hr.Header.Set("Content-Type", "application/json")
	}
	w := httpx.NewRecorder()
	h.ServeHTTP(w, hr)
	return w.Status, w.Body.Bytes()
}

// ResultEvent is gwire.EventRequestResult as a JSON string, the event of every Result, shared.
var ResultEvent = []byte(`"` + gwire.EventRequestResult + `"`)

// Internal is the answer of a request whose handler panicked.
func Internal() (int, []byte) {
	return http.StatusInternalServerError, ErrorBody(0, "500: Internal Server Error")
}

// Queue holds, in their order, the requests one connection accepted whose answers wait, and takes
// the answers on a goroutine of its own, so that the connection reads, and accepts, its next
// requests meanwhile: requests sent while a lobby's messages are committed are committed together
// next, a pipeline of batches as deep as the requests the client has in flight. The goroutine
// takes the batches handed by the time it turns to them together, and sends their results in
// one send. It holds at most a bound of requests (NewQueue): Add then waits for the goroutine,
// and the reader reads nothing more meanwhile, which is back-pressure on the client. Add, Idle and Hand are for one
// goroutine (the connection's reader); Close stops the goroutine once every answer was sent. Its
// zero value is not usable: see NewQueue.
type Queue struct {
	send     func(ds [][]byte) // dispatches results, in order
	panicked func(p any)       // told of an answer's panic
	max      int               // the bound of requests added and not dispatched
	// OnHand, when set, is called by Hand before it hands requests, on the caller's goroutine.
	OnHand func()

	next []item // added, not handed yet

	mu      sync.Mutex
	changed *sync.Cond
	handed  [][]item // handed, in order, not taken yet
	spare   []item   // a dispatched batch's array, emptied, for the next batch's Adds
	waiting int      // requests handed and not dispatched yet, the goroutine's batch included
	running bool     // the goroutine was started
	closed  bool
	done    chan struct{} // closed when the goroutine returns
}

type item struct {
	nonce  string
	answer Answer
}

// NewQueue returns a Queue that holds at most limit requests (at least 1) whose results were not
// dispatched, dispatches results with send (on its goroutine) and reports an answer's panic,
// which is answered with a 500, to panicked.
func NewQueue(limit int, send func(ds [][]byte), panicked func(p any)) *Queue {
	q := &Queue{send: send, panicked: panicked, max: max(limit, 1), done: make(chan struct{})}
	q.changed = sync.NewCond(&q.mu)
	return q
}

// Add queues the answer of the request of nonce, to be handed with the next Hand. When the queue
// then holds its bound of requests, Add hands them and waits until the goroutine has dispatched
// a batch.
func (q *Queue) Add(nonce string, a Answer) {
	q.next = append(q.next, item{nonce, a})
	q.mu.Lock()
	full := q.waiting+len(q.next) >= q.max
	q.mu.Unlock()
	if !full {
		return
	}
	q.Hand()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.waiting >= q.max {
		q.changed.Wait()
	}
}

// Idle reports whether the goroutine has nothing to take: what was added is best handed at once,
// so that its commit starts while the reader accepts what follows.
func (q *Queue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting == 0
}

// Hand gives the requests added since the last Hand to the goroutine, which takes their answers
// in order, after those handed before, and dispatches their results together (with those of the
// other batches it has not turned to yet).
func (q *Queue) Hand() {
	if len(q.next) == 0 {
		return
	}
	if q.OnHand != nil {
		q.OnHand()
	}
	q.mu.Lock()
	q.handed = append(q.handed, q.next)
	q.waiting += len(q.next)
	q.next, q.spare = q.spare, nil // a batch in a steady stream costs no allocation
	if !q.running && !q.closed {
		q.running = true
		go q.run()
	}
	q.changed.Broadcast()
	q.mu.Unlock()
}

// Added returns the number of requests added since the last Hand (or Run).
func (q *Queue) Added() int { return len(q.next) }

// Run takes the answers of the requests added since the last Hand on the caller's goroutine, and
// dispatches their results together, when the goroutine has none to take (every answer handed
// was dispatched); else it hands them (Hand). Taken where they were accepted, the answers of
// requests read together cost no hand-off between goroutines: waking the goroutine, and parking
// it again once it has sent them, cost a wake of a thread, and its sleep, per batch (on a machine
// with two cores, more than the batch's encoding). The caller reads nothing meanwhile: what its
// client sends then waits in the socket, to be accepted together next.
func (q *Queue) Run() {
	if len(q.next) == 0 {
		return
	}
	q.mu.Lock()
	idle := q.waiting == 0 && !q.closed
	q.mu.Unlock()
	if !idle {
		q.Hand()
		return
	}
	if q.OnHand != nil {
		q.OnHand()
	}
	batch := q.next
	q.next = nil
	q.dispatch(batch)
	clear(batch) // its answers' memory goes
	q.next = batch[:0]
}

// Wait hands what was added and returns once every answer handed was dispatched.
func (q *Queue) Wait() {
	q.Hand()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.waiting > 0 {
		q.changed.Wait()
	}
}

// Close hands what was added, and stops the goroutine once every answer was dispatched.
func (q *Queue) Close() {
	q.Hand()
	q.mu.Lock()
	q.closed = true
	running := q.running
	q.changed.Broadcast()
	q.mu.Unlock()
	if running {
		<-q.done
	}
}

func (q *Queue) run() {
	defer close(q.done)
	q.mu.Lock()
	for {
		for len(q.handed) == 0 && !q.closed {
			q.changed.Wait()
		}
		if len(q.handed) == 0 {
			q.mu.Unlock()
			return
		}
		batch := q.take()
		q.mu.Unlock()
		q.dispatch(batch)
		clear(batch) // its answers' memory goes
		q.mu.Lock()
		q.spare = batch[:0]
		q.waiting -= len(batch)
		q.changed.Broadcast()
	}
}

// take removes every batch handed and returns them as one, in order. Their answers are taken
// together and their results leave in one send (one write to the client, where a send per batch
// cost a write each, the largest part of the service's system calls per message): the first
// answer's wait, a group commit, commits every message accepted before it, so that the answers
// of the batches handed meanwhile are ready once it is. Call with mu held.
func (q *Queue) take() []item {
	batch := q.handed[0]
	if len(q.handed) > 1 {
		batch = slices.Concat(q.handed...)
	}
	clear(q.handed)
	q.handed = q.handed[:0]
	return batch
}

// dispatch sends the results of batch; a panic of send is reported to panicked, and the batch's
// results are then lost, as they are when the connection's session has ended.
func (q *Queue) dispatch(batch []item) {
	defer func() {
		if p := recover(); p != nil {
			q.panicked(p)
		}
	}()
	q.send(takeAll(batch, q.panicked))
}

// Answered takes the answer of the request of nonce at once and returns its result (Result); a
// panic of the answer is a 500, reported to panicked.
func Answered(nonce string, a Answer, panicked func(p any)) []byte {
	return takeAll([]item{{nonce, a}}, panicked)[0]
}

// takeAll takes the answers of items, in order, and returns their results (Result); a panic of
// an answer is a 500, reported to panicked. The answers are Accept's, whose bodies are JSON by
// its contract (gateway.Config.Accept): they are not scanned again (a lobby message's, encoded
// by the service, is the largest part of its answer's work).
func takeAll(items []item, panicked func(p any)) [][]byte {
	ds := make([][]byte, len(items))
	for i, it := range items {
		status, body := take(it.answer, panicked)
		ds[i] = result(it.nonce, status, body, false)
	}
	return ds
}

func take(a Answer, panicked func(p any)) (status int, body []byte) {
	defer func() {
		if p := recover(); p != nil {
			panicked(p)
			status, body = Internal()
		}
	}()
	return a()
}

// Accept offers r, sent with the session's context, address and credential, to accept (nil
// takes nothing) and returns its answer, or false when accept does not take r. A panic of accept
// is reported to panicked, and r is then taken with a 500 for answer.
func Accept(accept func(ctx context.Context, remoteAddr, auth, method, path string, body []byte) (func() (int, []byte), bool),
	ctx context.Context, remoteAddr, auth string, r gwire.Request, panicked func(p any)) (a Answer, ok bool) {
	if accept == nil {
		return nil, false
	}
	defer func() {
		if p := recover(); p != nil {
			panicked(p)
			a, ok = Internal, true
		}
	}()
	return accept(ctx, remoteAddr, auth, r.Method, r.Path, r.Body)
}
