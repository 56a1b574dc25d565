package core

import (
	"context"
	"errors"

	"sdkpp/core/rest"
	"sdkpp/core/tunnel"
)

// doIdempotent runs an API request over the gateway when the connection is Ready (core/tunnel),
// and over HTTP when it is not, or when the gateway's answer was lost or late: req must be
// idempotent (a nonce the service enforces). out receives the JSON answer.
func (c *Client) doIdempotent(ctx context.Context, req rest.Request, out any) error {
	var gw tunnel.Sender
	if g := c.gateway(); g != nil {
		gw = g
	}
	err := c.tunnel.Do(ctx, gw, c.clock, req, out)
	if err == nil || !errors.Is(err, tunnel.ErrLost) {
		return err
	}
	c.logf(LoggingSeverityVerbose, "%s %s: %v; sending it over HTTP", req.Method, req.Path, err)
	return c.api.Do(ctx, req, out)
}
