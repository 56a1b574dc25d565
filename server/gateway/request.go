package gateway

import (
	"context"
	"encoding/json"
	"sync"

	"sdkpp/server/gateway/internal/oprequest"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/server/httpx"
	gwire "sdkpp/wire/gateway"
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

// requester is what the reader goroutine needs to serve requests once the connection is
// identified: the session's token and the session that gets the answers.
type requester struct {
	token string // never logged
	sess  *session
	memo  httpx.SessionMemo // what the token grants, for the session's requests (token.Auth.Bearer)
	once  sync.Once
	ctx   context.Context // the requests' context, with memo; made once (context)
}

// context is the context of the session's requests.
func (rq *requester) context(h *Hub) context.Context {
	rq.once.Do(func() { rq.ctx = httpx.WithSessionMemo(context.WithoutCancel(h.ctx), &rq.memo) })
	return rq.ctx
}

// maxQueued bounds the requests a connection accepted whose answers were not sent: past it, the
// reader reads nothing more until some are (back-pressure on the client).
const maxQueued = 64

// serveInline serves data on the reader goroutine when it is an gwire.OpRequest of an identified
// connection, and reports whether it did; anything else (including a malformed request, which
// closes the connection) goes to the loop. Serving requests where they are read spares two
// goroutine hand-offs per request, and keeps one connection's requests in order
// (serveAndAnswer).
func (c *conn) serveInline(data []byte) bool {
	rq := c.requester.Load()
	if rq == nil || c.h.cfg.Requests == nil {
		return false
	}
	r, ok := oprequest.Read(data)
	if !ok {
		return false
	}
	c.serveAndAnswer(rq, r, true)
	return true
}

// serveAndAnswer serves r and dispatches its result to the requester's session. On the reader
// (reader), a request that Accept takes joins the connection's queue, handed to the queue's
// goroutine at once when it is idle (its commit starts while the next ones are accepted), else
// when no whole message of the client waits (not one still arriving); the goroutine takes the
// answers while the reader reads on, batch after batch, and any other request waits for them
// first. With Config.AnswerInline, the requests read together are all accepted first, and once
// no whole message waits, two or more are answered here while the goroutine has nothing in
// flight (oprequest.Queue.Run): no hand-off between goroutines per batch. A lone request is
// handed, so that what its client sends next is accepted, and delivered, during its commit.
//
// What the requests dispatch to this connection meanwhile (a sent message, to its author)
// waits for the answers and leaves with them: the client is woken once, and its copy does not
// take a core from the other players' clients while they receive theirs.
func (c *conn) serveAndAnswer(rq *requester, r gwire.Request, reader bool) {
	c.serving.Store(true)
	if a, ok := c.accept(rq, r); ok && reader {
		c.queue().Add(r.Nonce, a) // waits while maxQueued answers wait
		switch {
		case c.h.cfg.AnswerInline:
			switch {
			case c.fr.MessageBuffered(): // those read together are accepted first
			case c.queued.Added() > 1: // then committed together
				c.queued.Run()
			default: // a lone request: the reader accepts what follows while it commits
				c.queued.Hand()
			}
		case c.fr.Buffered() == 0 || c.queued.Idle() || !c.fr.MessageBuffered():
			c.queued.Hand()
		}
		return
	} else if ok {
		c.answered(oprequest.Answered(r.Nonce, a, c.panicked(r)))
		return
	}
	if reader && c.queued != nil {
		c.queued.Wait()
	}
	c.serving.Store(true)
	c.answered(oprequest.Serve(c.h.cfg.Requests, rq.context(c.h), c.remoteAddr, rq.token, r, c.panicked(r)))
}

// accept offers r to Accept.
func (c *conn) accept(rq *requester, r gwire.Request) (oprequest.Answer, bool) {
	return oprequest.Accept(c.h.cfg.Accept, rq.context(c.h), c.remoteAddr, rq.token, r, c.panicked(r))
}

// panicked logs the panic of r's handler.
func (c *conn) panicked(r gwire.Request) func(p any) {
	return func(p any) {
		c.h.log.Error("gateway: request handler panicked", "method", r.Method, "path", r.Path, "panic", p)
	}
}

// queue returns the reader's queue of accepted requests, made at its first use.
func (c *conn) queue() *oprequest.Queue {
	if c.queued == nil {
		c.queued = oprequest.NewQueue(maxQueued, func(ds [][]byte) { c.answered(ds...) }, c.panicked(gwire.Request{}))
		c.queued.OnHand = c.h.cfg.Accepted
	}
	return c.queued
}

// answered dispatches results, in order, to the session of the connection's requests.
func (c *conn) answered(ds ...[]byte) {
	c.serving.Store(false)
	c.h.answer(c.requester.Load().sess, ds...)
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
	r, ok := oprequest.Valid(d)
	if !ok {
		return decodeError("invalid request payload")
	}
	c.serveAndAnswer(c.requester.Load(), r, false)
	if r, stop := c.flush(); stop {
		return r, true
	}
	return wsframe.Close{}, false
}

// answer dispatches requests' results, in order, to the session they came on, if the session
// still exists.
func (h *Hub) answer(s *session, ds ...[]byte) {
	h.mu.Lock()
	if s == nil || h.sessions[s.id] != s {
		h.mu.Unlock()
		return
	}
	for _, d := range ds {
		s.Push(oprequest.ResultEvent, d, h.cfg.ReplayLimit)
	}
	c := s.conn
	h.mu.Unlock()
	if c != nil {
		c.flushNow(true)
	}
}
