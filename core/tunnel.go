package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/rest"
	gwire "sdkpp/wire/gateway"
)

// API requests over the gateway (the service's op 100, an sdkpp extension).
//
// A lobby message sent over the gateway connection the SDK already holds reaches the other
// players sooner than one sent as an HTTP request: no connection to take from the pool, no
// headers, no token lookup. The answer comes back as an SDKPP_REQUEST_RESULT dispatch. When the
// connection breaks before the answer (even if the session then resumes, the request may have
// been lost on the way), or no answer comes in time, the SDK cannot know whether the request ran:
// it repeats it over HTTP, which is safe only for requests the service makes idempotent with a
// nonce (a lobby message with enforce_nonce). An answer that comes later is dropped.

const (
	// tunnelWait is how long a request waits for its answer over the gateway before it is
	// repeated over HTTP.
	tunnelWait = 15 * time.Second
)

// errTunnelLost: the session a request was sent on ended before its answer came.
var errTunnelLost = errors.New("the gateway session ended before the answer")

// tunnel matches the answers of requests sent over the gateway to their callers.
type tunnel struct {
	enabled atomic.Bool // the service named gwire.FeatureRequests in the last READY
	mu      sync.Mutex
	pending map[string]chan tunnelAnswer // by nonce
}

// enable records whether the service of the current session takes requests over the gateway.
func (t *tunnel) enable(on bool) { t.enabled.Store(on) }

// tunnelAnswer is a request's result, or lost.
type tunnelAnswer struct {
	status int
	body   json.RawMessage
	lost   bool
}

// newNonce returns 20 random hex characters: an idempotency nonce and a request's id.
func newNonce() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// wait registers nonce and returns the channel its answer arrives on.
func (t *tunnel) wait(nonce string) chan tunnelAnswer {
	ch := make(chan tunnelAnswer, 1)
	t.mu.Lock()
	if t.pending == nil {
		t.pending = make(map[string]chan tunnelAnswer)
	}
	t.pending[nonce] = ch
	t.mu.Unlock()
	return ch
}

// forget drops nonce's registration.
func (t *tunnel) forget(nonce string) {
	t.mu.Lock()
	delete(t.pending, nonce)
	t.mu.Unlock()
}

// answer delivers an SDKPP_REQUEST_RESULT dispatch to its caller; an unknown nonce (a caller that
// gave up) is dropped.
func (t *tunnel) answer(data json.RawMessage) {
	var r struct {
		Nonce  string          `json:"nonce"`
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	}
	if json.Unmarshal(data, &r) != nil || r.Nonce == "" {
		return
	}
	t.mu.Lock()
	ch := t.pending[r.Nonce]
	delete(t.pending, r.Nonce)
	t.mu.Unlock()
	if ch != nil {
		ch <- tunnelAnswer{status: r.Status, body: r.Body}
	}
}

// lost tells every waiting caller that its answer may not come (the connection broke).
func (t *tunnel) lost() {
	t.mu.Lock()
	pending := t.pending
	t.pending = nil
	t.mu.Unlock()
	for _, ch := range pending {
		ch <- tunnelAnswer{lost: true}
	}
}

// requestData is op 100's d, {"nonce","method","path","body"}, with body (encoded by
// encoding/json, so valid) put in as it is: marshalling it inside a struct would check and copy
// it again, for every message sent.
func requestData(nonce, method, path string, body json.RawMessage) ([]byte, error) {
	head, err := json.Marshal(struct {
		Nonce  string `json:"nonce"`
		Method string `json:"method"`
		Path   string `json:"path"`
	}{nonce, method, path})
	if err != nil || len(body) == 0 {
		return head, err
	}
	d := make([]byte, 0, len(head)+len(body)+9)
	d = append(d, head[:len(head)-1]...) // without its closing brace
	d = append(d, `,"body":`...)
	d = append(d, body...)
	return append(d, '}'), nil
}

// doIdempotent runs an API request over the gateway when the connection is Ready, and over HTTP
// when it is not, or when the gateway's answer was lost or late: req must be idempotent (see
// above). out receives the JSON answer.
func (c *Client) doIdempotent(ctx context.Context, req rest.Request, out any) error {
	err := c.viaGateway(ctx, req, out)
	if err == nil || !errors.Is(err, errTunnelLost) {
		return err
	}
	c.logf(LoggingSeverityVerbose, "%s %s: %v; sending it over HTTP", req.Method, req.Path, err)
	return c.api.Do(ctx, req, out)
}

// viaGateway sends req over the gateway and waits for its answer. It fails with errTunnelLost
// when the request may or may not have run.
func (c *Client) viaGateway(ctx context.Context, req rest.Request, out any) error {
	c.mu.Lock()
	gw := c.conn.gw
	c.mu.Unlock()
	var body json.RawMessage
	if req.JSON != nil {
		b, err := json.Marshal(req.JSON)
		if err != nil {
			return &rest.Error{Network: true, Message: "encode request: " + err.Error(), Err: err}
		}
		body = b
	}
	if gw == nil || req.Form != nil || !c.tunnel.enabled.Load() {
		return errTunnelLost // not sent: HTTP is the way
	}
	nonce := newNonce()
	d, err := requestData(nonce, req.Method, req.Path, body)
	if err != nil {
		return &rest.Error{Network: true, Message: "encode request: " + err.Error(), Err: err}
	}
	ch := c.tunnel.wait(nonce)
	err = gw.SendRaw(ctx, gwire.OpRequest, d)
	if err != nil { // not Ready, or the write failed: perhaps sent
		c.tunnel.forget(nonce)
		return errTunnelLost
	}
	timer := c.clock.NewTimer(tunnelWait)
	defer timer.Stop()
	var a tunnelAnswer
	select {
	case a = <-ch:
	case <-timer.C():
		c.tunnel.forget(nonce)
		return errTunnelLost
	case <-ctx.Done():
		c.tunnel.forget(nonce)
		return errTunnelLost
	}
	switch {
	case a.lost:
		return errTunnelLost
	case a.status >= 400:
		return rest.ErrorOf(a.status, a.body)
	case out == nil || len(a.body) == 0 || string(a.body) == "null":
		return nil
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return &rest.Error{Status: a.status, Message: "malformed response: " + err.Error(), Body: string(a.body), Err: err}
	}
	return nil
}
