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

// Sender writes one gateway payload; the gateway client (core/gateway) is one.
type Sender interface {
	SendRaw(ctx context.Context, op int, d []byte) error
}

// Tunnel matches the answers of requests sent over the gateway to their callers. Its zero value
// is ready to use; its methods may be called from any goroutine.
type Tunnel struct {
	enabled atomic.Bool // the service named gwire.FeatureRequests in the last READY
	mu      sync.Mutex
	pending map[string]chan answer // by nonce
}

// Enable records whether the service of the current session takes requests over the gateway.
func (t *Tunnel) Enable(on bool) { t.enabled.Store(on) }

// answer is a request's result, or lost.
type answer struct {
	status int
	body   json.RawMessage
	lost   bool
}

// NewNonce returns 20 random hex characters: an idempotency nonce and a request's id.
func NewNonce() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

func (t *Tunnel) wait(nonce string) chan answer {
	ch := make(chan answer, 1)
	t.mu.Lock()
	if t.pending == nil {
		t.pending = make(map[string]chan answer)
	}
	t.pending[nonce] = ch
	t.mu.Unlock()
	return ch
}

func (t *Tunnel) forget(nonce string) {
	t.mu.Lock()
	delete(t.pending, nonce)
	t.mu.Unlock()
}

// Answer delivers an SDKPP_REQUEST_RESULT dispatch to its caller; an unknown nonce (a caller that
// gave up) is dropped.
func (t *Tunnel) Answer(data json.RawMessage) {
	r, ok := decodeResult(data)
	if !ok || r.Nonce == "" {
		return
	}
	t.mu.Lock()
	ch := t.pending[r.Nonce]
	delete(t.pending, r.Nonce)
	t.mu.Unlock()
	if ch != nil {
		ch <- answer{status: r.Status, body: r.Body}
	}
}

// decodeResult decodes data, an SDKPP_REQUEST_RESULT dispatch's, as json.Unmarshal would (false
// where it fails): in one pass for the shape the service sends, where encoding/json scans it
// twice. Anything else (a key it does not know as written, which encoding/json might match
// case-insensitively, an escaped nonce, a status that is not a plain integer, invalid JSON) goes
// to encoding/json.
func decodeResult(data []byte) (gwire.RequestResult, bool) {
	var r gwire.RequestResult
	ok := jsonscan.Object(data, func(k, v []byte) bool {
		var ok bool
		switch string(k) {
		case "nonce":
			r.Nonce, ok = jsonscan.Plain(v)
		case "status":
			n, err := strconv.Atoi(string(v))
			r.Status, ok = n, err == nil
		case "body":
			r.Body, ok = append(json.RawMessage(nil), v...), true // data may be its reader's buffer
		}
		return ok
	})
	if ok {
		return r, true
	}
	r = gwire.RequestResult{}
	return r, json.Unmarshal(data, &r) == nil
}

// Lost tells every waiting caller that its answer may not come (the connection broke).
func (t *Tunnel) Lost() {
	t.mu.Lock()
	pending := t.pending
	t.pending = nil
	t.mu.Unlock()
	for _, ch := range pending {
		ch <- answer{lost: true}
	}
}

// encodeBody encodes a request's JSON body (none for nil): with its own encoder when it has one
// (wire.Appender, as a lobby message has), else with encoding/json.
func encodeBody(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if a, ok := v.(wire.Appender); ok && !isNilPointer(v) {
		return a.AppendJSON(nil), nil
	}
	return json.Marshal(v)
}

// isNilPointer reports whether v holds a nil pointer, which encoding/json encodes as null and
// whose AppendJSON may not be callable.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// requestData is op 100's d, {"nonce","method","path","body"}, with body (valid JSON) put in as
// it is: marshalling it inside a struct would check and copy it again, for every message sent.
// The nonce, the method and the path are written as they are when no byte of them needs an
// escape in JSON, as for every request the SDK makes; else encoding/json writes them.
func requestData(nonce, method, path string, body json.RawMessage) ([]byte, error) {
	d := make([]byte, 0, len(nonce)+len(method)+len(path)+len(body)+48)
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
		}{nonce, method, path})
		if err != nil {
			return nil, err
		}
		d = append(d[:0], head[:len(head)-1]...) // without its closing brace
	}
	if len(body) > 0 {
		d = append(d, `,"body":`...)
		d = append(d, body...)
	}
	return append(d, '}'), nil
}

// plain reports whether s is printable ASCII that JSON (and encoding/json, which also escapes
// '<', '>' and '&') writes in quotes as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Do sends req over gw (nil when there is no connection) and waits, on clk, for its answer, which
// out receives as JSON. It fails with ErrLost when the request was not sent or may or may not
// have run; with a *rest.Error when the service answered with an error.
func (t *Tunnel) Do(ctx context.Context, gw Sender, clk clock.Clock, req rest.Request, out any) error {
	body, err := encodeBody(req.JSON)
	if err != nil {
		return &rest.Error{Network: true, Message: "encode request: " + err.Error(), Err: err}
	}
	if gw == nil || req.Form != nil || !t.enabled.Load() {
		return ErrLost // not sent: HTTP is the way
	}
	nonce := NewNonce()
	d, err := requestData(nonce, req.Method, req.Path, body)
	if err != nil {
		return &rest.Error{Network: true, Message: "encode request: " + err.Error(), Err: err}
	}
	ch := t.wait(nonce)
	if err := gw.SendRaw(ctx, gwire.OpRequest, d); err != nil { // not Ready, or the write failed: perhaps sent
		t.forget(nonce)
		return ErrLost
	}
	timer := clk.NewTimer(Wait)
	defer timer.Stop()
	var a answer
	select {
	case a = <-ch:
	case <-timer.C():
		t.forget(nonce)
		return ErrLost
	case <-ctx.Done():
		t.forget(nonce)
		return ErrLost
	}
	switch {
	case a.lost:
		return ErrLost
	case a.status >= 400:
		return rest.ErrorOf(a.status, a.body)
	case out == nil || len(a.body) == 0 || string(a.body) == "null":
		return nil
	}
	if err := decodeBody(a.body, out); err != nil {
		return &rest.Error{Status: a.status, Message: "malformed response: " + err.Error(), Body: string(a.body), Err: err}
	}
	return nil
}

// decodeBody is json.Unmarshal(body, out), without encoding/json's own validating pass and
// reflection when out decodes itself from any valid JSON (json.Unmarshaler, as a lobby message
// does): encoding/json would check body and hand it, without the white space around it, to
// UnmarshalJSON.
func decodeBody(body []byte, out any) error {
	u, ok := out.(json.Unmarshaler)
	if !ok || reflect.ValueOf(out).Kind() != reflect.Pointer || isNilPointer(out) || !jsonscan.Valid(body) {
		return json.Unmarshal(body, out) // and its errors
	}
	end := len(body)
	for end > 0 && jsonscan.Space(body, end-1) == end {
		end--
	}
	return u.UnmarshalJSON(body[jsonscan.Space(body, 0):end])
}
