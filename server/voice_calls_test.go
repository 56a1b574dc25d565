package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	"sdkpp/wire/voice"
)

const voiceWait = 5 * time.Second

// caller is a player with a gateway connection and, once in a call, a UDP socket.
type caller struct {
	t       *testing.T
	e       *servertest.Env
	name    string
	token   string
	userID  wire.Snowflake
	session string
	ws      *websocket.Conn
	udp     *net.UDPConn
	server  voice.ServerUpdate
	seq     uint32
}

// newCaller makes a provisional player of the main application and identifies it on the gateway.
func newCaller(t *testing.T, e *servertest.Env, name string) *caller {
	t.Helper()
	var tok wire.TokenResponse
	r := botToken(t, e, e.App, "voice-"+name, &name)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.json(t, &tok)
	c, ready := dialCaller(t, e, name, tok.AccessToken, 0)
	assert.Contains(t, ready.SdkppFeatures, gwire.FeatureVoice)
	return c
}

// dialCaller connects to the gateway and identifies with token and intents.
func dialCaller(t *testing.T, e *servertest.Env, name, token string, intents int) (*caller, gwire.Ready) {
	t.Helper()
	c := &caller{t: t, e: e, name: name, token: token}
	ctx, cancel := context.WithTimeout(context.Background(), voiceWait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.URL, "http")+"/gateway?v=10&encoding=json", nil)
	require.NoError(t, err)
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	c.ws = ws
	require.Equal(t, gwire.OpHello, c.read().Op)
	c.send(gwire.OpIdentify, map[string]any{"token": c.token, "intents": intents})
	var ready gwire.Ready
	require.NoError(t, json.Unmarshal(c.event(gwire.EventReady), &ready))
	c.userID, c.session = ready.User.ID, ready.SessionID
	return c, ready
}

func (c *caller) send(op int, d any) {
	c.t.Helper()
	raw, err := json.Marshal(map[string]any{"op": op, "d": d})
	require.NoError(c.t, err)
	c.sendRaw(string(raw))
}

func (c *caller) sendRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), voiceWait)
	defer cancel()
	require.NoError(c.t, c.ws.Write(ctx, websocket.MessageText, []byte(s)))
}

func (c *caller) read() gwire.Payload {
	c.t.Helper()
	p, err := c.tryRead()
	require.NoError(c.t, err, "%s: gateway read", c.name)
	return p
}

func (c *caller) tryRead() (gwire.Payload, error) {
	ctx, cancel := context.WithTimeout(context.Background(), voiceWait)
	defer cancel()
	_, raw, err := c.ws.Read(ctx)
	if err != nil {
		return gwire.Payload{}, err
	}
	var p gwire.Payload
	return p, json.Unmarshal(raw, &p)
}

// event reads dispatches until one of the event and returns its d; voice dispatches of other
// kinds on the way fail the test (they would be missed), others are skipped.
func (c *caller) event(name string) json.RawMessage {
	c.t.Helper()
	for {
		p := c.read()
		if p.Op != gwire.OpDispatch {
			continue
		}
		if *p.T == name {
			return p.D
		}
		require.False(c.t, strings.HasPrefix(*p.T, "VOICE_") || strings.HasPrefix(*p.T, "SDKPP_VOICE"),
			"%s: %s while waiting for %s: %s", c.name, *p.T, name, p.D)
	}
}

func (c *caller) state() voice.State {
	c.t.Helper()
	var s voice.State
	require.NoError(c.t, json.Unmarshal(c.event(gwire.EventVoiceStateUpdate), &s))
	return s
}

func (c *caller) voiceError() voice.Error {
	c.t.Helper()
	var v voice.Error
	require.NoError(c.t, json.Unmarshal(c.event(gwire.EventVoiceError), &v))
	return v
}

// keysFor is a caller's stand-in public keys (the relay and the service treat them as opaque).
func keysFor(name string) []byte { return []byte("public keys of " + name) }

// joinLobby makes the players members of one lobby and returns its id.
func joinLobby(t *testing.T, e *servertest.Env, secret string, cs ...*caller) wire.Snowflake {
	t.Helper()
	var l wire.Lobby
	for _, c := range cs {
		r := sendJSON(t, http.MethodPut, e.APIURL+"/lobbies", map[string]any{"secret": secret}, bearer(c.token))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.json(t, &l)
	}
	return l.ID
}

// voiceJoin sends op 4 for the lobby with the caller's keys.
func (c *caller) voiceJoin(lobby wire.Snowflake, mute bool) {
	c.t.Helper()
	c.send(gwire.OpVoiceStateUpdate, voice.StateUpdate{ChannelID: &lobby, SelfMute: mute, E2EEPublicKeys: keysFor(c.name)})
}

// enter joins the call: it expects the states of those already in it, its own, and the server
// update, and binds its UDP flow.
func (c *caller) enter(lobby wire.Snowflake, already ...*caller) {
	c.t.Helper()
	c.voiceJoin(lobby, false)
	for _, o := range already {
		s := c.state()
		assert.Equal(c.t, o.userID, s.UserID, "%s: states of those in the call, in join order", c.name)
		assert.Equal(c.t, keysFor(o.name), s.E2EEPublicKeys)
		assert.Equal(c.t, o.server.SSRC, s.SSRC)
	}
	own := c.state()
	require.Equal(c.t, c.userID, own.UserID)
	require.NotNil(c.t, own.ChannelID)
	assert.Equal(c.t, lobby, *own.ChannelID)
	assert.Equal(c.t, c.session, own.SessionID)
	require.NoError(c.t, json.Unmarshal(c.event(gwire.EventVoiceServerUpdate), &c.server))
	assert.Equal(c.t, lobby, c.server.ChannelID)
	assert.Equal(c.t, own.SSRC, c.server.SSRC)
	for _, o := range already { // everyone in the call sees the newcomer
		s := o.state()
		assert.Equal(c.t, c.userID, s.UserID)
		assert.Equal(c.t, keysFor(c.name), s.E2EEPublicKeys)
	}
	c.bind()
}

func (c *caller) relay() netip.AddrPort {
	c.t.Helper()
	ap, err := netip.ParseAddrPort(c.server.Endpoint)
	require.NoError(c.t, err, "endpoint %q", c.server.Endpoint)
	return ap
}

func (c *caller) bind() {
	c.t.Helper()
	if c.udp == nil {
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(c.t, err)
		c.t.Cleanup(func() { u.Close() })
		c.udp = u
	}
	c.sendUDP(voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: c.server.SSRC}, c.server.Token[:]))
	h, _, err := voice.Parse(c.recvUDP())
	require.NoError(c.t, err)
	require.Equal(c.t, voice.Header{Type: voice.TypeBind, Flags: voice.FlagReply, SSRC: c.server.SSRC}, h)
}

func (c *caller) sendUDP(pkt []byte) {
	c.t.Helper()
	_, err := c.udp.WriteToUDPAddrPort(pkt, c.relay())
	require.NoError(c.t, err)
}

func (c *caller) media(payload string) []byte {
	c.t.Helper()
	c.seq++
	pkt := voice.AppendPacket(nil, voice.Header{Type: voice.TypeMedia, SSRC: c.server.SSRC, Sequence: c.seq}, []byte(payload))
	c.sendUDP(pkt)
	return pkt
}

func (c *caller) recvUDP() []byte {
	c.t.Helper()
	buf := make([]byte, 2048)
	require.NoError(c.t, c.udp.SetReadDeadline(time.Now().Add(voiceWait)))
	n, err := c.udp.Read(buf)
	require.NoError(c.t, err, "%s: reading from the relay", c.name)
	return buf[:n]
}

// silent checks that no datagram waits on the caller's socket (after a fence: see package
// relay's tests).
func (c *caller) silent() {
	c.t.Helper()
	rc, err := c.udp.SyscallConn()
	require.NoError(c.t, err)
	buf := make([]byte, 2048)
	var rerr error
	require.NoError(c.t, rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
		return true
	}))
	require.ErrorIs(c.t, rerr, syscall.EAGAIN, "%s received a packet", c.name)
}

// TestVoiceCallThreeMembers: three lobby members join its call, bind, and each one's media
// reaches the other two unchanged and not itself; mute shows in the states; sealed keys reach
// their recipients unread (rule VER-2: every participant published its E2EE keys).
func TestVoiceCallThreeMembers(t *testing.T) {
	e := servertest.Start(t)
	a, b, c := newCaller(t, e, "ana"), newCaller(t, e, "ben"), newCaller(t, e, "cy")
	lobby := joinLobby(t, e, "voice", a, b, c)
	a.enter(lobby)
	b.enter(lobby, a)
	c.enter(lobby, a, b)
	assert.Equal(t, []uint64{uint64(a.userID), uint64(b.userID), uint64(c.userID)}, e.Server.Calls().Participants(uint64(lobby)))

	all := []*caller{a, b, c}
	for _, from := range all {
		sent := from.media("sealed frame from " + from.name)
		for _, to := range all {
			if to != from {
				got := to.recvUDP()
				assert.True(t, bytes.Equal(sent, got), "the relay changed the packet:\n%x\n%x", sent, got)
			}
		}
		from.silent()
	}

	// Self mute is part of the state the others see.
	b.voiceJoin(lobby, true)
	for _, o := range all {
		s := o.state()
		assert.Equal(t, b.userID, s.UserID)
		assert.True(t, s.SelfMute, "%s sees ben muted", o.name)
	}

	// Sealed keys go to their recipients only, unread; keys for someone not in the call vanish.
	a.send(gwire.OpVoiceKeys, voice.Keys{ChannelID: lobby, Keys: []voice.SealedKey{
		{UserID: b.userID, Sealed: []byte("for ben")}, {UserID: c.userID, Sealed: []byte("for cy")},
		{UserID: 999, Sealed: []byte("for nobody")}}})
	for _, to := range []*caller{b, c} {
		var k voice.KeyDelivery
		require.NoError(t, json.Unmarshal(to.event(gwire.EventVoiceKeys), &k))
		assert.Equal(t, voice.KeyDelivery{ChannelID: lobby, SenderID: a.userID, Sealed: []byte("for " + to.name)}, k)
	}
}

// TestVoiceRefusals: a non-member, an unknown lobby, a guild channel and a join without E2EE
// keys (rule VER-2) are refused with an SDKPP_VOICE_ERROR and stay out of the call.
func TestVoiceRefusals(t *testing.T) {
	e := servertest.Start(t)
	a, outsider := newCaller(t, e, "ana"), newCaller(t, e, "oz")
	lobby := joinLobby(t, e, "members only", a)
	a.enter(lobby)

	outsider.voiceJoin(lobby, false)
	v := outsider.voiceError()
	assert.Equal(t, voice.CodeMissingAccess, v.Code, "non-member: %s", v.Message)
	require.NotNil(t, v.ChannelID)
	assert.Equal(t, lobby, *v.ChannelID)

	outsider.voiceJoin(lobby+1000, false)
	assert.Equal(t, voice.CodeUnknownLobby, outsider.voiceError().Code)

	guild := wire.Snowflake(5)
	outsider.send(gwire.OpVoiceStateUpdate, voice.StateUpdate{GuildID: &guild, ChannelID: &lobby, E2EEPublicKeys: keysFor("oz")})
	assert.Equal(t, voice.CodeUnknownGuild, outsider.voiceError().Code)

	b := newCaller(t, e, "ben")
	joinLobby(t, e, "members only", b)
	b.send(gwire.OpVoiceStateUpdate, voice.StateUpdate{ChannelID: &lobby}) // rule VER-2: no keys
	v = b.voiceError()
	assert.Equal(t, voice.CodeE2EERequired, v.Code, "rule VER-2: %s", v.Message)

	// Keys from someone not in the call are refused.
	outsider.send(gwire.OpVoiceKeys, voice.Keys{ChannelID: lobby, Keys: []voice.SealedKey{{UserID: a.userID, Sealed: []byte("x")}}})
	assert.Equal(t, voice.CodeMissingAccess, outsider.voiceError().Code)

	assert.Equal(t, []uint64{uint64(a.userID)}, e.Server.Calls().Participants(uint64(lobby)))
}

// TestVoiceLeaving: leaving the lobby, disconnecting and op 4 with channel_id null each take a
// participant out of the call; its flow stops receiving at once.
func TestVoiceLeaving(t *testing.T) {
	e := servertest.Start(t)
	a, b, c, d := newCaller(t, e, "ana"), newCaller(t, e, "ben"), newCaller(t, e, "cy"), newCaller(t, e, "dee")
	lobby := joinLobby(t, e, "leavers", a, b, c, d)
	a.enter(lobby)
	b.enter(lobby, a)
	c.enter(lobby, a, b)
	d.enter(lobby, a, b, c)

	left := func(who *caller, to ...*caller) {
		t.Helper()
		for _, o := range to {
			s := o.state()
			assert.Equal(t, who.userID, s.UserID, "%s sees %s leave", o.name, who.name)
			assert.Nil(t, s.ChannelID)
		}
	}
	// b leaves the lobby.
	r := sendJSON(t, http.MethodDelete, fmt.Sprintf("%s/lobbies/%s/members/@me", e.APIURL, lobby), nil, bearer(b.token))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	left(b, a, b, c, d)
	fence := a.media("after ben left")
	c.recvUDP()
	d.recvUDP()
	b.silent()

	// c disconnects.
	require.NoError(t, c.ws.Close(websocket.StatusNormalClosure, "bye"))
	left(c, a, d)
	fence = a.media("after cy disconnected")
	assert.Equal(t, fence, d.recvUDP())
	c.silent()

	// d leaves with channel_id null.
	d.send(gwire.OpVoiceStateUpdate, voice.StateUpdate{})
	left(d, a, d)
	assert.Equal(t, []uint64{uint64(a.userID)}, e.Server.Calls().Participants(uint64(lobby)))
	d.media("from the leaver")
	a.silent()
}

// TestVoiceMalformedPayloads: bad op 4 and op 101 payloads close the connection with 4002,
// like every other malformed payload.
func TestVoiceMalformedPayloads(t *testing.T) {
	e := servertest.Start(t)
	long := strings.Repeat("A", 4*voice.MaxPublicKeysBytes/3+8)
	for _, bad := range []string{
		`{"op":4,"d":"join"}`,
		`{"op":4,"d":{"channel_id":true}}`,
		`{"op":4,"d":{"channel_id":"0"}}`,
		`{"op":4,"d":{"channel_id":"1","self_mute":"yes"}}`,
		`{"op":4,"d":{"channel_id":"1","sdkpp_e2ee_public_keys":"not base64"}}`,
		`{"op":4,"d":{"channel_id":"1","sdkpp_e2ee_public_keys":"` + long + `"}}`,
		`{"op":101,"d":[]}`,
		`{"op":101,"d":{"channel_id":"1","keys":[]}}`,
		`{"op":101,"d":{"channel_id":"1","keys":[{"user_id":"2","sealed":""}]}}`,
	} {
		t.Run(bad, func(t *testing.T) {
			c := newCaller(t, e, "mal")
			c.sendRaw(bad)
			for {
				_, err := c.tryRead()
				if err != nil {
					assert.Equal(t, websocket.StatusCode(gwire.CloseDecodeError), websocket.CloseStatus(err), "%v", err)
					return
				}
			}
		})
	}
}
