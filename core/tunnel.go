package core

import (
	"context"
	"errors"

	"sdkpp/core/rest"
	"sdkpp/core/tunnel"
)

// idempotentCall sends an API request over the gateway when the connection is Ready
// (core/tunnel), written on the calling thread, and calls done once with its outcome, out having
// received its JSON answer: on the gateway client's goroutine, which reads the answer (no
// goroutine waits for it). When the request was not written, or its answer was lost or late, it
// goes over HTTP on a worker, and done runs there: req must be idempotent (a nonce the service
// enforces).
//
// A lone lobby message so leaves without waiting for a worker to be woken, and its answer is
// taken without waking one.
func (c *Client) idempotentCall(req rest.Request, out any, done func(error)) {
	var gw tunnel.Sender
	if g := c.gateway(); g != nil {
		gw = g
	}
	c.tunnel.Send(c.ctx, gw, req).Then(c.clock, out, func(err error) {
		if err == nil || !errors.Is(err, tunnel.ErrLost) {
			done(err)
			return
		}
		c.logf(LoggingSeverityVerbose, "%s %s: %v; sending it over HTTP", req.Method, req.Path, err)
		c.start(func(ctx context.Context) { done(c.api.Do(ctx, req, out)) })
	})
}
