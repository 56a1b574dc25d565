package core

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	gwire "sdkpp/wire/gateway"

	"sdkpp/core/gateway"
	"sdkpp/core/lobbies"
	"sdkpp/core/messages"
	"sdkpp/core/rest"
	"sdkpp/core/social"
	"sdkpp/wire"
)

// connState is the Client's gateway connection, guarded by Client.mu, and its status handler.
type connState struct {
	gw *gateway.Client
}

// gateway returns the gateway connection, nil when there is none.
func (c *Client) gateway() *gateway.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.gw
}

// setStatus records a status and queues the status callback.
func (c *Client) setStatus(s ClientStatus, e ClientError, detail int32) {
	if ClientStatus(c.status.Swap(int32(s))) == s && e == ClientErrorNone {
		return
	}
	c.logf(LoggingSeverityInfo, "status %s", s)
	c.handlers.statusChanged.Post(func(f ClientOnStatusChanged) { f(s, e, detail) })
}

// Connect connects to the service's gateway with the token set by UpdateToken. The status goes
// Connecting, Connected, Ready; a lost connection is Reconnecting until it resumes.
func (c *Client) Connect() {
	token := c.authHeader()
	c.mu.Lock()
	busy := c.conn.gw != nil
	c.mu.Unlock()
	switch {
	case busy:
		c.logf(LoggingSeverityWarning, "Connect: already connected or connecting")
		return
	case token == "":
		c.logf(LoggingSeverityError, "Connect: no token; call UpdateToken first")
		c.setStatus(ClientStatusDisconnected, ClientErrorConnectionFailed, 0)
		return
	}
	c.setStatus(ClientStatusConnecting, ClientErrorNone, 0)
	c.start(func(ctx context.Context) {
		get := func(ctx context.Context, path string, out any) error {
			return c.api.Do(ctx, rest.Request{Path: path}, out)
		}
		batch := queue.Batch() // the frames read together wake the game's thread once (callbacks.Batch)
		gw, err := gateway.Discover(ctx, get, gateway.Config{
			Token: c.auth.tokens.Get, OnStatus: c.onGatewayStatus, OnDrained: batch.End,
			OnDispatch:  func(event string, data json.RawMessage) { batch.Begin(); c.onDispatch(event, data) },
			DataChecked: messages.Checks, // once: messages.Decode checks a message's data, the gateway leaves it
			Logf:        func(format string, args ...any) { c.logf(LoggingSeverityVerbose, format, args...) },
		})
		if err != nil {
			c.logf(LoggingSeverityError, "Connect: %v", err)
			c.setStatus(ClientStatusDisconnected, ClientErrorConnectionFailed, 0)
			return
		}
		c.mu.Lock()
		if c.closed || c.conn.gw != nil {
			c.mu.Unlock()
			return
		}
		c.conn.gw = gw
		c.mu.Unlock()
		gw.Start()
	})
}

// Disconnect closes the connection; the status goes Disconnecting, then Disconnected.
func (c *Client) Disconnect() {
	c.mu.Lock()
	gw := c.conn.gw
	c.conn.gw = nil
	c.mu.Unlock()
	if gw == nil {
		return
	}
	c.start(func(context.Context) { gw.Close() })
}

// onGatewayStatus maps the gateway's states to Client::Status and Client::Error.
func (c *Client) onGatewayStatus(s gateway.Status, err error) {
	e, detail := ClientErrorNone, int32(0)
	var ce *gateway.CloseError
	if errors.As(err, &ce) {
		detail = int32(ce.Code)
	}
	switch {
	case err != nil && s == gateway.Disconnected:
		e = ClientErrorConnectionFailed
		c.logf(LoggingSeverityError, "the service refused the connection: %v", err)
		c.mu.Lock()
		c.conn.gw = nil // it has stopped for good; Connect may start another
		c.mu.Unlock()
	case err != nil:
		e = ClientErrorUnexpectedClose
	}
	if s != gateway.Ready {
		// A request written just before the connection broke may never have been read, even if
		// the session resumes: repeat what waits over HTTP (tunnel.go).
		c.tunnel.Lost()
		c.calls.reg.SignalingLost() // the service ends a call with its gateway connection (ST-4)
	}
	c.setStatus(ClientStatus(s), e, detail)
	if s == gateway.Ready {
		c.resendPresence()
	}
}

// dispatchers routes each gateway event to the part of the client that applies it; events not
// listed are ignored. Each capability registers its own events here, by name (wire/gateway).
var dispatchers = map[string]func(c *Client, event string, data json.RawMessage){
	gwire.EventReady:         func(c *Client, _ string, data json.RawMessage) { c.onReady(data) },
	gwire.EventRequestResult: func(c *Client, _ string, data json.RawMessage) { c.tunnel.Answer(data) },
}

// route registers one handler for several events.
func route(handler func(c *Client, event string, data json.RawMessage), events ...string) {
	for _, e := range events {
		dispatchers[e] = handler
	}
}

func init() {
	route((*Client).onMessageDispatch, messages.Events...)
	route((*Client).onLobbyDispatch, lobbies.Events...)
	route((*Client).onSocialDispatch, social.Events...)
	route((*Client).onVoiceDispatch, gwire.EventVoiceStateUpdate, gwire.EventVoiceServerUpdate,
		gwire.EventVoiceKeys, gwire.EventVoiceError)
}

// onDispatch updates the cache from a gateway dispatch.
func (c *Client) onDispatch(event string, data json.RawMessage) {
	if h := dispatchers[event]; h != nil {
		h(c, event, data)
	}
}

// readyData is what the client reads of READY: the session's user, the service's extensions, and
// the social state (relationships and presences) the service adds.
type readyData struct {
	gwire.Ready
	Relationships     []wire.Relationship   `json:"relationships"`
	GameRelationships []wire.Relationship   `json:"game_relationships"`
	Presences         []wire.PresenceUpdate `json:"presences"`
}

// onReady applies READY in one step: READY is decoded once, and each capability takes its part
// of it. The relationships and presences are in place before the current user is, so a reader
// that sees the new session's user also sees its relationships.
func (c *Client) onReady(data json.RawMessage) {
	c.tunnel.Lost() // a new session: the old one's answers will not come
	var r readyData
	if err := json.Unmarshal(data, &r); err != nil {
		c.logf(LoggingSeverityWarning, "malformed READY: %v", err)
		return
	}
	c.tunnel.Enable(slices.Contains(r.SdkppFeatures, gwire.FeatureRequests))
	// READY's relationship objects carry the other users and their profiles in this game.
	var others []*wire.User
	for _, list := range [][]wire.Relationship{r.Relationships, r.GameRelationships} {
		for i := range list {
			others = append(others, &list[i].User)
		}
	}
	c.users.ApplyReady(&r.User, others, func() {
		c.social.state.ApplyReady(uint64(r.Application.ID), r.Relationships, r.GameRelationships, r.Presences)
	})
	c.startCatchUp() // a new session may follow a gap: fetch the lobby messages it missed (core/messages)
}

// stopConnection closes the gateway; called by Close.
func (c *Client) stopConnection() {
	c.mu.Lock()
	gw := c.conn.gw
	c.conn.gw = nil
	c.mu.Unlock()
	if gw != nil {
		gw.Close()
	}
}
