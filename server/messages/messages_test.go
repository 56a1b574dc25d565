package messages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// messagesQuery is the path of the channel's messages with a query.
func messagesQuery(ch wire.GuildChannel, q url.Values) string {
	return "/channels/" + ch.ID.String() + "/messages?" + q.Encode()
}

// Guild text channel messages: create, get, list with before/after/around/limit, edit and
// delete, with the permissions of the channel (rule PERM-1); the guild's bots that can view the
// channel get MESSAGE_CREATE / UPDATE / DELETE carrying guild_id, channel_type, mentions and
// member.
func TestGuildMessages(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayMessageContentLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMessages|gwire.IntentMessageContent)
	general, staff, hidden := f.Channel("general"), f.Channel("staff"), f.Channel("hidden")
	post := func(ch wire.GuildChannel, content string, h http.Header) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+ch.ID.String()+"/messages"), map[string]any{"content": content}, h)
	}

	// alice writes, mentioning the bot; the bot gets the message.
	var sent wire.GuildMessage
	guildtest.OK(t, post(general, "hello <@"+f.BotID.String()+"> and <@42>", guildtest.Bearer(f.Alice)), &sent)
	var created wire.GuildMessage
	raw := g.Expect(gwire.OpDispatch, gwire.EventMessageCreate, &created)
	assert.Equal(t, sent.ID, created.ID)
	assert.Equal(t, f.Guild.ID, created.GuildID)
	require.NotNil(t, created.ChannelType, "channel_type: %s", raw.D)
	assert.Equal(t, wire.ChannelGuildText, *created.ChannelType)
	require.NotNil(t, created.Member, "member: %s", raw.D)
	assert.Nil(t, created.Member.User, "the message's member has no user")
	require.Len(t, created.Mentions, 1, "only members are mentioned: %s", raw.D)
	assert.Equal(t, f.BotID, created.Mentions[0].ID)
	require.NotNil(t, created.Mentions[0].Member)
	assert.Equal(t, []wire.Snowflake{f.Mod.ID}, created.Mentions[0].Member.Roles)
	assert.Equal(t, "alice", created.Author.Username)

	// The bot answers.
	var reply wire.GuildMessage
	guildtest.OK(t, post(general, "hi alice", f.BotHeader()), &reply)
	assert.True(t, reply.Author.Bot)
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate) // its own message too, as on the platform

	// Messages in staff (the bot's role may view it) reach it; in hidden they do not.
	guildtest.OK(t, post(staff, "staff only", guildtest.Bearer(f.Carol)), nil)
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	guildtest.OK(t, post(hidden, "owner only", guildtest.Bearer(f.Alice)), nil)
	g.Sync()

	// Paging: five more messages, then before/after/around/limit.
	ids := []wire.Snowflake{sent.ID, reply.ID}
	for i := range 5 {
		var m wire.GuildMessage
		guildtest.OK(t, post(general, "n"+string(rune('0'+i)), guildtest.Bearer(f.Bob)), &m)
		g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
		ids = append(ids, m.ID)
	}
	list := func(q url.Values) []wire.Snowflake {
		t.Helper()
		var out []wire.GuildMessage
		guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(messagesQuery(general, q)), nil, f.BotHeader()), &out)
		got := make([]wire.Snowflake, len(out))
		for i, m := range out {
			got[i] = m.ID
		}
		return got
	}
	rev := func(s []wire.Snowflake) []wire.Snowflake {
		out := make([]wire.Snowflake, len(s))
		for i, id := range s {
			out[len(s)-1-i] = id
		}
		return out
	}
	assert.Equal(t, rev(ids), list(url.Values{}), "newest first")
	assert.Equal(t, rev(ids[5:]), list(url.Values{"limit": {"2"}}))
	assert.Equal(t, rev(ids[1:3]), list(url.Values{"before": {ids[3].String()}, "limit": {"2"}}))
	assert.Equal(t, rev(ids[2:4]), list(url.Values{"after": {ids[1].String()}, "limit": {"2"}}))
	assert.Equal(t, rev(ids[2:5]), list(url.Values{"around": {ids[3].String()}, "limit": {"3"}}))
	var one wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+general.ID.String()+"/messages/"+reply.ID.String()), nil, guildtest.Bearer(f.Bob)), &one)
	assert.Equal(t, "hi alice", one.Content)

	// The bot edits its answer; bob may not.
	msg := f.API("/channels/" + general.ID.String() + "/messages/" + reply.ID.String())
	var edited wire.GuildMessage
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, msg, map[string]any{"content": "hi again"}, f.BotHeader()), &edited)
	assert.NotNil(t, edited.EditedTimestamp)
	var upd wire.GuildMessage
	g.Expect(gwire.OpDispatch, gwire.EventMessageUpdate, &upd)
	assert.Equal(t, "hi again", upd.Content)
	assert.Equal(t, f.Guild.ID, upd.GuildID)
	require.NotNil(t, upd.ChannelType)
	guildtest.ExpectAPIError(t, "another's message", guildtest.SendJSON(t, http.MethodPatch, msg, map[string]any{"content": "x"}, guildtest.Bearer(f.Bob)), 403, 50005)
	// bob may not delete it; carol (mod: MANAGE_MESSAGES) may.
	guildtest.ExpectAPIError(t, "PERM-1: delete without MANAGE_MESSAGES", guildtest.Do(t, http.MethodDelete, msg, nil, guildtest.Bearer(f.Bob)), 403, wire.CodeMissingPermissions)
	r := guildtest.Do(t, http.MethodDelete, msg, nil, guildtest.Bearer(f.Carol))
	require.Equal(t, http.StatusNoContent, r.Status, "delete: %s", r.Body)
	var del wire.GuildMessageDelete
	g.Expect(gwire.OpDispatch, gwire.EventMessageDelete, &del)
	assert.Equal(t, wire.GuildMessageDelete{ID: reply.ID, ChannelID: general.ID, GuildID: f.Guild.ID}, del)
	guildtest.ExpectAPIError(t, "deleted", guildtest.Do(t, http.MethodGet, msg, nil, f.BotHeader()), 404, wire.CodeUnknownMessage)

	msgs := f.API("/channels/" + general.ID.String() + "/messages")
	for _, tc := range []struct {
		what, method, url string
		body              any
		header            http.Header
		status, code      int
	}{
		{"empty content", http.MethodPost, msgs, map[string]any{"content": ""}, f.BotHeader(), 400, 50006},
		{"no content", http.MethodPost, msgs, map[string]any{}, f.BotHeader(), 400, 50006},
		{"content too long", http.MethodPost, msgs, map[string]any{"content": strings.Repeat("x", 2001)}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"content not a string", http.MethodPost, msgs, map[string]any{"content": 5}, f.BotHeader(), 400, wire.CodeInvalidJSON},
		{"voice channel", http.MethodPost, f.API("/channels/" + f.Channel("voice").ID.String() + "/messages"), map[string]any{"content": "x"}, f.BotHeader(), 400, 50008},
		{"hidden channel", http.MethodPost, f.API("/channels/" + hidden.ID.String() + "/messages"), map[string]any{"content": "x"}, f.BotHeader(), 403, wire.CodeMissingAccess},
		{"a guild the caller is not in", http.MethodPost, msgs, map[string]any{"content": "x"}, guildtest.Bot(f.E.ChildApp.BotToken), 403, wire.CodeMissingAccess},
		{"unknown channel with a bot token", http.MethodPost, f.API("/channels/42/messages"), map[string]any{"content": "x"}, f.BotHeader(), 404, wire.CodeUnknownChannel},
		{"limit 0", http.MethodGet, msgs + "?limit=0", nil, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"limit 101", http.MethodGet, msgs + "?limit=101", nil, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"before and after", http.MethodGet, msgs + "?before=1&after=2", nil, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"bad around", http.MethodGet, msgs + "?around=x", nil, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"bad message id", http.MethodGet, msgs + "/x", nil, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"unknown message", http.MethodPatch, msgs + "/42", map[string]any{"content": "x"}, f.BotHeader(), 404, wire.CodeUnknownMessage},
		{"hidden history", http.MethodGet, f.API("/channels/" + hidden.ID.String() + "/messages"), nil, f.BotHeader(), 403, wire.CodeMissingAccess},
	} {
		guildtest.ExpectAPIError(t, tc.what, guildtest.SendJSON(t, tc.method, tc.url, tc.body, tc.header), tc.status, tc.code)
	}
	g.Sync() // nothing for the refused requests
}
