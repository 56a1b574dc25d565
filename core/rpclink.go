package core

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"sdkpp/core/callbacks"
	"sdkpp/core/rpc"
)

// rpcLink is the Client's connection to the local desktop client (core/rpc), made on first use,
// and its event subscriptions. Its lock is its own; Client.mu is never taken while it is held.
type rpcLink struct {
	mu     sync.Mutex
	closed bool // set by closeRPC: no connection is made after it
	client *rpc.Client
	auth   rpcSub // AUTHORIZE_REQUEST
	join   rpcSub // ACTIVITY_JOIN

	voiceSettings rpcSub // VOICE_SETTINGS_UPDATE
}

// rpcSub is one event subscription to the desktop client: the handler's scope and the way to
// end it. seq tells a finished subscribe call whether it is still wanted.
type rpcSub struct {
	scope *callbacks.Scope
	unsub func()
	seq   uint64
}

// rpcClientLocked returns the desktop-client connection, starting it on first use. c.rpc.mu is
// held.
func (c *Client) rpcClientLocked() (*rpc.Client, error) {
	if c.rpc.client != nil {
		return c.rpc.client, nil
	}
	if c.rpc.closed {
		return nil, errClosed
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
	c.subscribeRPC("RegisterAuthorizeRequestCallback", &c.rpc.auth, rpc.EvtAuthorizeRequest,
		c.scope.NewScope(cb.Release), func(json.RawMessage) func() { return cb.Fn })
}

// subscribeRPC replaces sub with a subscription to evt whose events run the function handle
// returns (nil to skip an event) in scope, on the game's thread. It lasts across restarts of the
// desktop client until it is removed or the Client closes.
func (c *Client) subscribeRPC(op string, sub *rpcSub, evt string, scope *callbacks.Scope, handle func(json.RawMessage) func()) {
	c.rpc.mu.Lock()
	rc, err := c.rpcClientLocked()
	if err != nil {
		c.rpc.mu.Unlock()
		if !errors.Is(err, errClosed) {
			c.logf(LoggingSeverityError, "%s: %v", op, err)
		}
		scope.Close()
		return
	}
	sub.removeLocked()
	sub.seq++
	seq := sub.seq
	sub.scope = scope
	c.rpc.mu.Unlock()

	c.start(func(ctx context.Context) {
		unsub, err := rc.Subscribe(ctx, evt, nil, func(data json.RawMessage) {
			if fn := handle(data); fn != nil {
				scope.Post(fn)
			}
		})
		if err != nil {
			if ctx.Err() == nil { // not because the Client is closing
				c.logf(LoggingSeverityWarning, "%s: %v", op, err)
			}
			return
		}
		c.rpc.mu.Lock()
		current := sub.seq == seq && sub.scope == scope
		if current {
			sub.unsub = unsub
		}
		c.rpc.mu.Unlock()
		if !current {
			unsub() // removed or replaced while subscribing
		}
	})
}

// RemoveAuthorizeRequestCallback ends the AUTHORIZE_REQUEST subscription and releases its
// callback.
func (c *Client) RemoveAuthorizeRequestCallback() {
	c.rpc.mu.Lock()
	c.rpc.auth.removeLocked()
	c.rpc.mu.Unlock()
}

// removeLocked ends the subscription and releases its handler. c.rpc.mu is held.
func (s *rpcSub) removeLocked() {
	if s.unsub != nil {
		s.unsub()
	}
	if s.scope != nil {
		s.scope.Close()
	}
	s.scope, s.unsub = nil, nil
	s.seq++
}

// closeRPC stops the desktop-client connection. Called by Close.
func (c *Client) closeRPC() {
	c.rpc.mu.Lock()
	rc := c.rpc.client
	c.rpc.client, c.rpc.closed = nil, true
	c.rpc.mu.Unlock()
	if rc != nil {
		rc.Close()
	}
}
