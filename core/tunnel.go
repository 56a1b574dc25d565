package core

import (
	"context"
	"errors"

	"sdkpp/core/rest"
	"sdkpp/core/tunnel"
)

// idempotentCall writes req over the Ready gateway (core/tunnel) on the calling thread, and calls
// done with its outcome (out holds the answer) on the goroutine reading the answer: no worker is
// woken. Not written, lost or late, req goes over HTTP on a worker: it must be idempotent.
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
