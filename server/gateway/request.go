package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"sdkpp/server/gateway/internal/payload"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/server/httpx"
	gwire "sdkpp/wire/gateway"

	"sdkpp/internal/jsonscan"
)

// features lists READY's sdkpp_features.
func (h *Hub) features() []string {
	var f []string
	if h.cfg.Requests != nil {
		f = append(f, gwire.FeatureRequests)
	}
	if h.cfg.Voice != nil {
		f = append(f, gwire.FeatureVoice)
	}
	return f
}

// validRequest checks an gwire.OpRequest's d.
func validRequest(d json.RawMessage) (gwire.Request, bool) {
	var r gwire.Request
	if !payload.DecodeObject(d, &r) {
		return r, false
	}
	return r, r.Valid()
}

// requester is what the reader goroutine needs to serve requests once the connection is
// identified: the session's token and the session that gets the answers.
type requester struct {
	token string // never logged
	sess  *session
	memo  httpx.SessionMemo // what the token grants, for the session's requests (token.Auth.Bearer)
}

// serveInline serves data on the reader goroutine when it is an gwire.OpRequest of an identified
// connection, and reports whether it did; anything else (including a malformed request, which
// closes the connection) goes to the loop. Serving requests where they are read spares two
// goroutine hand-offs per request, and keeps one connection's requests in order: the next is read
// once the previous is answered.
func (c *conn) serveInline(data []byte) bool {
	rq := c.requester.Load()
	if rq == nil || c.h.cfg.Requests == nil {
		return false
	}
	r, ok := gwire.ReadRequest(data)
	if !ok {
		var p struct {
			Op *int            `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if !payload.DecodeObject(data, &p) || p.Op == nil || *p.Op != gwire.OpRequest {
			return false
		}
		if r, ok = validRequest(p.D); !ok {
			return false
		}
	} else if !r.Valid() {
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
func (c *conn) serveAndAnswer(rq *requester, r gwire.Request) {
	c.serving.Store(true)
	d, err := json.Marshal(c.serve(rq, r))
	c.serving.Store(false)
	if err != nil { // a gwire.RequestResult always encodes: its body is checked JSON
		c.h.log.Error("gateway: request result cannot be encoded", "err", err)
		c.signal() // what waited for the answer
		return
	}
	c.h.answer(rq.sess, d)
}

// request is op 100 reaching the loop: malformed, sent before gwire.Identify, or read before the loop
// had finished the gwire.Identify (or gwire.Resume) that preceded it, which it then serves here.
func (c *conn) request(d json.RawMessage) (wsframe.Close, bool) {
	if c.h.cfg.Requests == nil {
		return wsframe.Close{Code: gwire.CloseUnknownOpcode, Reason: "unknown opcode"}, true
	}
	if !c.authed {
		return wsframe.Close{Code: gwire.CloseNotAuthenticated, Reason: "not authenticated"}, true
	}
	r, ok := validRequest(d)
	if !ok {
		return decodeError("invalid request payload")
	}
	c.serveAndAnswer(c.requester.Load(), r)
	if r, stop := c.flush(); stop {
		return r, true
	}
	return wsframe.Close{}, false
}

// serve runs one request through the API handler with the session's token and memo.
func (c *conn) serve(rq *requester, r gwire.Request) (res gwire.RequestResult) {
	defer func() { // net/http recovers a handler's panic; this goroutine must too
		if p := recover(); p != nil {
			c.h.log.Error("gateway: request handler panicked", "method", r.Method, "path", r.Path, "panic", p)
			res = gwire.RequestResult{Nonce: r.Nonce, Status: http.StatusInternalServerError, Body: errorBody(0, "500: Internal Server Error")}
		}
	}()
	var body *bytes.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	} else {
		body = bytes.NewReader(nil)
	}
	hr, err := http.NewRequestWithContext(httpx.WithSessionMemo(context.WithoutCancel(c.h.ctx), &rq.memo), r.Method, r.Path, body)
	if err != nil {
		return gwire.RequestResult{Nonce: r.Nonce, Status: http.StatusBadRequest, Body: errorBody(50035, "Invalid Form Body")}
	}
	hr.RemoteAddr = c.remoteAddr
	hr.Header.Set("Authorization", rq.token) // with its scheme: Bearer, or Bot for a bot session
	if len(r.Body) > 0 {
		hr.Header.Set("Content-Type", "application/json")
	}
	w := httpx.NewRecorder()
	c.h.cfg.Requests.ServeHTTP(w, hr)
	out := bytes.TrimSpace(w.Body.Bytes())
	switch {
	case len(out) == 0:
		out = []byte("null")
	case !jsonscan.Valid(out):
		out, _ = json.Marshal(string(out))
	}
	return gwire.RequestResult{Nonce: r.Nonce, Status: w.Status, Body: out}
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
	s.Push([]byte(`"`+gwire.EventRequestResult+`"`), d, h.cfg.ReplayLimit)
	c := s.conn
	h.mu.Unlock()
	if c != nil {
		c.flushNow(true)
	}
}
