package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// gwire.Hello carries the heartbeat interval; gwire.Identify gets READY with the platform's fields, s=1.
func TestHelloIdentifyReady(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dialQuery("?v=10&encoding=json")
	_, raw, err := c.read()
	require.NoError(t, err)
	assert.Equal(t, `{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}`, string(raw), "hello")
	c.send(gwire.OpIdentify, identifyData("Bearer user-7")) // the prefix is accepted
	p := c.expectDispatch(gwire.EventReady, 1)
	var d map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(p.D, &d))
	for field, want := range map[string]string{
		"v":                  `10`,
		"guilds":             `[]`,
		"application":        `{"id":"500","flags":0}`,
		"resume_gateway_url": fmt.Sprintf("%q", e.wsURL("")),
	} {
		assert.Equal(t, want, string(d[field]), "READY %s", field)
	}
	var r gwire.Ready
	require.NoError(t, json.Unmarshal(p.D, &r))
	assert.Equal(t, wire.Snowflake(7), r.User.ID)
	assert.Equal(t, "user7", r.User.Username)
	assert.Regexp(t, `^[0-9a-f]{32}$`, r.SessionID)
	assert.True(t, e.hub.Online(7))
	assert.Equal(t, 1, e.hub.Sessions(7))
	assert.False(t, e.hub.Online(8))

	// Without query parameters the defaults apply; every scope that includes gateway.connect works.
	for _, tok := range []string{"presence-8", "gw-9"} {
		c := e.dialQuery("")
		c.hello()
		c.identify(tok)
	}
}

// Config.ResumeURL replaces the derived resume_gateway_url.
func TestResumeURLConfig(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ResumeURL = "wss://resume.invalid/gateway" })
	assert.Equal(t, "wss://resume.invalid/gateway", e.dial().identify("user-1").ResumeGatewayURL)
}

// Heartbeats are answered with op 11, before and after gwire.Identify, with d null or a sequence number.
func TestHeartbeatACK(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.send(gwire.OpHeartbeat, nil)
	_, raw, err := c.read()
	require.NoError(t, err)
	assert.Equal(t, `{"op":11,"d":null,"s":null,"t":null}`, string(raw), "ack")
	c.identify("user-1")
	c.send(gwire.OpHeartbeat, 1)
	c.expectOp(gwire.OpHeartbeatACK)
	c.sendRaw(`{"op":1}`) // d absent counts as null
	c.expectOp(gwire.OpHeartbeatACK)
}

// A connection without a heartbeat for 1.5 intervals, by the injected clock, is closed with 4009;
// each heartbeat moves the deadline; the session can still be resumed.
func TestHeartbeatTimeout(t *testing.T) {
	e := newEnv(t, nil)
	timeout := DefaultHeartbeatInterval * 3 / 2
	c := e.dial()
	r := c.identify("user-1")
	e.clk.Advance(timeout - time.Millisecond)
	c.heartbeat() // still open
	e.clk.Advance(timeout - time.Millisecond)
	c.heartbeat() // the deadline moved with the last heartbeat
	e.clk.Advance(timeout)
	c.expectClose(gwire.CloseSessionTimedOut)

	// A connection that never identifies times out the same way, counted from gwire.Hello.
	idle := e.dial()
	e.clk.Advance(timeout)
	idle.expectClose(gwire.CloseSessionTimedOut)

	// 4009 is not final: the session waits to be resumed.
	b := e.dial()
	b.resume("user-1", r.SessionID, 1)
	b.expectDispatch(gwire.EventResumed, 2)
}

// Every close code the hub sends, each provoked.
func TestCloseCodes(t *testing.T) {
	e := newEnv(t, nil)
	identified := func() *client {
		c := e.dial()
		c.identify("user-1")
		return c
	}
	identifyWith := func(field string, value any) func() *client { // gwire.Identify of user 1 with one field changed
		return func() *client {
			c := e.dial()
			d := identifyData("user-1")
			if value == nil {
				delete(d, field)
			} else {
				d[field] = value
			}
			c.send(gwire.OpIdentify, d)
			return c
		}
	}
	hb := `{"op":1,"d":null}`
	pad := func(n int) string { // a heartbeat of exactly n bytes
		return hb[:len(hb)-1] + strings.Repeat(" ", n-len(hb)) + "}"
	}
	cases := []struct {
		name    string
		code    int
		provoke func() *client
	}{
		{"unknown opcode", gwire.CloseUnknownOpcode, func() *client { c := e.dial(); c.send(42, nil); return c }},
		{"server opcode from client", gwire.CloseUnknownOpcode, func() *client { c := identified(); c.send(gwire.OpHeartbeatACK, nil); return c }},
		{"malformed JSON", gwire.CloseDecodeError, func() *client { c := e.dial(); c.sendRaw(`{"op":1,`); return c }},
		{"not an object", gwire.CloseDecodeError, func() *client { c := e.dial(); c.sendRaw(`[1]`); return c }},
		{"missing op", gwire.CloseDecodeError, func() *client { c := e.dial(); c.sendRaw(`{"d":null}`); return c }},
		{"op of wrong type", gwire.CloseDecodeError, func() *client { c := e.dial(); c.sendRaw(`{"op":"1"}`); return c }},
		{"trailing garbage", gwire.CloseDecodeError, func() *client { c := e.dial(); c.sendRaw(hb + `x`); return c }},
		{"oversized payload", gwire.CloseDecodeError, func() *client { c := e.dial(); c.sendRaw(pad(DefaultMaxPayloadBytes + 1)); return c }},
		{"binary frame", gwire.CloseDecodeError, func() *client {
			c := e.dial()
			require.NoError(t, c.ws.Write(context.Background(), websocket.MessageBinary, []byte(hb)))
			return c
		}},
		{"heartbeat d of wrong type", gwire.CloseDecodeError, func() *client { c := e.dial(); c.send(gwire.OpHeartbeat, "x"); return c }},
		{"identify d not an object", gwire.CloseDecodeError, func() *client { c := e.dial(); c.send(gwire.OpIdentify, "user-1"); return c }},
		{"identify intents of wrong type", gwire.CloseDecodeError, identifyWith("intents", "1")},
		{"identify properties not an object", gwire.CloseDecodeError, identifyWith("properties", "linux")},
		{"presence not an object", gwire.CloseDecodeError, func() *client { c := identified(); c.send(gwire.OpPresenceUpdate, []int{1}); return c }},
		{"resume without seq", gwire.CloseDecodeError, func() *client {
			c := e.dial()
			c.send(gwire.OpResume, map[string]any{"token": "user-1", "session_id": "x"})
			return c
		}},
		{"encoding etf", gwire.CloseDecodeError, func() *client { return e.dialQuery("?v=10&encoding=etf") }},
		{"compress other than zlib-stream", gwire.CloseDecodeError, func() *client { return e.dialQuery("?v=10&encoding=json&compress=zstd-stream") }},
		{"presence before identify", gwire.CloseNotAuthenticated, func() *client { c := e.dial(); c.send(gwire.OpPresenceUpdate, map[string]any{}); return c }},
		{"unknown token", gwire.CloseAuthenticationFailed, func() *client { c := e.dial(); c.send(gwire.OpIdentify, identifyData("nope")); return c }},
		{"empty token", gwire.CloseAuthenticationFailed, func() *client { c := e.dial(); c.send(gwire.OpIdentify, identifyData("")); return c }},
		{"token without gateway scope", gwire.CloseAuthenticationFailed, func() *client {
			c := e.dial()
			c.send(gwire.OpIdentify, identifyData("noscope-1"))
			return c
		}},
		{"resume with unknown token", gwire.CloseAuthenticationFailed, func() *client { c := e.dial(); c.resume("nope", "x", 0); return c }},
		{"identify twice", gwire.CloseAlreadyAuthenticated, func() *client { c := identified(); c.send(gwire.OpIdentify, identifyData("user-1")); return c }},
		{"resume after identify", gwire.CloseAlreadyAuthenticated, func() *client { c := identified(); c.resume("user-1", "x", 0); return c }},
		{"resume with a seq never reached", gwire.CloseInvalidSeq, func() *client {
			r := e.dial().identify("user-2")
			c := e.dial()
			c.resume("user-2", r.SessionID, 2)
			return c
		}},
		{"resume with a negative seq", gwire.CloseInvalidSeq, func() *client { c := e.dial(); c.resume("user-1", "x", -1); return c }},
		{"invalid shard", gwire.CloseInvalidShard, identifyWith("shard", []int{1, 1})},
		{"invalid API version", gwire.CloseInvalidAPIVersion, func() *client { return e.dialQuery("?v=8&encoding=json") }},
		{"non-numeric API version", gwire.CloseInvalidAPIVersion, func() *client { return e.dialQuery("?v=x&encoding=json") }},
		{"missing intents", gwire.CloseInvalidIntents, identifyWith("intents", nil)},
		{"undefined intent bit", gwire.CloseInvalidIntents, identifyWith("intents", 1<<30)},
		{"negative intents", gwire.CloseInvalidIntents, identifyWith("intents", -1)},
		{"disallowed intent", gwire.CloseDisallowedIntents, identifyWith("intents", gwire.IntentMessageContent)},
		{"token lookup fails", gwire.CloseUnknownError, func() *client { c := e.dial(); c.send(gwire.OpIdentify, identifyData("error")); return c }},
		{"user lookup fails", gwire.CloseUnknownError, func() *client { c := e.dial(); c.send(gwire.OpIdentify, identifyData("user-13")); return c }},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d %s", tc.code, tc.name), func(t *testing.T) {
			tc.provoke().expectClose(tc.code)
		})
	}
	// The boundary: a payload of exactly MaxPayloadBytes is served.
	c := e.dial()
	c.sendRaw(pad(DefaultMaxPayloadBytes))
	c.expectOp(gwire.OpHeartbeatACK)
	// Valid shards and known intents are accepted, and READY echoes the shard.
	d := identifyData("user-3")
	d["shard"], d["intents"] = []int{0, 1}, gwire.KnownIntents&^gwire.IntentMessageContent
	c.send(gwire.OpIdentify, d)
	var r gwire.Ready
	require.NoError(t, json.Unmarshal(c.expectDispatch(gwire.EventReady, 1).D, &r))
	assert.Equal(t, []int{0, 1}, r.Shard, "READY shard")
}

// A bad token is closed with 4004 (final); it leaves nothing behind to resume, and gwire.Resume with a
// bad token fails the same way.
func TestBadTokenCannotResume(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.send(gwire.OpIdentify, identifyData("nope"))
	c.expectClose(gwire.CloseAuthenticationFailed)
	assert.True(t, gwire.IsFinal(gwire.CloseAuthenticationFailed), "4004 is final")
	assert.Zero(t, e.numSessions(), "4004 leaves no session")
	c = e.dial()
	c.resume("nope", "0123456789abcdef0123456789abcdef", 0)
	c.expectClose(gwire.CloseAuthenticationFailed)
	// Even a valid token cannot resume a session that never existed.
	c = e.dial()
	c.resume("user-1", "0123456789abcdef0123456789abcdef", 0)
	assert.Equal(t, "false", string(c.expectOp(gwire.OpInvalidSession).D), "invalid session d")
}

// gwire.Resume after a dropped TCP connection replays the missed dispatches once, in order, with their
// original sequence numbers, then RESUMED; new dispatches follow once.
func TestResumeAfterDrop(t *testing.T) {
	e := newEnv(t, nil)
	a := e.dial()
	r := a.identify("user-1")
	e.hub.Dispatch(1, "TEST_EVENT", map[string]int{"n": 1})
	assert.Equal(t, `{"n":1}`, string(a.expectDispatch("TEST_EVENT", 2).D))
	a.drop()
	e.hub.Dispatch(1, "TEST_EVENT", map[string]int{"n": 2}) // may race the server noticing the drop
	e.waitOffline(1)
	e.hub.Dispatch(1, "TEST_EVENT", map[string]int{"n": 3})
	e.hub.DispatchMany([]uint64{1}, "TEST_EVENT", map[string]int{"n": 4})

	b := e.dial()
	b.resume("user-1", r.SessionID, 2)
	for n := 2; n <= 4; n++ {
		assert.Equal(t, fmt.Sprintf(`{"n":%d}`, n), string(b.expectDispatch("TEST_EVENT", int64(n+1)).D), "replayed")
	}
	b.expectDispatch(gwire.EventResumed, 6)
	b.heartbeat() // nothing repeated before the ACK
	e.hub.Dispatch(1, "TEST_EVENT", map[string]int{"n": 5})
	b.expectDispatch("TEST_EVENT", 7)
	b.heartbeat()
	assert.True(t, e.hub.Online(1), "the resumed session is online")
	assert.Equal(t, 1, e.hub.Sessions(1))
}

// A gwire.Resume asks Config.AllowIntents again about the session's intents: once they are no
// longer allowed (the application's flags changed), it is closed with 4014 and the session is
// gone; a failing check is 4000 and leaves the session to resume.
func TestResumeRechecksIntents(t *testing.T) {
	var allow, fail atomic.Bool
	allow.Store(true)
	var asked atomic.Uint64
	e := newEnv(t, func(c *Config) {
		c.AllowIntents = func(_ context.Context, who Identity, intents uint64) (bool, error) {
			asked.Store(intents)
			if fail.Load() {
				return false, errors.New("store down")
			}
			return allow.Load(), nil
		}
	})
	a := e.dial()
	d := identifyData("user-1")
	d["intents"] = gwire.IntentGuildMembers
	a.send(gwire.OpIdentify, d)
	var r gwire.Ready
	require.NoError(t, json.Unmarshal(a.expectDispatch(gwire.EventReady, 1).D, &r))
	a.drop()
	e.waitOffline(1)

	fail.Store(true)
	b := e.dial()
	b.resume("user-1", r.SessionID, 1)
	b.expectClose(gwire.CloseUnknownError)
	assert.Equal(t, gwire.IntentGuildMembers, asked.Load(), "the session's intents are checked")
	assert.Equal(t, 1, e.numSessions(), "a failed check leaves the session")

	fail.Store(false)
	allow.Store(false)
	c := e.dial()
	c.resume("user-1", r.SessionID, 1)
	c.expectClose(gwire.CloseDisallowedIntents)
	assert.Zero(t, e.numSessions(), "4014 is final: nothing left to resume")
}

// Repeated drops, with dispatches in between: every event reaches the client exactly once, in
// order.
func TestRepeatedDropsExactlyOnce(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	sid := c.identify("user-1").SessionID
	last, next := int64(1), 1
	var got []int
	for round := 0; round < 5; round++ {
		for i := 0; i < 3; i++ {
			e.hub.Dispatch(1, "N", next)
			next++
		}
		// read one event, then drop: the other two are lost on the wire or were never sent
		p := c.expectDispatch("N", last+1)
		last = *p.S
		var n int
		_ = json.Unmarshal(p.D, &n)
		got = append(got, n)
		c.drop()
		e.hub.Dispatch(1, "N", next)
		next++
		e.waitOffline(1)
		c = e.dial()
		c.resume("user-1", sid, last)
		for {
			p := c.next()
			require.Equal(t, strconv.FormatInt(last+1, 10), derefInt(p.S), "round %d: s", round)
			last = *p.S
			if deref(p.T) == gwire.EventResumed {
				break
			}
			_ = json.Unmarshal(p.D, &n)
			got = append(got, n)
		}
	}
	want := make([]int, next-1)
	for i := range want {
		want[i] = i + 1
	}
	assert.Equal(t, want, got, "every event once, in order")
}

// gwire.Resume of an unknown, expired, foreign or too-old session gets Invalid Session (d false); the
// connection may then identify.
func TestResumeInvalidSession(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReplayLimit = 5 })
	invalid := func(c *client) {
		t.Helper()
		assert.Equal(t, "false", string(c.expectOp(gwire.OpInvalidSession).D))
	}
	c := e.dial()
	c.resume("user-1", "unknown", 0)
	invalid(c)
	c.identify("user-1") // the same connection identifies after op 9

	// expired: the resume window is measured by the injected clock
	a := e.dial()
	ra := a.identify("user-2")
	a.drop()
	e.waitOffline(2)
	e.clk.Advance(DefaultResumeWindow - time.Millisecond)
	b := e.dial()
	b.resume("user-2", ra.SessionID, 1) // still in the window
	b.expectDispatch(gwire.EventResumed, 2)
	b.drop()
	e.waitOffline(2)
	e.clk.Advance(DefaultResumeWindow)
	b = e.dial()
	b.resume("user-2", ra.SessionID, 2)
	invalid(b)

	// another user's or another application's token
	x := e.dial()
	rx := x.identify("user-3")
	x.drop()
	e.waitOffline(3)
	for _, tok := range []string{"user-4", "app2-3"} {
		y := e.dial()
		y.resume(tok, rx.SessionID, 1)
		invalid(y)
	}

	// older than the replay buffer (5 dispatches): seq 6 can resume, seq 5 cannot
	for _, tc := range []struct {
		seq int64
		ok  bool
	}{{6, true}, {5, false}} {
		z := e.dial()
		rz := z.identify("user-5")
		z.drop()
		e.waitOffline(5)
		for i := 0; i < 10; i++ { // s = 2..11; the buffer keeps 7..11
			e.hub.Dispatch(5, "N", i)
		}
		w := e.dial()
		w.resume("user-5", rz.SessionID, tc.seq)
		if !tc.ok {
			invalid(w)
			w.resume("user-5", rz.SessionID, 11) // the session was invalidated
			invalid(w)
			continue
		}
		for s := int64(7); s <= 11; s++ {
			w.expectDispatch("N", s)
		}
		w.expectDispatch(gwire.EventResumed, 12)
		w.send(gwire.OpIdentify, identifyData("user-5"))
		w.expectClose(gwire.CloseAlreadyAuthenticated)
	}
}

// Resuming a session that is still attached moves it: the old connection is closed with 4000.
func TestResumeTakesOver(t *testing.T) {
	e := newEnv(t, nil)
	a := e.dial()
	r := a.identify("user-1")
	b := e.dial()
	b.resume("user-1", r.SessionID, 1)
	b.expectDispatch(gwire.EventResumed, 2)
	a.expectClose(gwire.CloseUnknownError)
	e.hub.Dispatch(1, "X", nil)
	b.expectDispatch("X", 3)
	assert.Equal(t, 1, e.hub.Sessions(1))
}

// A client that closes with 1000 or 1001 ends its session; other codes leave it resumable.
func TestClientCloseCodes(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		code      websocket.StatusCode
		resumable bool
	}{{websocket.StatusNormalClosure, false}, {websocket.StatusGoingAway, false}, {4000, true}, {3000, true}} {
		c := e.dial()
		r := c.identify("user-1")
		_ = c.ws.Close(tc.code, "")
		e.waitOffline(1)
		n := e.dial()
		n.resume("user-1", r.SessionID, 1)
		if tc.resumable {
			n.expectDispatch(gwire.EventResumed, 2)
			_ = n.ws.Close(websocket.StatusNormalClosure, "")
			e.waitOffline(1)
		} else {
			n.expectOp(gwire.OpInvalidSession)
		}
	}
}

// More than 120 payloads in 60 s (by the injected clock) close the connection with 4008; the
// window slides.
func TestRateLimit(t *testing.T) {
	e := newEnv(t, nil)
	burst := func(c *client, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			c.send(gwire.OpHeartbeat, nil)
		}
		for i := 0; i < n; i++ {
			c.expectOp(gwire.OpHeartbeatACK)
		}
	}
	c := e.dial()
	c.identify("user-1") // counts
	burst(c, DefaultRateLimit-1)
	c.send(gwire.OpHeartbeat, nil) // the 121st
	c.expectClose(gwire.CloseRateLimited)

	c = e.dial()
	burst(c, DefaultRateLimit)
	e.clk.Advance(DefaultRateWindow)
	burst(c, DefaultRateLimit) // a new window
	c.send(gwire.OpHeartbeat, nil)
	c.expectClose(gwire.CloseRateLimited)
}

// Dispatch reaches every session of the user and no one else's; DispatchMany sends once per
// user; DispatchApp and DispatchAppMany only to that application's sessions.
func TestDispatchTwoSessions(t *testing.T) {
	e := newEnv(t, nil)
	a, b, o, x := e.dial(), e.dial(), e.dial(), e.dial()
	a.identify("user-1")
	b.identify("user-1")
	o.identify("user-2")
	x.identify("app2-1") // user 1 in another game
	assert.Equal(t, 3, e.hub.Sessions(1))
	assert.True(t, e.hub.Online(2))
	assert.False(t, e.hub.Online(3))
	e.hub.Dispatch(1, "ACTIVITY_INVITE_CREATE", map[string]string{"id": "9"}) // rule EVT-1
	for _, c := range []*client{a, b, x} {
		assert.Equal(t, `{"id":"9"}`, string(c.expectDispatch("ACTIVITY_INVITE_CREATE", 2).D))
	}
	o.heartbeat() // nothing for user 2
	e.hub.DispatchMany([]uint64{1, 2, 1}, "M", 1)
	for _, c := range []*client{a, b, x} {
		c.expectDispatch("M", 3)
		c.heartbeat()
	}
	o.expectDispatch("M", 2)
	o.heartbeat()
	e.hub.DispatchApp(testApp2, 1, "A", nil)
	x.expectDispatch("A", 4)
	for _, c := range []*client{a, b} {
		c.heartbeat() // nothing for app 500
	}
	e.hub.DispatchAppMany(testApp2, []uint64{1, 2, 1}, "B", nil) // once per user, that game only
	x.expectDispatch("B", 5)
	x.heartbeat()
	for _, c := range []*client{a, b, o} {
		c.heartbeat()
	}
}

// DispatchAppEach on a node alone pushes its dispatches together, each to its own users of that
// application, in their order.
func TestDispatchAppEachAlone(t *testing.T) {
	e := newEnv(t, nil)
	a, o, x := e.dial(), e.dial(), e.dial()
	a.identify("user-1")
	o.identify("user-2")
	x.identify("app2-1") // user 1 in another game
	e.hub.DispatchAppEach(testApp, []AppDispatch{
		{UserIDs: []uint64{1, 2}, Event: "A", Data: 1},
		{UserIDs: []uint64{2, 2}, Event: "B", Data: 2},
		{UserIDs: []uint64{1}, Event: "C", Data: func() {}}, // cannot be encoded: left out
		{UserIDs: []uint64{1}, Event: "D", Data: 4},
	})
	assert.Equal(t, "1", string(a.expectDispatch("A", 2).D))
	assert.Equal(t, "4", string(a.expectDispatch("D", 3).D))
	assert.Equal(t, "1", string(o.expectDispatch("A", 2).D))
	assert.Equal(t, "2", string(o.expectDispatch("B", 3).D))
	for _, c := range []*client{a, o, x} {
		c.heartbeat() // nothing more, and nothing for the other game
	}
}

// Presence Update objects reach Config.OnPresence with the session's identity, as does the
// gwire.Identify presence.
func TestPresenceUpdate(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	d := identifyData("user-4")
	d["presence"] = map[string]any{"status": "idle"}
	c.send(gwire.OpIdentify, d)
	c.expectDispatch(gwire.EventReady, 1)
	c.send(gwire.OpPresenceUpdate, map[string]any{"status": "online", "activities": []any{}})
	c.heartbeat()
	for _, want := range []string{`{"status":"idle"}`, `{"activities":[],"status":"online"}`} {
		select {
		case p := <-e.presences:
			assert.Equal(t, Identity{UserID: 4, AppID: testApp, Scopes: []string{"openid", "sdk.social_layer"}}, p.who)
			assert.Equal(t, want, string(p.presence))
		case <-time.After(wait):
			require.Fail(t, "OnPresence not called")
		}
	}
}

// EndSessions closes the user's connections with 4004; nothing can be resumed.
func TestEndSessions(t *testing.T) {
	e := newEnv(t, nil)
	a := e.dial()
	r := a.identify("user-1")
	b := e.dial()
	rb := b.identify("user-1")
	b.drop()
	waitFor(t, "one session", func() bool { return e.hub.Sessions(1) == 1 })
	e.hub.EndSessions(1)
	a.expectClose(gwire.CloseAuthenticationFailed)
	for _, sid := range []string{r.SessionID, rb.SessionID} {
		c := e.dial()
		c.resume("user-1", sid, 1)
		c.expectOp(gwire.OpInvalidSession)
	}
	assert.Zero(t, e.numSessions(), "sessions left")
}

// EndAppSessions ends the user's sessions of one game only (a revoked authorization).
func TestEndAppSessions(t *testing.T) {
	e := newEnv(t, nil)
	game1 := e.dial()
	game1.identify("user-1")
	game2 := e.dial()
	game2.identify("app2-1")
	waitFor(t, "two sessions", func() bool { return e.hub.Sessions(1) == 2 })
	e.hub.EndAppSessions(testApp, 1)
	game1.expectClose(gwire.CloseAuthenticationFailed)
	waitFor(t, "the other game's session only", func() bool { return e.hub.Sessions(1) == 1 })
	e.hub.DispatchApp(testApp2, 1, "STILL_HERE", map[string]int{})
	game2.expectDispatch("STILL_HERE", 2)
}

// Plain HTTP requests get the platform's JSON errors.
func TestHTTPRefusals(t *testing.T) {
	e := newEnv(t, nil)
	get := func(method string, header http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, e.srv.URL+"/gateway", strings.NewReader("{}"))
		require.NoError(t, err)
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body wire.APIError
		assert.NoError(t, json.NewDecoder(resp.Body).Decode(&body), "the platform's JSON error")
		resp.Body.Close()
		return resp
	}
	resp := get(http.MethodPost, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "POST")
	assert.Equal(t, "GET", resp.Header.Get("Allow"))
	resp = get(http.MethodGet, nil)
	assert.Equal(t, http.StatusUpgradeRequired, resp.StatusCode, "GET without upgrade")
	assert.Equal(t, "websocket", resp.Header.Get("Upgrade"))
	resp = get(http.MethodGet, http.Header{"Connection": {"keep-alive, Upgrade"}, "Upgrade": {"h2c"}})
	assert.Equal(t, http.StatusUpgradeRequired, resp.StatusCode, "upgrade to another protocol")
	e.hub.Close()
	resp = get(http.MethodGet, nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "after Close")
	http.DefaultClient.CloseIdleConnections()
}

// 200 concurrent connections identify and each receives its own dispatch and a shared one.
func TestConcurrentConnections(t *testing.T) {
	e := newEnv(t, nil)
	const n = 200
	clients := make([]*client, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, e.wsURL("?v=10&encoding=json"), nil)
			if err != nil {
				errs <- err
				return
			}
			c := &client{t: t, ws: ws}
			clients[i] = c
			if _, _, err := c.read(); err != nil { // gwire.Hello
				errs <- err
				return
			}
			raw, _ := json.Marshal(map[string]any{"op": gwire.OpIdentify, "d": identifyData(fmt.Sprintf("user-%d", 1000+i))})
			if err := ws.Write(ctx, websocket.MessageText, raw); err != nil {
				errs <- err
				return
			}
			if p, _, err := c.read(); err != nil || deref(p.T) != gwire.EventReady {
				errs <- fmt.Errorf("client %d: READY: %v %v", i, deref(p.T), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, c := range clients {
			_ = c.ws.CloseNow()
		}
	})
	ids := make([]uint64, n)
	for i := range n {
		ids[i] = uint64(1000 + i)
		e.hub.Dispatch(ids[i], "MINE", i)
	}
	e.hub.DispatchMany(ids, "ALL", "hi")
	errs = make(chan error, n)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, want := range []struct {
				t string
				s int64
				d string
			}{{"MINE", 2, fmt.Sprint(i)}, {"ALL", 3, `"hi"`}} {
				p, _, err := c.read()
				if err != nil || deref(p.T) != want.t || p.S == nil || *p.S != want.s || string(p.D) != want.d {
					errs <- fmt.Errorf("client %d: got %s s=%s d=%s (%v), want %+v", i, deref(p.T), derefInt(p.S), p.D, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// Close sends Reconnect then closes every connection with 1012 (also one whose client never
// answers the close handshake), and no goroutine of the hub is left.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		e := newEnv(t, nil)
		var clients []*client
		for i := range 10 {
			c := e.dial()
			c.identify(fmt.Sprintf("user-%d", i+1))
			clients = append(clients, c)
		}
		mute := e.dial() // never reads again: the hub must cut it
		mute.identify("user-99")
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.hub.Close()
		}()
		for _, c := range clients {
			c.expectOp(gwire.OpReconnect)
			c.expectClose(gwire.CloseServiceRestart)
		}
		select {
		case <-done:
		case <-time.After(closeTimeout + 4*wait): // a hang: it returns once the mute one is cut
			require.Fail(t, "Close did not return")
		}
		assert.Zero(t, e.numSessions(), "sessions left after Close")
		assert.False(t, e.hub.Online(1))
		e.hub.Dispatch(1, "X", nil) // harmless after Close
		for _, c := range append(clients, mute) {
			_ = c.ws.CloseNow()
		}
		e.srv.Close()
	}()
	// (Polled here: assert.Eventually runs its condition on a goroutine of its own.)
	for deadline := time.Now().Add(wait); runtime.NumGoroutine() > base; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			require.Fail(t, "goroutines left", "%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
	}
}

// A connected client that falls more than ReplayLimit dispatches behind is closed with 4000.
func TestFlushTooFarBehind(t *testing.T) {
	h := New(Config{Tokens: testTokens{}, Users: testUsers{}, ReplayLimit: 5})
	defer h.Close()
	c := &conn{h: h}
	s := &session{conn: c}
	c.sess = s
	for range 10 {
		s.Push([]byte(`"N"`), []byte("1"), 5)
	}
	c.sent = 3 // 4 and 5 were dropped
	r, stop := c.flush()
	assert.True(t, stop)
	assert.Equal(t, gwire.CloseUnknownError, r.Code)
}

// UserSessions describes a user's sessions, oldest first, with their application and start, and
// whether they are attached; EndSessions closes them with 4004 and forgets them.
func TestUserSessions(t *testing.T) {
	e := newEnv(t, nil)
	a := e.dial()
	a.identify("user-4")
	e.clk.Advance(time.Minute)
	b := e.dial()
	b.identify("user-4")
	assert.Empty(t, e.hub.UserSessions(5))
	assert.Equal(t, []SessionInfo{
		{AppID: testApp, Since: epoch, Connected: true},
		{AppID: testApp, Since: epoch.Add(time.Minute), Connected: true},
	}, e.hub.UserSessions(4))
	e.hub.EndSessions(4)
	a.expectClose(gwire.CloseAuthenticationFailed)
	b.expectClose(gwire.CloseAuthenticationFailed)
	assert.Empty(t, e.hub.UserSessions(4))
}

// ServeHTTP returns once the connection is upgraded, so that net/http lets go of the request's
// state (its buffers, the request): the connection runs on a goroutine of the hub's, which
// Close stops and waits for.
func TestServeHTTPReturnsWhileTheConnectionRuns(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	require.Eventually(t, func() bool { return e.returned.Load() == 1 }, wait, time.Millisecond, "ServeHTTP returned")
	c.heartbeat()
	e.hub.Dispatch(1, "TEST_EVENT", 1)
	c.expectDispatch("TEST_EVENT", 2)
	e.hub.Close()
	c.expectOp(gwire.OpReconnect)
	c.expectClose(gwire.CloseServiceRestart)
}
