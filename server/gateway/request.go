package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"sdkpp/internal/jsonscan"
)

// API requests over the gateway: an sdkpp extension (the platform has no such opcode).
//
// A game's SDK already holds an identified WebSocket; sending a lobby message over it spares an
// HTTP request its own round trip, its headers and the token lookup, which is most of the time
// between a send and the other players' MESSAGE_CREATE. The request is served by the same API
// handler as over HTTP, with the session's token, so it gets the same checks, errors and rate
// limits. Its answer is a dispatch to the session (EventRequestResult): it has a sequence number
// and is replayed on Resume like any event, so a client that resumes gets it; a client whose
// session is lost instead cannot know whether the request ran, and repeats it over HTTP with the
// same idempotency nonce where the route has one.
const (
	// OpRequest is client → server: d is a Request. It does not count against the payload rate
	// limit (the API's own limits apply) and may be up to Config.MaxRequestBytes long.
	OpRequest = 100
	// EventRequestResult is the dispatch that answers an OpRequest: d is a RequestResult.
	EventRequestResult = "SDKPP_REQUEST_RESULT"
	// DefaultMaxRequestBytes bounds an OpRequest payload: a message of 2000 characters of four
	// UTF-8 bytes each, escaped, with its metadata.
	DefaultMaxRequestBytes = 64 << 10
	// MaxNonceChars bounds Request.Nonce.
	MaxNonceChars = 64
)

// Request is the d of OpRequest.
type Request struct {
	Nonce  string          `json:"nonce"`          // 1-64 characters, echoed in the result
	Method string          `json:"method"`         // GET, POST, PUT, PATCH or DELETE
	Path   string          `json:"path"`           // below the API base, e.g. "/lobbies/1/messages"
	Body   json.RawMessage `json:"body,omitempty"` // the JSON body, if any
}

// RequestResult is the d of EventRequestResult.
type RequestResult struct {
	Nonce  string          `json:"nonce"`
	Status int             `json:"status"` // the HTTP status the request got
	Body   json.RawMessage `json:"body"`   // the JSON answer; null when it had none
}

// features lists READY's sdkpp_features.
func (h *Hub) features() []string {
	if h.cfg.Requests == nil {
		return nil
	}
	return []string{FeatureRequests}
}

// validRequest checks an OpRequest's d.
func validRequest(d json.RawMessage) (Request, bool) {
	var r Request
	if !decodeObject(d, &r) {
		return r, false
	}
	return r, checkRequest(r)
}

// checkRequest checks a decoded Request's fields.
func checkRequest(r Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	return r.Nonce != "" && len(r.Nonce) <= MaxNonceChars &&
		strings.HasPrefix(r.Path, "/") && !strings.HasPrefix(r.Path, "//") && !strings.ContainsAny(r.Path, "#\r\n\x00")
}

// fastRequest reads the OpRequest the SDK sends, {"op":100,"d":{"nonce","method","path","body"}}
// with plain strings, in one pass (jsonscan): encoding/json would scan the payload three times
// and copy the body twice, which was a tenth of a lobby message's time in the service. It returns
// what encoding/json would decode, and false for anything else (another opcode, an unusual
// spelling, invalid JSON), which then takes the encoding/json path.
func fastRequest(data []byte) (Request, bool) {
	var r Request
	var op, d []byte
	if !jsonscan.Object(data, func(k, v []byte) bool {
		switch string(k) {
		case "op":
			op = v
		case "d":
			d = v
		}
		return true
	}) || string(op) != "100" || len(d) == 0 || d[0] != '{' {
		return r, false
	}
	ok := jsonscan.Object(d, func(k, v []byte) bool {
		var ok bool
		switch string(k) {
		case "nonce":
			r.Nonce, ok = jsonscan.Plain(v)
		case "method":
			r.Method, ok = jsonscan.Plain(v)
		case "path":
			r.Path, ok = jsonscan.Plain(v)
		case "body":
			r.Body, ok = json.RawMessage(v), true
		default:
			ok = true // ignored, as encoding/json ignores it
		}
		return ok
	})
	return r, ok
}

// requester is what the reader goroutine needs to serve requests once the connection is
// identified: the session's token and the session that gets the answers.
type requester struct {
	token string // never logged
	sess  *session
}

// serveInline serves data on the reader goroutine when it is an OpRequest of an identified
// connection, and reports whether it did; anything else (including a malformed request, which
// closes the connection) goes to the loop. Serving requests where they are read spares two
// goroutine hand-offs per request, and keeps one connection's requests in order: the next is read
// once the previous is answered.
func (c *conn) serveInline(data []byte) bool {
	rq := c.requester.Load()
	if rq == nil || c.h.cfg.Requests == nil {
		return false
	}
	r, ok := fastRequest(data)
	if !ok {
		var p struct {
			Op *int            `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if !decodeObject(data, &p) || p.Op == nil || *p.Op != OpRequest {
			return false
		}
		if r, ok = validRequest(p.D); !ok {
			return false
		}
	} else if !checkRequest(r) {
		return false
	}
	c.serveAndAnswer(rq, r)
	return true
}

// serveAndAnswer serves r and dispatches its result to the requester's session.
//
// What the request dispatches to this connection meanwhile (a sent message, to its author)
// waits for the answer and leaves with it: the client is woken once, and its copy does not take
// a core from the other players' clients while they receive theirs.
func (c *conn) serveAndAnswer(rq *requester, r Request) {
	c.serving.Store(true)
	d, err := json.Marshal(c.serve(rq.token, r))
	c.serving.Store(false)
	if err != nil { // a RequestResult always encodes: its body is checked JSON
		c.h.log.Error("gateway: request result cannot be encoded", "err", err)
		c.signal() // what waited for the answer
		return
	}
	c.h.answer(rq.sess, d)
}

// request is op 100 reaching the loop: malformed, sent before Identify, or read before the loop
// had finished the Identify (or Resume) that preceded it, which it then serves here.
func (c *conn) request(d json.RawMessage) (closeReq, bool) {
	if c.h.cfg.Requests == nil {
		return closeReq{code: CloseUnknownOpcode, reason: "unknown opcode"}, true
	}
	if !c.authed {
		return closeReq{code: CloseNotAuthenticated, reason: "not authenticated"}, true
	}
	r, ok := validRequest(d)
	if !ok {
		return decodeError("invalid request payload")
	}
	c.serveAndAnswer(c.requester.Load(), r)
	if r, stop := c.flush(); stop {
		return r, true
	}
	return closeReq{}, false
}

// serve runs one request through the API handler with the session's token.
func (c *conn) serve(token string, r Request) (res RequestResult) {
	defer func() { // net/http recovers a handler's panic; this goroutine must too
		if p := recover(); p != nil {
			c.h.log.Error("gateway: request handler panicked", "method", r.Method, "path", r.Path, "panic", p)
			res = RequestResult{Nonce: r.Nonce, Status: http.StatusInternalServerError, Body: errorBody(0, "500: Internal Server Error")}
		}
	}()
	var body *bytes.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	} else {
		body = bytes.NewReader(nil)
	}
	hr, err := http.NewRequestWithContext(context.WithoutCancel(c.h.ctx), r.Method, r.Path, body)
	if err != nil {
		return RequestResult{Nonce: r.Nonce, Status: http.StatusBadRequest, Body: errorBody(50035, "Invalid Form Body")}
	}
	hr.RemoteAddr = c.remoteAddr
	hr.Header.Set("Authorization", "Bearer "+token)
	if len(r.Body) > 0 {
		hr.Header.Set("Content-Type", "application/json")
	}
	w := &recorder{header: make(http.Header), status: http.StatusOK}
	c.h.cfg.Requests.ServeHTTP(w, hr)
	out := bytes.TrimSpace(w.body.Bytes())
	switch {
	case len(out) == 0:
		out = []byte("null")
	case !jsonscan.Valid(out):
		out, _ = json.Marshal(string(out))
	}
	return RequestResult{Nonce: r.Nonce, Status: w.status, Body: out}
}

// errorBody is the platform's {"code","message"} error body.
func errorBody(code int, message string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message})
	return b
}

// answer dispatches a request's result to the session it came on, if the session still exists.
func (h *Hub) answer(s *session, d []byte) {
	h.mu.Lock()
	if s == nil || h.sessions[s.id] != s {
		h.mu.Unlock()
		return
	}
	s.push([]byte(`"`+EventRequestResult+`"`), d, h.cfg.ReplayLimit)
	c := s.conn
	h.mu.Unlock()
	if c != nil {
		h.deliver([]*conn{c})
	}
}

// recorder is the http.ResponseWriter of a request over the gateway.
type recorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
