package core

import (
	"encoding/json"
	"errors"

	"sdkpp/core/callbacks"
	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/rpc"
)

// The Client's link to the local desktop client is a core/rpc.Link; these are its facade and the
// subscriptions of the Client's callbacks.

// Names of the Client's subscriptions to the desktop client.
const (
	subAuthorizeRequest = "RegisterAuthorizeRequestCallback" // AUTHORIZE_REQUEST
	subActivityJoin     = "SetActivityJoinCallback"          // ACTIVITY_JOIN
	subVoiceSettings    = "SetVoiceSettingsUpdatedCallback"  // VOICE_SETTINGS_UPDATE
)

// newRPCLink returns the Client's link to the desktop client.
func (c *Client) newRPCLink() *rpc.Link {
	return &rpc.Link{
		Config: func() (rpc.Config, error) {
			if c.appID.Load() == 0 {
				return rpc.Config{}, sdkerr.Invalid("call SetApplicationId first: the desktop client needs the application id")
			}
			return rpc.Config{
				ApplicationID: c.appID.Load(),
				Logf:          c.logAt(LoggingSeverityVerbose),
				OnError:       func(e *rpc.Error) { c.logf(LoggingSeverityWarning, "desktop client error: %v", e) },
			}, nil
		},
		Start: c.start,
		Warn:  c.logAt(LoggingSeverityWarning),
	}
}

// RegisterAuthorizeRequestCallback runs cb each time the user starts account linking from the
// platform's desktop client (AUTHORIZE_REQUEST). The subscription lasts across restarts of the
// desktop client (rule RPC-2) until RemoveAuthorizeRequestCallback or Close; a new registration
// replaces the previous one.
func (c *Client) RegisterAuthorizeRequestCallback(cb Callback[ClientAuthorizeRequestCallback]) {
	c.subscribeRPC(subAuthorizeRequest, rpc.EvtAuthorizeRequest, c.scope.NewScope(cb.Release),
		func(json.RawMessage) func() { return cb.Fn })
}

// subscribeRPC makes name a subscription to evt whose events run the function handle returns
// (nil to skip an event) in scope, on the game's thread.
func (c *Client) subscribeRPC(name, evt string, scope *callbacks.Scope, handle func(json.RawMessage) func()) {
	err := c.rpc.Subscribe(name, evt, func(data json.RawMessage) {
		if fn := handle(data); fn != nil {
			scope.Post(fn)
		}
	}, scope.Close)
	if err != nil && !errors.Is(err, sdkerr.ErrClosed) {
		c.logf(LoggingSeverityError, "%s: %v", name, err)
	}
}
