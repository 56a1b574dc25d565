package voicestatus_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// botGuild is a guild the main application's bot owns (every permission), with alice as a
// member, a voice channel and a text channel; and a guild alice owns where the bot may only
// manage channels.
type botGuild struct {
	e                       *servertest.Env
	id, voice, text         uint64
	other, otherVoice, none uint64 // alice's guilds, with the bot and without
	bobs                    uint64 // a guild without alice
}

func newBotGuild(t *testing.T, e *servertest.Env) *botGuild {
	t.Helper()
	ctx, st := context.Background(), e.Server.Store()
	now := e.Clock.Now()
	bot, alice := uint64(e.App.BotUserID), uint64(e.User("alice").ID)
	g := &botGuild{e: e, id: 1 << 40, voice: 1<<40 + 1, text: 1<<40 + 2, other: 1<<40 + 3, otherVoice: 1<<40 + 4, none: 1<<40 + 5,
		bobs: 1<<40 + 7}
	// The bot owns g.id: guilds.Create takes no bot owner, so the rows are written directly.
	require.NoError(t, st.CreateGuild(ctx, &store.Guild{ID: g.id, Name: "Bot's", OwnerID: bot, CreatedAt: now}))
	require.NoError(t, st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.id, UserID: bot, ManageChannels: true, JoinedAt: now}))
	require.NoError(t, st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.id, UserID: alice, JoinedAt: now}))
	require.NoError(t, st.CreateGuild(ctx, &store.Guild{ID: g.other, Name: "Alice's", OwnerID: alice, CreatedAt: now}))
	require.NoError(t, st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.other, UserID: bot, ManageChannels: true, JoinedAt: now}))
	require.NoError(t, st.CreateGuild(ctx, &store.Guild{ID: g.none, Name: "No bot", OwnerID: alice, CreatedAt: now}))
	require.NoError(t, st.CreateGuild(ctx, &store.Guild{ID: g.bobs, Name: "Bob's", OwnerID: uint64(e.User("bob").ID), CreatedAt: now}))
	for _, c := range []store.GuildChannel{
		{ID: g.voice, GuildID: g.id, Name: "Lounge", Type: wire.ChannelGuildVoice},
		{ID: g.text, GuildID: g.id, Name: "general", Type: wire.ChannelGuildText},
		{ID: g.otherVoice, GuildID: g.other, Name: "Stage", Type: wire.ChannelGuildVoice},
		{ID: g.none + 1, GuildID: g.none, Name: "Far", Type: wire.ChannelGuildVoice},
	} {
		c.CreatedAt = now
		require.NoError(t, st.CreateGuildChannel(ctx, &c))
	}
	return g
}

func (g *botGuild) setStatus(t *testing.T, channel uint64, body string, auth http.Header) guildtest.Resp {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}}
	for k, v := range auth {
		h[k] = v
	}
	return guildtest.Do(t, http.MethodPut, g.e.APIURL+"/channels/"+wire.Snowflake(channel).String()+"/voice-status", strings.NewReader(body), h)
}

func (g *botGuild) auditLog(t *testing.T, guild uint64, query string) (wire.AuditLog, guildtest.Resp) {
	t.Helper()
	r := guildtest.Do(t, http.MethodGet, g.e.APIURL+"/guilds/"+wire.Snowflake(guild).String()+"/audit-logs"+query, nil, guildtest.Bot(g.e.App.BotToken))
	var out wire.AuditLog
	if r.Status == http.StatusOK {
		r.JSON(t, &out)
	}
	return out, r
}

// VCS-1, AUD-1: PUT /channels/{id}/voice-status sets a status of at most 500 characters, needs
// SET_VOICE_CHANNEL_STATUS and (the bot not being in the channel) MANAGE_CHANNELS; each change is
// an audit log entry, 192 with options.status or 193 when cleared; an unchanged status is none.
func TestVoiceChannelStatus(t *testing.T) {
	e := servertest.Start(t)
	g := newBotGuild(t, e)
	botAuth := guildtest.Bot(e.App.BotToken)
	access := e.Token(t, "alice", "identify guilds").AccessToken

	refusals := []struct {
		name    string
		channel string
		body    string
		auth    http.Header
		status  int
		code    int
	}{
		{"no credential", wire.Snowflake(g.voice).String(), `{"status":"x"}`, nil, 401, 0},
		{"a user's token", wire.Snowflake(g.voice).String(), `{"status":"x"}`, guildtest.Bearer(access), 401, 0},
		{"malformed id", "abc", `{"status":"x"}`, botAuth, 400, wire.CodeInvalidFormBody},
		{"unknown channel", "77", `{"status":"x"}`, botAuth, 404, wire.CodeUnknownChannel},
		{"bot not in the guild", wire.Snowflake(g.none + 1).String(), `{"status":"x"}`, botAuth, 403, wire.CodeMissingAccess},
		{"no SET_VOICE_CHANNEL_STATUS", wire.Snowflake(g.otherVoice).String(), `{"status":"x"}`, botAuth, 403, wire.CodeMissingPermissions},
		{"a text channel", wire.Snowflake(g.text).String(), `{"status":"x"}`, botAuth, 400, 50024},
		{"501 characters", wire.Snowflake(g.voice).String(), `{"status":"` + strings.Repeat("é", 501) + `"}`, botAuth, 400, wire.CodeInvalidFormBody},
		{"status not a string", wire.Snowflake(g.voice).String(), `{"status":5}`, botAuth, 400, wire.CodeInvalidJSON},
		{"not JSON", wire.Snowflake(g.voice).String(), `{`, botAuth, 400, wire.CodeInvalidJSON},
	}
	for _, tc := range refusals {
		r := guildtest.Do(t, http.MethodPut, e.APIURL+"/channels/"+tc.channel+"/voice-status", strings.NewReader(tc.body),
			http.Header{"Content-Type": {"application/json"}, "Authorization": tc.auth["Authorization"]})
		assert.Equal(t, tc.status, r.Status, "VCS-1: %s: %s", tc.name, r.Body)
		assert.Equal(t, tc.code, r.APIError(t).Code, "VCS-1: %s", tc.name)
	}
	log, _ := g.auditLog(t, g.id, "")
	assert.Empty(t, log.AuditLogEntries, "AUD-1: a refused change is no entry")

	long := strings.Repeat("é", wire.MaxVoiceStatusChars)
	for _, body := range []string{`{"status":"Raid night"}`, `{"status":"Raid night"}`, `{"status":"` + long + `"}`,
		`{"status":null}`, `{"status":""}`, `{}`} {
		r := g.setStatus(t, g.voice, body, botAuth)
		require.Equal(t, http.StatusNoContent, r.Status, "VCS-1: %.40s: %s", body, r.Body)
	}
	log, r := g.auditLog(t, g.id, "")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Len(t, log.AuditLogEntries, 3, "AUD-1: one entry per change, none for an unchanged status")
	want := []struct {
		action int
		status *string
	}{{wire.AuditVoiceChannelStatusDelete, nil}, {wire.AuditVoiceChannelStatusUpdate, &long},
		{wire.AuditVoiceChannelStatusUpdate, strPtr("Raid night")}}
	for i, w := range want {
		got := log.AuditLogEntries[i]
		assert.Equal(t, w.action, got.ActionType, "AUD-1: entry %d", i)
		require.NotNil(t, got.Options, "AUD-1")
		assert.Equal(t, w.status, got.Options.Status, "AUD-1: options.status of entry %d", i)
		require.NotNil(t, got.TargetID)
		assert.Equal(t, wire.Snowflake(g.voice).String(), *got.TargetID)
		assert.Equal(t, e.App.BotUserID, *got.UserID)
	}
	require.Len(t, log.Users, 1)
	assert.Equal(t, e.App.BotUserID, log.Users[0].ID)
	assert.Equal(t, 192, wire.AuditVoiceChannelStatusUpdate, "AUD-1")
	assert.Equal(t, 193, wire.AuditVoiceChannelStatusDelete, "AUD-1")

	only, _ := g.auditLog(t, g.id, "?action_type=192&limit=1")
	require.Len(t, only.AuditLogEntries, 1)
	assert.Equal(t, log.AuditLogEntries[1].ID, only.AuditLogEntries[0].ID, "AUD-1: the newest update entry")
	before, _ := g.auditLog(t, g.id, "?before="+log.AuditLogEntries[1].ID.String())
	require.Len(t, before.AuditLogEntries, 1)
	assert.Equal(t, log.AuditLogEntries[2].ID, before.AuditLogEntries[0].ID)
	for _, q := range []string{"?limit=0", "?limit=101", "?action_type=x", "?user_id=-1", "?before=abc"} {
		_, r := g.auditLog(t, g.id, q)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Body)
	}
	_, r = g.auditLog(t, g.other, "")
	assert.Equal(t, http.StatusForbidden, r.Status, "VIEW_AUDIT_LOG: %s", r.Body)
	_, r = g.auditLog(t, g.none, "")
	assert.Equal(t, http.StatusForbidden, r.Status)
	_, r = g.auditLog(t, 12345, "")
	assert.Equal(t, http.StatusNotFound, r.Status)
}

func strPtr(s string) *string { return &s }

// GW-3: Request Channel Info (op 43) of a guild member gets CHANNEL_INFO with the status and
// voice_start_time of the guild's voice channels; a guild the user is not in gets no answer; a
// malformed request closes with 4002.
func TestRequestChannelInfo(t *testing.T) {
	e := servertest.Start(t)
	g := newBotGuild(t, e)
	require.Equal(t, http.StatusNoContent, g.setStatus(t, g.voice, `{"status":"Raid night"}`, guildtest.Bot(e.App.BotToken)).Status)

	c := identifyUser(t, e, "alice")
	c.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": wire.Snowflake(12345), "fields": []string{"status"}})
	c.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": wire.Snowflake(g.bobs), "fields": []string{"status"}})
	c.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": wire.Snowflake(g.id), "fields": []string{"status", "voice_start_time"}})
	var info gwire.ChannelInfo
	require.NoError(t, json.Unmarshal(event(c, gwire.EventChannelInfo), &info))
	// The first CHANNEL_INFO is the third request's: the two refused ones got none (GW-3).
	assert.Equal(t, wire.Snowflake(g.id), info.GuildID, "GW-3")
	require.Len(t, info.Channels, 1, "GW-3: the guild's voice channels")
	assert.Equal(t, wire.Snowflake(g.voice), info.Channels[0].ID)
	require.NotNil(t, info.Channels[0].Status, "GW-3")
	assert.Equal(t, "Raid night", *info.Channels[0].Status, "GW-3")
	assert.Nil(t, info.Channels[0].VoiceStartTime, "GW-3: no voice session in the channel")

	c.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": wire.Snowflake(g.id), "fields": []string{}})
	raw := event(c, gwire.EventChannelInfo)
	assert.JSONEq(t, `{"guild_id":"`+wire.Snowflake(g.id).String()+`","channels":[{"id":"`+wire.Snowflake(g.voice).String()+`"}]}`,
		string(raw), "GW-3: fields not asked for are absent")

	for _, bad := range []string{`{"op":43,"d":{"fields":["status"]}}`, `{"op":43,"d":{"guild_id":"1","fields":["topic"]}}`,
		`{"op":43,"d":[]}`, `{"op":43,"d":{"guild_id":"x"}}`} {
		c := identifyUser(t, e, "alice")
		c.SendRaw(bad)
		_, err := c.TryRead()
		assert.Equal(t, websocket.StatusCode(gwire.CloseDecodeError), websocket.CloseStatus(err), "%s: %v", bad, err)
	}
}

// identifyUser identifies a dev user on the gateway with an SDK token of the main application.
func identifyUser(t *testing.T, e *servertest.Env, username string) *guildtest.Gateway {
	t.Helper()
	g := guildtest.Dial(t, e, "?v=10&encoding=json")
	g.Send(gwire.OpIdentify, map[string]any{"token": e.Token(t, username, "openid sdk.social_layer").AccessToken, "intents": 1})
	var ready gwire.Ready
	g.Until(gwire.EventReady, &ready)
	return g
}

// event reads up to the dispatch of name and returns its d.
func event(g *guildtest.Gateway, name string) json.RawMessage {
	g.T.Helper()
	var raw json.RawMessage
	g.Until(name, &raw)
	return raw
}

// GW-4, VCS-1: a bot whose role grants SET_VOICE_CHANNEL_STATUS and MANAGE_CHANNELS sets a
// status; the change reaches the guild's bot sessions with GUILDS, an unchanged status does not.
func TestVoiceStatusDispatchedToBots(t *testing.T) {
	e := servertest.Start(t)
	g0, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Voice", OwnerID: e.User("alice").ID,
		Roles:   []wire.RoleSpec{{Name: "dj", Permissions: wire.Permissions(wire.PermSetVoiceChannelStatus | guildaccess.PermManageChannels)}},
		Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{{Name: "Lounge", Type: wire.ChannelGuildVoice}}})
	require.NoError(t, err)
	voiceCh := g0.Channels[0]
	g := guildtest.Dial(t, e, "/?v=10&encoding=json")
	g.Identify(e.App.BotToken, gwire.IntentGuilds)
	g.Expect(gwire.OpDispatch, gwire.EventGuildCreate)
	put := func(body string) {
		r := guildtest.Do(t, http.MethodPut, e.APIURL+"/channels/"+voiceCh.ID.String()+"/voice-status", strings.NewReader(body),
			http.Header{"Authorization": {"Bot " + e.App.BotToken}, "Content-Type": {"application/json"}})
		require.Equal(t, http.StatusNoContent, r.Status, "VCS-1: %s", r.Body)
	}
	put(`{"status":"Raid night"}`)
	var u gwire.VoiceChannelStatusUpdate
	g.Expect(gwire.OpDispatch, gwire.EventVoiceChannelStatusUpdate, &u)
	require.NotNil(t, u.Status, "GW-4")
	assert.Equal(t, "Raid night", *u.Status, "GW-4")
	assert.Equal(t, voiceCh.ID, u.ID)
	put(`{"status":"Raid night"}`)
	g.Sync() // GW-4: no dispatch before the ACK for an unchanged status
	put(`{"status":null}`)
	g.Expect(gwire.OpDispatch, gwire.EventVoiceChannelStatusUpdate, &u)
	assert.Nil(t, u.Status, "GW-4: cleared")
}
