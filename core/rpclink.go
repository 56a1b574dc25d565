package core

import (
	"context"

	"sdkpp/core/dispatch"
	"sdkpp/core/rpc"
)

// rpcLink is the Client's connection to the local desktop client, made on first use.
type rpcLink struct {
	client *rpc.Client
	// The AUTHORIZE_REQUEST subscription: the handler's scope and the way to end it.
	authScope *dispatch.Scope
	authUnsub func()
	authSeq   uint64
}

// rpcClient returns the desktop-client connection, starting it on first use. c.mu is held.
func (c *Client) rpcClientLocked() (*rpc.Client, error) {
	if c.rpc.client != nil {
		return c.rpc.client, nil
	}
	if c.appID.Load() == 0 {
		return nil, invalid("call SetApplicationId first: the desktop client needs the application id")
	}
	rc, err := rpc.New(rpc.Config{
		ApplicationID: c.appID.Load(),
		Logf:          func(format string, args ...any) { c.logf(LoggingSeverityVerbose, format, args...) },
		OnError: func(e *rpc.Error) {
			c.logf(LoggingSeverityWarning, "desktop client error: %v", e)
		},
	})
	if err != nil {
		return nil, err
	}
	c.rpc.client = rc
	return rc, nil
}

// RegisterAuthorizeRequestCallback runs cb each time the user starts account linking from the
// platform's desktop client (AUTHORIZE_REQUEST). The subscription lasts across restarts of the
// desktop client (rule RPC-2) until RemoveAuthorizeRequestCallback or Close; a new registration
// replaces the previous one.
func (c *Client) RegisterAuthorizeRequestCallback(cb Callback[ClientAuthorizeRequestCallback]) {
	scope := c.scope.NewScope(cb.Release)
	c.mu.Lock()
	rc, err := c.rpcClientLocked()
	if err != nil || c.closed {
		c.mu.Unlock()
		if err != nil {
			c.logf(LoggingSeverityError, "RegisterAuthorizeRequestCallback: %v", err)
		}
		scope.Close()
		return
	}
	c.removeAuthorizeLocked()
	c.rpc.authSeq++
	seq := c.rpc.authSeq
	c.rpc.authScope = scope
	c.mu.Unlock()

	c.start(func(ctx context.Context) {
		unsub, err := rc.SubscribeAuthorizeRequest(ctx, func() { scope.Post(func() { cb.Fn() }) })
		if err != nil {
			if ctx.Err() == nil { // not because the Client is closing
				c.logf(LoggingSeverityWarning, "RegisterAuthorizeRequestCallback: %v", err)
			}
			return
		}
		c.mu.Lock()
		current := c.rpc.authSeq == seq && c.rpc.authScope == scope
		if current {
			c.rpc.authUnsub = unsub
		}
		c.mu.Unlock()
		if !current {
			unsub() // removed or replaced while subscribing
		}
	})
}

// RemoveAuthorizeRequestCallback ends the AUTHORIZE_REQUEST subscription and releases its
// callback.
func (c *Client) RemoveAuthorizeRequestCallback() {
	c.mu.Lock()
	c.removeAuthorizeLocked()
	c.mu.Unlock()
}

// removeAuthorizeLocked ends the current subscription. c.mu is held.
func (c *Client) removeAuthorizeLocked() {
	if c.rpc.authUnsub != nil {
		c.rpc.authUnsub()
	}
	if c.rpc.authScope != nil {
		c.rpc.authScope.Close()
	}
	c.rpc.authScope, c.rpc.authUnsub = nil, nil
	c.rpc.authSeq++
}

// closeRPC stops the desktop-client connection. Called by Close.
func (c *Client) closeRPC() {
	c.mu.Lock()
	rc := c.rpc.client
	c.rpc.client = nil
	c.mu.Unlock()
	if rc != nil {
		rc.Close()
	}
}
