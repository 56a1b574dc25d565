package guildtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// PNG is a data URI the service takes for an image (its bytes are not a real PNG).
var PNG = "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot really"))

// AllGuildIntents are the intents of a bot that reads every guild event and message.
const AllGuildIntents = gwire.IntentGuilds | gwire.IntentGuildMembers | gwire.IntentGuildMessages | gwire.IntentMessageContent

// IntP is a pointer to v.
func IntP(v int) *int { return &v }

// Bots is a dev service with a guild "Bots" owned by alice, with bob, carol and the dev
// application's bot as members: roles "mod" (gradient colors, MANAGE_MESSAGES; the bot and
// carol have it) and "quiet"; text channels "general", "staff" (only mod may view it) and
// "hidden" (nobody but the owner may view it), and a voice channel.
type Bots struct {
	E                 *servertest.Env
	Alice, Bob, Carol string // bearer tokens (openid sdk.social_layer)
	Guild             wire.DevGuild
	Other             wire.DevGuild // alice's, without the bot
	BotID             wire.Snowflake
	Mod, Quiet        wire.Role
}

// NewBots starts the service with opts and makes the guilds.
func NewBots(t testing.TB, opts ...servertest.Option) *Bots {
	t.Helper()
	e := servertest.Start(t, opts...)
	f := &Bots{E: e, BotID: e.App.BotUserID}
	f.Alice = e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	f.Bob = e.Token(t, "bob", "openid sdk.social_layer").AccessToken
	f.Carol = e.Token(t, "carol", "openid sdk.social_layer").AccessToken
	mod := 0
	var err error
	f.Guild, err = e.Server.CreateGuild(wire.GuildSpec{Name: "Bots", OwnerID: e.User("alice").ID,
		Features: []string{wire.FeatureEnhancedRoleColors},
		Roles: []wire.RoleSpec{
			{Name: "mod", Color: 0xff0000, SecondaryColor: IntP(0x00ff00), TertiaryColor: IntP(0x0000ff),
				Permissions: wire.Permissions(guildaccess.PermManageMessages)},
			{Name: "quiet", Color: 0x888888},
		},
		Members: []wire.GuildMemberSpec{{ID: e.User("bob").ID}, {ID: e.User("carol").ID, Roles: []int{0}}, {ID: f.BotID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{
			{Name: "general", Type: wire.ChannelGuildText},
			{Name: "staff", Type: wire.ChannelGuildText, Position: 1, Overwrites: []wire.OverwriteSpec{
				{Everyone: true, Deny: wire.Permissions(guildaccess.PermViewChannel)},
				{Role: &mod, Allow: wire.Permissions(guildaccess.PermViewChannel)}}},
			{Name: "hidden", Type: wire.ChannelGuildText, Position: 2, Overwrites: []wire.OverwriteSpec{
				{Everyone: true, Deny: wire.Permissions(guildaccess.PermViewChannel)}}},
			{Name: "voice", Type: wire.ChannelGuildVoice, Position: 3},
		}})
	require.NoError(t, err)
	f.Other, err = e.Server.CreateGuild(wire.GuildSpec{Name: "Elsewhere", OwnerID: e.User("alice").ID})
	require.NoError(t, err)
	r := Do(t, http.MethodGet, e.APIURL+"/guilds/"+f.Guild.ID.String()+"/roles", nil, Bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status, "roles: %s", r.Body)
	var roles []wire.Role
	r.JSON(t, &roles)
	require.Len(t, roles, 3, "roles %s", r.Body)
	f.Mod, f.Quiet = roles[1], roles[2]
	return f
}

// Channel is the guild's channel of that name.
func (f *Bots) Channel(name string) wire.GuildChannel {
	for _, c := range f.Guild.Channels {
		if c.Name == name {
			return c
		}
	}
	panic("no channel " + name)
}

// API is the URL of an API path.
func (f *Bots) API(path string) string { return f.E.APIURL + path }

// BotHeader is the header of the application's bot token.
func (f *Bots) BotHeader() http.Header { return Bot(f.E.App.BotToken) }

// GuildPath is the path of the guild "Bots" followed by rest.
func (f *Bots) GuildPath(rest string) string { return "/guilds/" + f.Guild.ID.String() + rest }

// MessagesURL is the URL of a channel's messages, or of one of them.
func (f *Bots) MessagesURL(ch wire.Snowflake, id ...wire.Snowflake) string {
	u := f.API("/channels/" + ch.String() + "/messages")
	for _, m := range id {
		u += "/" + m.String()
	}
	return u
}

// PostMessage sends a message body and requires 200.
func (f *Bots) PostMessage(t testing.TB, ch wire.Snowflake, body map[string]any, h http.Header) wire.GuildMessage {
	t.Helper()
	var m wire.GuildMessage
	OK(t, SendJSON(t, http.MethodPost, f.MessagesURL(ch), body, h), &m)
	return m
}

// Gateway is a bot's gateway connection.
type Gateway struct {
	T  testing.TB
	WS *websocket.Conn
}

// Dial connects to the service's gateway with the query and reads HELLO.
func Dial(t testing.TB, e *servertest.Env, query string) *Gateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.URL, "http")+server.GatewayPath+query, nil)
	require.NoError(t, err)
	ws.SetReadLimit(1 << 22)
	t.Cleanup(func() { _ = ws.CloseNow() })
	g := &Gateway{T: t, WS: ws}
	g.Expect(gwire.OpHello, "")
	return g
}

// Send sends a payload.
func (g *Gateway) Send(op int, d any) {
	g.T.Helper()
	raw, err := json.Marshal(map[string]any{"op": op, "d": d})
	require.NoError(g.T, err)
	g.SendRaw(string(raw))
}

// Next reads the next payload.
func (g *Gateway) Next() gwire.Payload {
	g.T.Helper()
	p, err := g.TryRead()
	require.NoError(g.T, err)
	return p
}

// TryRead reads the next payload, or the error that ends the connection.
func (g *Gateway) TryRead() (gwire.Payload, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, raw, err := g.WS.Read(ctx)
	if err != nil {
		return gwire.Payload{}, err
	}
	var p gwire.Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("payload %s: %w", raw, err)
	}
	return p, nil
}

// SendRaw sends a text frame as it is.
func (g *Gateway) SendRaw(s string) {
	g.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(g.T, g.WS.Write(ctx, websocket.MessageText, []byte(s)))
}

// Expect reads the next payload, checks its op and event, and decodes its d into out.
func (g *Gateway) Expect(op int, event string, out ...any) gwire.Payload {
	g.T.Helper()
	p := g.Next()
	t := ""
	if p.T != nil {
		t = *p.T
	}
	require.Equal(g.T, [2]any{op, event}, [2]any{p.Op, t}, "payload d %s", p.D)
	for _, o := range out {
		require.NoError(g.T, json.Unmarshal(p.D, o), "d %s", p.D)
	}
	return p
}

// Until reads up to the dispatch of event (at most 50 payloads) and decodes its d into out.
func (g *Gateway) Until(event string, out any) {
	g.T.Helper()
	for range 50 {
		p := g.Next()
		if p.Op == gwire.OpDispatch && p.T != nil && *p.T == event {
			require.NoError(g.T, json.Unmarshal(p.D, out), "d %s", p.D)
			return
		}
	}
	g.T.Fatalf("no %s", event)
}

// IdentifyOnly sends Identify with the token and intents, without reading READY.
func (g *Gateway) IdentifyOnly(token string, intents uint64) {
	g.T.Helper()
	g.Send(gwire.OpIdentify, map[string]any{"token": token, "intents": intents,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}})
}

// Identify sends Identify with the bot token and intents, and reads READY.
func (g *Gateway) Identify(token string, intents uint64) map[string]json.RawMessage {
	g.T.Helper()
	g.IdentifyOnly(token, intents)
	var ready map[string]json.RawMessage
	g.Expect(gwire.OpDispatch, gwire.EventReady, &ready)
	return ready
}

// Sync sends a heartbeat and reads up to its ACK: every dispatch sent before it has been read.
func (g *Gateway) Sync() {
	g.T.Helper()
	g.Send(gwire.OpHeartbeat, nil)
	g.Expect(gwire.OpHeartbeatACK, "")
}

// EnableIntents turns on limited privileged intent flags of the application, as its owner does
// in the application's settings: PATCH /applications/@me with the bot token, keeping the other
// flags (rule LIM-4: the test fixtures' bots reach far fewer than 10,000 users).
func EnableIntents(t testing.TB, e *servertest.Env, limited uint64) {
	t.Helper()
	app, err := e.Server.Store().GetApplication(context.Background(), uint64(e.App.ID))
	require.NoError(t, err)
	r := SendJSON(t, http.MethodPatch, e.APIURL+"/applications/@me",
		map[string]uint64{"flags": (app.Flags | limited) & wire.AppFlagsLegacyMask}, Bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status, "PATCH /applications/@me flags: %s", r.Body)
}

// ExpectClosed reads until the connection closes and checks its close code.
func (g *Gateway) ExpectClosed(code int) {
	g.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, raw, err := g.WS.Read(ctx)
		if err != nil {
			assert.Equal(g.T, websocket.StatusCode(code), websocket.CloseStatus(err), "close: %v", err)
			return
		}
		g.T.Logf("before the close: %s", raw)
	}
}

// BotIntents are the limited flags of the privileged intents the bot fixtures identify with.
const BotIntents = wire.AppFlagGatewayGuildMembersLimited | wire.AppFlagGatewayMessageContentLimited
