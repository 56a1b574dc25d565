// Package tunnel sends API requests over the gateway connection (the service's op 100, an sdkpp
// extension) and matches their answers (SDKPP_REQUEST_RESULT dispatches) to their callers.
//
// A lobby message sent over the gateway connection the SDK already holds reaches the other
// players sooner than one sent as an HTTP request: no connection to take from the pool, no
// headers, no token lookup. When the connection breaks before the answer (even if the session
// then resumes, the request may have been lost on the way), or no answer comes in time, the
// sender cannot know whether the request ran: Do fails with ErrLost, and the caller repeats it
// over HTTP, which is safe only for requests the service makes idempotent with a nonce (a lobby
// message with enforce_nonce). An answer that comes later is dropped.
package tunnel

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"sdkpp/core/rest"
	"sdkpp/internal/clock"
	"sdkpp/internal/jsonscan"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Wait is how long a request waits for its answer over the gateway before Do gives up on it.
const Wait = 15 * time.Second

// ErrLost means the request was not sent, or may or may not have run: the session it was sent
// on ended before its answer, or the answer was late.
var ErrLost = errors.New("the gateway session ended before the answer")

// Sender writes one gateway payload; the gateway client (core/gateway) is one. SendRaw does not
// retain d once it returns: Send reuses its storage for the next request.
type Sender interface {
	SendRaw(ctx context.Context, op int, d []byte) error
}

// LaterSender is a Sender that can also leave a payload to go out a little later with others
// (the gateway client's SendRawLater): Send uses it for a request sent while others wait for
// their answers, whose reading then writes it.
type LaterSender interface {
	Sender
	SendRawLater(ctx context.Context, op int, d []byte) error
}

// Tunnel matches the answers of requests sent over the gateway to their callers. Its zero value
// is ready to use; its methods may be called from any goroutine.
type Tunnel struct {
	// Clock is the clock of the calls' deadlines (Wait); nil is the real clock. Set it before the
	// first request.
	Clock clock.Clock

	enabled atomic.Bool   // the service named gwire.FeatureRequests in the last READY
	last    atomic.Uint64 // the id of the last request: its nonce, in decimal
	mu      sync.Mutex
	pending map[uint64]*Call // the calls written and not answered, by id
	waiting deadlines        // those of pending whose outcome Then awaits, by deadline
}

// Enable records whether the service of the current session takes requests over the gateway.
func (t *Tunnel) Enable(on bool) { t.enabled.Store(on) }

// answer is a request's result, or lost.
type answer struct {
	status int
	body   json.RawMessage // valid JSON (decodeResult's); it may be a part of the reader's buffer
	lost   bool
}

// NewNonce returns 20 random hex characters: an idempotency nonce and a request's id.
func NewNonce() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// clock is the deadlines' clock.
func (t *Tunnel) clock() clock.Clock {
	if t.Clock == nil {
		return clock.Real{}
	}
	return t.Clock
}

// register records c as written and waiting for its answer, and returns how many other calls
// wait for theirs.
func (t *Tunnel) register(c *Call) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = make(map[uint64]*Call)
	}
	others := len(t.pending)
	t.pending[c.id] = c
	return others
}

// take removes the call of id from those waiting and returns it; nil when it is not there
// (answered, lost or given up already). Whoever takes a call delivers its outcome: it is taken
// once.
func (t *Tunnel) take(id uint64) *Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.pending[id]
	if c != nil {
		delete(t.pending, id)
		t.waiting.remove(c)
	}
	return c
}

// Answer delivers an SDKPP_REQUEST_RESULT dispatch to its call (on the calling goroutine: see
// Call.Then); an unknown nonce (a call that gave up) is dropped. data may be its reader's buffer:
// the call decodes its body from data while Answer runs, and copies it only when Then has not
// been called yet.
func (t *Tunnel) Answer(data json.RawMessage) {
	if t.answerInOnePass(data) {
		return
	}
	nonce, status, body, ok := decodeAnswer(data)
	if !ok {
		return
	}
	id, ok := parseID(nonce)
	if !ok {
		return // not a nonce this tunnel gives
	}
	if c := t.take(id); c != nil {
		c.deliver(answer{status: status, body: body})
	}
}

// answerInOnePass is Answer for the answer of a lobby message sent with Do or Then (out a new
// *wire.LobbyMessage): its body is read once, by the message's decoder, where decodeAnswer
// checked it first and the decoder read it again. The dispatch must be in the form the service
// writes (splitAnswer); the message is decoded into a value of its own and handed to out only
// once its decoder, which fails on what is not one valid JSON value, has taken the body whole:
// then data is exactly the answer splitAnswer read. It reports false, having delivered nothing,
// for anything else (another form, another out, Then not called yet, an error status, a body
// the decoder refuses), which Answer then reads as before.
func (t *Tunnel) answerInOnePass(data []byte) bool {
	nonce, status, body, ok := splitAnswer(data)
	if !ok || status >= 400 {
		return false
	}
	id, ok := parseID(nonce)
	if !ok {
		return false
	}
	t.mu.Lock()
	c := t.pending[id]
	t.mu.Unlock()
	if c == nil {
		return false
	}
	c.mu.Lock()
	out, taking := c.out, c.taking
	c.mu.Unlock()
	m, isMessage := out.(*wire.LobbyMessage)
	if !taking || !isMessage || m == nil || !m.IsZero() {
		return false
	}
	var got wire.LobbyMessage
	if wire.DecodeLobbyMessage(body, &got) != nil {
		return false // not one valid JSON value (data may read otherwise), or not a message
	}
	if c = t.take(id); c != nil { // else it gave up meanwhile: dropped, as Answer drops it
		*m = got
		finish(nil, c.done, c.doneC) // Then's, fixed once taking was set
	}
	return true
}

// splitAnswer reads an SDKPP_REQUEST_RESULT's data in exactly the form the service writes it for
// a request of this tunnel, {"nonce":"ID","status":N,"body":B} without white space, ID and N
// plain digits, leaving B unscanned. When B is one valid JSON value, the result is encoding/json's
// reading of data; when it is not, data may still be valid JSON that reads otherwise (B holding
// more members, say): so B must be checked before it is used.
func splitAnswer(data []byte) (nonce []byte, status int, body []byte, ok bool) {
	const head, statusKey, bodyKey = `{"nonce":"`, `","status":`, `,"body":`
	if len(data) < len(head) || string(data[:len(head)]) != head {
		return nil, 0, nil, false
	}
	i := len(head)
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	nonce = data[len(head):i]
	if len(data)-i < len(statusKey) || string(data[i:i+len(statusKey)]) != statusKey {
		return nil, 0, nil, false
	}
	i += len(statusKey)
	j := i
	for j < len(data) && data[j] >= '0' && data[j] <= '9' && j-i < 4 {
		status = status*10 + int(data[j]-'0')
		j++
	}
	// B and the closing brace take two bytes at least.
	if j == i || (data[i] == '0' && j > i+1) || len(data)-j < len(bodyKey)+2 || string(data[j:j+len(bodyKey)]) != bodyKey {
		return nil, 0, nil, false
	}
	body = data[j+len(bodyKey) : len(data)-1]
	if data[len(data)-1] != '}' || body[0] <= ' ' || body[len(body)-1] <= ' ' {
		return nil, 0, nil, false // white space around B, which encoding/json leaves out of it
	}
	return nonce, status, body, true
}

// parseID reads a request's id from its nonce, the id in decimal as Send writes it (no sign, no
// leading zero); false for any other text.
func parseID(nonce []byte) (uint64, bool) {
	if len(nonce) == 0 || len(nonce) > 20 || (nonce[0] == '0' && len(nonce) > 1) {
		return 0, false
	}
	var id uint64
	for _, c := range nonce {
		if c < '0' || c > '9' {
			return 0, false
		}
		next := id*10 + uint64(c-'0')
		if next/10 != id {
			return 0, false // overflow
		}
		id = next
	}
	return id, true
}

// decodeResult decodes data, an SDKPP_REQUEST_RESULT dispatch's, as json.Unmarshal would (false
// where it fails). The body is valid JSON, and it may be a part of data.
func decodeResult(data []byte) (gwire.RequestResult, bool) {
	nonce, status, body, ok := decodeAnswer(data)
	return gwire.RequestResult{Nonce: string(nonce), Status: status, Body: body}, ok
}

// decodeAnswer is decodeResult with the nonce's text as bytes, a part of data when it needs no
// decoding: in one pass for the shape the service sends, where encoding/json scans it twice, and
// without a string for the nonce. Anything else (a key it does not know as written, which
// encoding/json might match case-insensitively, an escaped nonce, a status that is not a plain
// integer, invalid JSON) goes to encoding/json.
func decodeAnswer(data []byte) (nonce []byte, status int, body json.RawMessage, ok bool) {
	ok = jsonscan.Object(data, func(k, v []byte) bool {
		switch string(k) {
		case "nonce":
			if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
				return false // null, escaped, not a string or not UTF-8: encoding/json's
			}
			nonce = v[1 : len(v)-1]
		case "status":
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return false
			}
			status = n
		case "body":
			body = v
		default:
			return false
		}
		return true
	})
	if ok {
		return nonce, status, body, true
	}
	var r gwire.RequestResult
	if json.Unmarshal(data, &r) != nil {
		return nil, 0, nil, false
	}
	return []byte(r.Nonce), r.Status, r.Body, true
}

// Lost tells every waiting call that its answer may not come (the connection broke), and stops
// the deadlines' timer.
func (t *Tunnel) Lost() {
	t.mu.Lock()
	pending := t.pending
	t.pending = nil
	t.waiting.clear()
	t.mu.Unlock()
	for _, c := range pending {
		c.deliver(answer{lost: true})
	}
}

// appendBody appends a request's JSON body (none for nil) to dst: with its own encoder when it
// has one (wire.Appender, as a lobby message has), else with encoding/json.
func appendBody(dst []byte, v any) ([]byte, error) {
	if v == nil {
		return dst, nil
	}
	if a, ok := v.(wire.Appender); ok && !isNilPointer(v) {
		return a.AppendJSON(dst), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// isNilPointer reports whether v holds a nil pointer, which encoding/json encodes as null and
// whose AppendJSON may not be callable.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// requestData appends op 100's d, {"nonce","method","path","body"}, to dst, with the body
// (appendBody) encoded in place: encoded apart and put in, it would be copied again for every
// message sent. The nonce, the method and the path are written as they are when no byte of them
// needs an escape in JSON, as for every request the SDK makes; else encoding/json writes them.
func requestData(dst, nonce []byte, method, path string, body any) ([]byte, error) {
	d := dst
	base := len(d)
	d = append(d, `{"nonce":"`...)
	d = append(d, nonce...)
	d = append(d, `","method":"`...)
	d = append(d, method...)
	d = append(d, `","path":"`...)
	d = append(d, path...)
	d = append(d, '"')
	if !plain(nonce) || !plain(method) || !plain(path) {
		head, err := json.Marshal(struct {
			Nonce  string `json:"nonce"`
			Method string `json:"method"`
			Path   string `json:"path"`
		}{string(nonce), method, path})
		if err != nil {
			return nil, err
		}
		d = append(d[:base], head[:len(head)-1]...) // without its closing brace
	}
	if body != nil {
		d = append(d, `,"body":`...)
		var err error
		if d, err = appendBody(d, body); err != nil {
			return nil, err
		}
	}
	return append(d, '}'), nil
}

// bodyRoom is the room a request's buffer has for a body and the rest of the request: a lobby
// message of a few hundred bytes fits without the buffer growing.
const bodyRoom = 640

// maxKeptRequest is the largest request buffer Send keeps for the next request (requestBufs).
const maxKeptRequest = 16 << 10

// requestBufs holds the buffers of requests written already (a Sender does not retain them), so
// that a request, a lobby message say, is encoded without an allocation of its own.
var requestBufs = sync.Pool{New: func() any { b := make([]byte, 0, bodyRoom+128); return &b }}

// plain reports whether s is printable ASCII that JSON (and encoding/json, which also escapes
// '<', '>' and '&') writes in quotes as it is.
func plain[S string | []byte](s S) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Do sends req over gw (nil when there is no connection) and waits for its answer, which out
// receives as JSON. It fails with ErrLost when the request was not sent or may or may not have
// run (the connection broke, the answer was late, or ctx ended first); with a *rest.Error when
// the service answered with an error.
func (t *Tunnel) Do(ctx context.Context, gw Sender, req rest.Request, out any) error {
	c := t.Send(ctx, gw, req)
	if c.err != nil {
		return c.err
	}
	done := make(chan error, 1) // not pooled: a channel made in a synctest bubble stays in it
	c.then(out, nil, done)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if c.giveUp() {
			return ErrLost
		}
		return <-done // its outcome is being delivered
	}
}

// Call is a request Send wrote over the gateway, or failed to; Then takes its outcome.
type Call struct {
	t   *Tunnel
	id  uint64
	err error // why it was not sent; nil when it was

	// Its place among the Tunnel's deadlines (deadlines), guarded by the Tunnel's mu.
	deadline   time.Time
	prev, next *Call
	listed     bool

	mu     sync.Mutex
	got    *answer     // its answer, when it came before Then
	out    any         // Then's
	done   func(error) // Then's, or nil
	doneC  chan error  // Do's, or nil: the outcome is sent on it
	taking bool        // Then or Do waits for the outcome
}

// Send encodes req and writes it over gw on the calling goroutine, and returns the call whose
// outcome Then takes. The request is on its way when Send returns: no hand-off to another
// goroutine delays it, and no goroutine need wait for its answer. Send blocks only as long as
// the write (SendRaw) does. A request sent while others wait for their answers may be left to
// the gateway's reader, which writes it with others when it reads on (LaterSender).
//
// The request's nonce is its id in the tunnel, in decimal: it only matches the answer to the
// call, and no two requests of a tunnel share one.
func (t *Tunnel) Send(ctx context.Context, gw Sender, req rest.Request) *Call {
	c := &Call{t: t, id: t.last.Add(1)}
	var nonce [20]byte
	buf := requestBufs.Get().(*[]byte)
	d, err := requestData((*buf)[:0], strconv.AppendUint(nonce[:0], c.id, 10), req.Method, req.Path, req.JSON)
	if err != nil {
		requestBufs.Put(buf)
		return &Call{err: &rest.Error{Network: true, Message: "encode request: " + err.Error(), Err: err}}
	}
	err = t.write(ctx, gw, c, d, req.Form == nil)
	if cap(d) <= maxKeptRequest { // written or not, d is Send's again (Sender)
		*buf = d[:0]
		requestBufs.Put(buf)
	}
	if err != nil {
		return &Call{err: ErrLost}
	}
	return c
}

// write registers c and writes its request d over gw, unless it cannot go over the gateway
// (no connection, a form body, a service that does not take requests: not sent, HTTP is the
// way); it fails with ErrLost when the request was not written, or perhaps only in part.
func (t *Tunnel) write(ctx context.Context, gw Sender, c *Call, d []byte, tunnelled bool) error {
	if gw == nil || !tunnelled || !t.enabled.Load() {
		return ErrLost
	}
	var err error
	// Registered before the write: the answer may come before SendRaw returns.
	if others := t.register(c); others > 0 {
		if ls, ok := gw.(LaterSender); ok {
			// Others in flight: their answers are being read, and the reader writes this request
			// with the others their answers' callers send meanwhile.
			err = ls.SendRawLater(ctx, gwire.OpRequest, d)
		} else {
			err = gw.SendRaw(ctx, gwire.OpRequest, d)
		}
	} else {
		err = gw.SendRaw(ctx, gwire.OpRequest, d) // a lone request goes out at once
	}
	if err != nil { // not Ready, or the write failed: perhaps sent
		t.take(c.id)
		return ErrLost
	}
	return nil
}

// MaxInline is how many requests may wait for their answers while SendThen still writes on its
// caller's goroutine. The service stops reading a connection's requests while 64 of them wait
// for their answers (a stalled store), and a write the connection does not take then blocks
// until it does or the connection's write timeout closes it.
const MaxInline = 32

// Busy reports whether MaxInline requests wait for their answers.
func (t *Tunnel) Busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending) >= MaxInline
}

// SendThen is Send then Then, on the calling goroutine unless the tunnel is Busy: then on the
// goroutine handOff starts with them, so that a caller that must not block (the game's thread)
// does not wait for a connection the service has stopped reading.
func (t *Tunnel) SendThen(handOff func(func()), ctx context.Context, gw Sender, req rest.Request, out any, done func(error)) {
	if t.Busy() {
		handOff(func() { t.Send(ctx, gw, req).Then(out, done) })
		return
	}
	t.Send(ctx, gw, req).Then(out, done)
}

// Sent reports whether the request was written (its answer may come).
func (c *Call) Sent() bool { return c.err == nil }

// Then calls done once with the call's outcome, out having received its answer's JSON: with
// ErrLost when the request was not sent, when the connection broke before its answer (Lost), or
// when no answer came within Wait on the Tunnel's Clock; with a *rest.Error when the service
// answered with an error. done runs on the goroutine that delivers the outcome: at once on the
// caller's when it is already known, else on the one calling Answer or Lost (the gateway
// client's, whose handlers must not block), or on the deadlines' timer's. Call Then once.
func (c *Call) Then(out any, done func(error)) {
	if c.err != nil {
		done(c.err)
		return
	}
	c.then(out, done, nil)
}

// then is Then for a sent call, the outcome going to done or, without done, sent on doneC.
func (c *Call) then(out any, done func(error), doneC chan error) {
	c.mu.Lock()
	if c.got != nil { // answered already
		a := *c.got
		c.mu.Unlock()
		finish(outcome(a, out), done, doneC)
		return
	}
	c.out, c.done, c.doneC, c.taking = out, done, doneC, true
	c.mu.Unlock()
	// Its deadline starts now, as the timer of each call did; an answer that came meanwhile took
	// it already, and await leaves it.
	c.t.await(c)
}

// finish hands an outcome to done, or sends it on doneC without done.
func finish(err error, done func(error), doneC chan error) {
	if done != nil {
		done(err)
		return
	}
	doneC <- err
}

// giveUp takes the call from those waiting, so that no answer is delivered to it any more, and
// reports whether it was still waiting.
func (c *Call) giveUp() bool { return c.t.take(c.id) != nil }

// deliver hands the call's answer to Then's done, or keeps it (with a copy of its body, which
// may be the reader's buffer) for Then when Then has not been called yet. Only the one who took
// the call (Tunnel.take) delivers it.
func (c *Call) deliver(a answer) {
	c.mu.Lock()
	taking, out, done, doneC := c.taking, c.out, c.done, c.doneC
	if !taking {
		kept := a // on the heap only on this path
		kept.body = bytes.Clone(a.body)
		c.got = &kept
	}
	c.mu.Unlock()
	if taking {
		finish(outcome(a, out), done, doneC)
	}
}

// outcome is the error an answer gives, out having received its JSON body.
func outcome(a answer, out any) error {
	switch {
	case a.lost:
		return ErrLost
	case a.status >= 400:
		return rest.ErrorOf(a.status, a.body)
	case out == nil || len(a.body) == 0 || string(a.body) == "null":
		return nil
	}
	if err := decodeValid(a.body, out); err != nil {
		return &rest.Error{Status: a.status, Message: "malformed response: " + err.Error(), Body: string(a.body), Err: err}
	}
	return nil
}

// decodeBody is json.Unmarshal(body, out), without encoding/json's own validating pass and
// reflection when out decodes itself from any valid JSON (json.Unmarshaler, as a lobby message
// does): encoding/json would check body and hand it, without the white space around it, to
// UnmarshalJSON.
func decodeBody(body []byte, out any) error {
	if !jsonscan.Valid(body) {
		return json.Unmarshal(body, out) // and its errors
	}
	return decodeValid(body, out)
}

// decodeValid is decodeBody for a body known to be valid JSON, as an answer's is: the body is not
// scanned again before out decodes it.
func decodeValid(body []byte, out any) error {
	u, ok := out.(json.Unmarshaler)
	if !ok || reflect.ValueOf(out).Kind() != reflect.Pointer || isNilPointer(out) {
		return json.Unmarshal(body, out) // and its errors
	}
	end := len(body)
	for end > 0 && jsonscan.Space(body, end-1) == end {
		end--
	}
	return u.UnmarshalJSON(body[jsonscan.Space(body, 0):end])
}
