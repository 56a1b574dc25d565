package server_test

import (
	"context"
	"encoding/json"
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

// botFixture is a dev service with a guild "Bots" owned by alice, with bob, carol and the dev
// application's bot as members: roles "mod" (gradient colors, MANAGE_MESSAGES; the bot and
// carol have it) and "quiet"; text channels "general", "staff" (only mod may view it) and
// "hidden" (nobody but the owner may view it), and a voice channel.
type botFixture struct {
	e                 *servertest.Env
	alice, bob, carol string // bearer tokens
	guild             wire.DevGuild
	other             wire.DevGuild // alice's, without the bot
	botID             wire.Snowflake
	mod, quiet        wire.Role
}

func (f *botFixture) channel(name string) wire.GuildChannel {
	for _, c := range f.guild.Channels {
		if c.Name == name {
			return c
		}
	}
	panic("no channel " + name)
}

func intp(v int) *int { return &v }

func newBotFixture(t *testing.T, opts ...servertest.Option) *botFixture {
	e := servertest.Start(t, opts...)
	f := &botFixture{e: e, botID: e.App.BotUserID}
	f.alice = linkedTokens(t, e, "alice", "openid sdk.social_layer").AccessToken
	f.bob = linkedTokens(t, e, "bob", "openid sdk.social_layer").AccessToken
	f.carol = linkedTokens(t, e, "carol", "openid sdk.social_layer").AccessToken
	mod := 0
	var err error
	f.guild, err = e.Server.CreateGuild(wire.GuildSpec{Name: "Bots", OwnerID: e.User("alice").ID,
		Features: []string{wire.FeatureEnhancedRoleColors},
		Roles: []wire.RoleSpec{
			{Name: "mod", Color: 0xff0000, SecondaryColor: intp(0x00ff00), TertiaryColor: intp(0x0000ff),
				Permissions: wire.Permissions(guildaccess.PermManageMessages)},
			{Name: "quiet", Color: 0x888888},
		},
		Members: []wire.GuildMemberSpec{{ID: e.User("bob").ID}, {ID: e.User("carol").ID, Roles: []int{0}}, {ID: f.botID, Roles: []int{0}}},
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
	f.other, err = e.Server.CreateGuild(wire.GuildSpec{Name: "Elsewhere", OwnerID: e.User("alice").ID})
	require.NoError(t, err)
	r := do(t, http.MethodGet, e.APIURL+"/guilds/"+f.guild.ID.String()+"/roles", nil, bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status, "roles: %s", r.Body)
	var roles []wire.Role
	r.json(t, &roles)
	require.Len(t, roles, 3, "roles %s", r.Body)
	f.mod, f.quiet = roles[1], roles[2]
	return f
}

// botGW is a bot's gateway connection.
type botGW struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialBot(t *testing.T, e *servertest.Env, query string) *botGW {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.URL, "http")+server.GatewayPath+query, nil)
	require.NoError(t, err)
	ws.SetReadLimit(1 << 22)
	t.Cleanup(func() { _ = ws.CloseNow() })
	g := &botGW{t: t, ws: ws}
	g.expect(gwire.OpHello, "")
	return g
}

func (g *botGW) send(op int, d any) {
	g.t.Helper()
	raw, err := json.Marshal(map[string]any{"op": op, "d": d})
	require.NoError(g.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(g.t, g.ws.Write(ctx, websocket.MessageText, raw))
}

// next reads the next payload.
func (g *botGW) next() gwire.Payload {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, raw, err := g.ws.Read(ctx)
	require.NoError(g.t, err)
	var p gwire.Payload
	require.NoError(g.t, json.Unmarshal(raw, &p), "payload %s", raw)
	return p
}

// expect reads the next payload, checks its op and event, and decodes its d into out.
func (g *botGW) expect(op int, event string, out ...any) gwire.Payload {
	g.t.Helper()
	p := g.next()
	t := ""
	if p.T != nil {
		t = *p.T
	}
	require.Equal(g.t, [2]any{op, event}, [2]any{p.Op, t}, "payload d %s", p.D)
	for _, o := range out {
		require.NoError(g.t, json.Unmarshal(p.D, o), "d %s", p.D)
	}
	return p
}

// identify sends Identify with the bot token and intents, and reads READY.
func (g *botGW) identify(token string, intents uint64) map[string]json.RawMessage {
	g.t.Helper()
	g.send(gwire.OpIdentify, map[string]any{"token": token, "intents": intents,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}})
	var ready map[string]json.RawMessage
	g.expect(gwire.OpDispatch, gwire.EventReady, &ready)
	return ready
}

// sync sends a heartbeat and reads up to its ACK: every dispatch sent before it has been read.
func (g *botGW) sync() {
	g.t.Helper()
	g.send(gwire.OpHeartbeat, nil)
	g.expect(gwire.OpHeartbeatACK, "")
}

const allGuildIntents = gwire.IntentGuilds | gwire.IntentGuildMembers | gwire.IntentGuildMessages | gwire.IntentMessageContent

// A bot logs in with its bot token: READY's user is the bot and its guilds come unavailable,
// then one GUILD_CREATE with the channels (overwrites as strings, rule PERM-1), the roles (color
// and colors, rule ROLE-1) and, with GUILD_MEMBERS, every member; without it, the bot's own.
func TestBotGatewayLogin(t *testing.T) {
	f := newBotFixture(t)
	enableIntents(t, f.e, botIntents) // the owner turns the intent on (rule LIM-4)
	g := dialBot(t, f.e, "/?v=10&encoding=json")
	ready := g.identify("Bot "+f.e.App.BotToken, allGuildIntents)
	var user wire.User
	require.NoError(t, json.Unmarshal(ready["user"], &user))
	assert.Equal(t, f.botID, user.ID)
	assert.True(t, user.Bot)
	assert.JSONEq(t, `[{"id":"`+f.guild.ID.String()+`","unavailable":true}]`, string(ready["guilds"]))
	var gc wire.GuildCreate
	raw := g.expect(gwire.OpDispatch, gwire.EventGuildCreate, &gc)
	assert.Equal(t, f.guild.ID, gc.ID)
	assert.False(t, gc.Unavailable)
	assert.Equal(t, 4, gc.MemberCount)
	assert.Len(t, gc.Members, 4)
	assert.Len(t, gc.Channels, 4)
	assert.Equal(t, []string{wire.FeatureEnhancedRoleColors}, gc.Features)
	var doc struct {
		Roles []map[string]any `json:"roles"`
		Chans []struct {
			Name       string           `json:"name"`
			Overwrites []map[string]any `json:"permission_overwrites"`
		} `json:"channels"`
	}
	require.NoError(t, json.Unmarshal(raw.D, &doc))
	// ROLE-1: color is still sent, beside colors.
	assert.Equal(t, map[string]any{"primary_color": float64(0xff0000), "secondary_color": float64(0x00ff00),
		"tertiary_color": float64(0x0000ff)}, doc.Roles[1]["colors"], "ROLE-1")
	assert.Equal(t, float64(0xff0000), doc.Roles[1]["color"], "ROLE-1")
	assert.Equal(t, map[string]any{"primary_color": float64(0x888888), "secondary_color": nil, "tertiary_color": nil},
		doc.Roles[2]["colors"], "ROLE-1")
	assert.Equal(t, "8192", doc.Roles[1]["permissions"], "PERM-1: a string")
	for _, c := range doc.Chans {
		if c.Name == "staff" {
			require.Len(t, c.Overwrites, 2)
			for _, o := range c.Overwrites {
				assert.IsType(t, "", o["allow"], "PERM-1: allow is a string")
				assert.IsType(t, "", o["deny"], "PERM-1: deny is a string")
			}
		}
	}

	g2 := dialBot(t, f.e, "")
	g2.identify(f.e.App.BotToken, gwire.IntentGuilds) // a bare bot token; no GUILD_MEMBERS
	g2.expect(gwire.OpDispatch, gwire.EventGuildCreate, &gc)
	require.Len(t, gc.Members, 1, "only the bot's own member")
	assert.Equal(t, f.botID, gc.Members[0].User.ID)
	assert.Equal(t, []wire.Snowflake{f.mod.ID}, gc.Members[0].Roles)

	// A shard of two that does not hold the guild lists none.
	shard := int((uint64(f.guild.ID) >> 22) % 2)
	g3 := dialBot(t, f.e, "")
	g3.send(gwire.OpIdentify, map[string]any{"token": f.e.App.BotToken, "intents": gwire.IntentGuilds, "shard": []int{1 - shard, 2}})
	var r3 struct {
		Guilds []json.RawMessage `json:"guilds"`
	}
	g3.expect(gwire.OpDispatch, gwire.EventReady, &r3)
	assert.Empty(t, r3.Guilds)
	g3.sync()
}

// GET /gateway/bot: the gateway URL, one shard, and session_start_limit counted per bot on the
// service's clock (each Identify takes one; the window resets after reset_after); max_concurrency
// is the application's (rule GLD-1). The gateway takes Identify's compress and zlib-stream.
func TestGatewayBot(t *testing.T) {
	f := newBotFixture(t, servertest.WithFrozenClock(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)))
	get := func(base string) wire.GatewayBot {
		t.Helper()
		r := do(t, http.MethodGet, base+"/gateway/bot", nil, bot(f.e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "gateway/bot: %s", r.Body)
		var out wire.GatewayBot
		r.json(t, &out)
		return out
	}
	gb := get(f.e.APIURL)
	assert.Equal(t, "ws"+strings.TrimPrefix(f.e.URL, "http")+server.GatewayPath, gb.URL)
	assert.Equal(t, 1, gb.Shards)
	assert.Equal(t, wire.SessionStartLimit{Total: 1000, Remaining: 1000, ResetAfter: 86400000, MaxConcurrency: 1}, gb.SessionStartLimit)
	dialBot(t, f.e, "").identify(f.e.App.BotToken, 0)
	f.e.Clock.Advance(time.Hour)
	gb = get(f.e.URL + "/api/v9") // v9 serves the same API
	assert.Equal(t, 999, gb.SessionStartLimit.Remaining)
	assert.Equal(t, int64(23*3600*1000), gb.SessionStartLimit.ResetAfter)
	f.e.Clock.Advance(23 * time.Hour)
	assert.Equal(t, 1000, get(f.e.APIURL).SessionStartLimit.Remaining)

	require.NoError(t, f.e.Server.SetMaxConcurrency(uint64(f.e.App.ID), 16))
	gb = get(f.e.APIURL)
	assert.Equal(t, 16, gb.SessionStartLimit.MaxConcurrency, "GLD-1")
	assert.Equal(t, 16, gb.Shards, "a multiple of max_concurrency")

	expectAPIError(t, "no token", do(t, http.MethodGet, f.e.APIURL+"/gateway/bot", nil, nil), 401, 0)
	expectAPIError(t, "bearer token", do(t, http.MethodGet, f.e.APIURL+"/gateway/bot", nil, bearer(f.alice)), 401, 0)
	expectAPIError(t, "wrong bot token", do(t, http.MethodGet, f.e.APIURL+"/gateway/bot", nil, bot("x")), 401, 0)

	me := do(t, http.MethodGet, f.e.URL+"/api/v9/users/@me", nil, bot(f.e.App.BotToken))
	assert.Equal(t, http.StatusOK, me.Status, "v9 /users/@me: %s", me.Body)
}
