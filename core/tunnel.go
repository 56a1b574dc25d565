package core

import (
	"context"
	"errors"

	"sdkpp/core/rest"
	"sdkpp/core/tunnel"
)

// idempotentCall writes req over the Ready gateway on the calling thread (on a worker while many
// wait: tunnel.SendThen), and calls done with its outcome (out holds the answer) on the goroutine
// reading the answer. Not written, lost or late, req goes over HTTP on a worker: it is idempotent.
func (c *Client) idempotentCall(req rest.Request, out any, done func(error)) {
	var gw tunnel.Sender
	if g := c.gateway(); g != nil {
		gw = g
	}
	handOff := func(f func()) { c.start(func(context.Context) { f() }) }
	c.tunnel.SendThen(handOff, c.ctx, gw, req, out, func(err error) {
		if err == nil || !errors.Is(err, tunnel.ErrLost) {
			done(err)
			return
		}
		c.logf(LoggingSeverityVerbose, "%s %s: %v; sending it over HTTP", req.Method, req.Path, err)
		c.start(func(ctx context.Context) { done(c.api.Do(ctx, req, out)) })
	})
}
