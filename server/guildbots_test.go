package server_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

func (f *botFixture) api(path string) string { return f.e.APIURL + path }

func (f *botFixture) botHeader() http.Header { return bot(f.e.App.BotToken) }

func (f *botFixture) gpath(rest string) string { return "/guilds/" + f.guild.ID.String() + rest }

// ok sends a request and requires status 200, decoding the body into out.
func ok(t *testing.T, r resp, out any) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "HTTP %d %s", r.Status, r.Body)
	if out != nil {
		r.json(t, out)
	}
}

// The guild routes a bot reads: the guild, its roles, its members (limit/after), one member,
// and channels, with the platform's errors for bad input.
func TestBotGuildRoutes(t *testing.T) {
	f := newBotFixture(t)
	h := f.botHeader()
	var g wire.Guild
	ok(t, do(t, http.MethodGet, f.api(f.gpath("")), nil, h), &g)
	assert.Equal(t, "Bots", g.Name)
	assert.Equal(t, f.e.User("alice").ID, g.OwnerID)
	assert.Len(t, g.Roles, 3)
	assert.Nil(t, g.ApproximateMemberCount)
	ok(t, do(t, http.MethodGet, f.api(f.gpath("?with_counts=true")), nil, h), &g)
	require.NotNil(t, g.ApproximateMemberCount)
	assert.Equal(t, 4, *g.ApproximateMemberCount)
	ok(t, do(t, http.MethodGet, f.api(f.gpath("")), nil, bearer(f.bob)), &g) // a member's user token

	var members []wire.Member
	ok(t, do(t, http.MethodGet, f.api(f.gpath("/members")), nil, h), &members)
	assert.Len(t, members, 1, "the default limit is 1")
	ok(t, do(t, http.MethodGet, f.api(f.gpath("/members?limit=1000")), nil, h), &members)
	require.Len(t, members, 4)
	for i := 1; i < len(members); i++ {
		assert.Less(t, members[i-1].User.ID, members[i].User.ID, "by user id")
	}
	var rest []wire.Member
	ok(t, do(t, http.MethodGet, f.api(f.gpath("/members?limit=2&after="+members[1].User.ID.String())), nil, h), &rest)
	assert.Equal(t, members[2:], rest)

	var m wire.Member
	ok(t, do(t, http.MethodGet, f.api(f.gpath("/members/"+f.e.User("carol").ID.String())), nil, h), &m)
	assert.Equal(t, "carol", m.User.Username)
	assert.Equal(t, []wire.Snowflake{f.mod.ID}, m.Roles)

	var ch wire.Channel
	ok(t, do(t, http.MethodGet, f.api("/channels/"+f.channel("staff").ID.String()), nil, h), &ch)
	assert.Equal(t, "staff", ch.Name)
	require.NotNil(t, ch.GuildID)
	assert.Equal(t, f.guild.ID, *ch.GuildID)
	assert.Len(t, ch.PermissionOverwrites, 2)

	// A Bearer token without the guilds scope, or none.
	narrow := linkedTokens(t, f.e, "bob", "openid identify").AccessToken
	seeded := f.other.ID // the bot is not in it
	for _, tc := range []struct {
		what, path string
		header     http.Header
		status     int
		code       int
	}{
		{"no token", f.gpath(""), nil, 401, 0},
		{"no guilds scope", f.gpath(""), bearer(narrow), 403, wire.CodeMissingAccess},
		{"not a member", "/guilds/" + seeded.String(), h, 403, wire.CodeMissingAccess},
		{"unknown guild", "/guilds/42", h, 404, wire.CodeUnknownGuild},
		{"bad guild id", "/guilds/x", h, 400, wire.CodeInvalidFormBody},
		{"bad with_counts", f.gpath("?with_counts=maybe"), h, 400, wire.CodeInvalidFormBody},
		{"roles of a guild not the bot's", "/guilds/" + seeded.String() + "/roles", h, 403, wire.CodeMissingAccess},
		{"limit 0", f.gpath("/members?limit=0"), h, 400, wire.CodeInvalidFormBody},
		{"limit 1001", f.gpath("/members?limit=1001"), h, 400, wire.CodeInvalidFormBody},
		{"limit x", f.gpath("/members?limit=x"), h, 400, wire.CodeInvalidFormBody},
		{"after x", f.gpath("/members?after=x"), h, 400, wire.CodeInvalidFormBody},
		{"unknown member", f.gpath("/members/42"), h, 404, wire.CodeUnknownMember},
		{"bad member id", f.gpath("/members/@you"), h, 400, wire.CodeInvalidFormBody},
		{"hidden channel", "/channels/" + f.channel("hidden").ID.String(), h, 403, wire.CodeMissingAccess},
		{"staff channel for bob", "/channels/" + f.channel("staff").ID.String(), bearer(f.bob), 403, wire.CodeMissingAccess},
		{"unknown channel", "/channels/42", h, 404, wire.CodeUnknownChannel},
		{"bad channel id", "/channels/x", h, 400, wire.CodeInvalidFormBody},
	} {
		expectAPIError(t, tc.what, do(t, http.MethodGet, f.api(tc.path), nil, tc.header), tc.status, tc.code)
	}
}

// Rule GLD-1: Get Current User Guilds takes shard (0..max_concurrency-1) from a bot and returns
// that shard's guilds; an application using large bot sharding must give it (400).
func TestCurrentUserGuildsShard(t *testing.T) {
	f := newBotFixture(t)
	h := f.botHeader()
	for i := range 5 { // more guilds, so that both shards hold some
		_, err := f.e.Server.CreateGuild(wire.GuildSpec{Name: "g" + string(rune('a'+i)), OwnerID: f.e.User("bob").ID,
			Members: []wire.GuildMemberSpec{{ID: f.botID}}})
		require.NoError(t, err)
	}
	var all []wire.PartialGuild
	ok(t, do(t, http.MethodGet, f.api("/users/@me/guilds"), nil, h), &all)
	require.Len(t, all, 6)
	var one []wire.PartialGuild
	ok(t, do(t, http.MethodGet, f.api("/users/@me/guilds?shard=0"), nil, h), &one)
	assert.Len(t, one, 6, "GLD-1: one shard holds every guild")

	require.NoError(t, f.e.Server.SetMaxConcurrency(uint64(f.e.App.ID), 2))
	expectAPIError(t, "GLD-1: large sharding without shard", do(t, http.MethodGet, f.api("/users/@me/guilds"), nil, h), 400, wire.CodeInvalidFormBody)
	seen := map[wire.Snowflake]bool{}
	for shard := range 2 {
		var part []wire.PartialGuild
		ok(t, do(t, http.MethodGet, f.api("/users/@me/guilds?shard="+string(rune('0'+shard))), nil, h), &part)
		for _, g := range part {
			assert.Equal(t, shard, int((uint64(g.ID)>>22)%2), "GLD-1: guild %s in shard %d", g.ID, shard)
			seen[g.ID] = true
		}
	}
	assert.Len(t, seen, 6, "GLD-1: the shards together hold every guild")
	for _, bad := range []string{"2", "-1", "x", ""} {
		expectAPIError(t, "GLD-1: shard "+bad, do(t, http.MethodGet, f.api("/users/@me/guilds?shard="+bad), nil, h), 400, wire.CodeInvalidFormBody)
	}
	expectAPIError(t, "a user's shard", do(t, http.MethodGet, f.api("/users/@me/guilds?shard=0"), nil, bearer(f.alice)), 400, wire.CodeInvalidFormBody)
}

// png is a data URI of a tiny image.
var png = "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot really"))

// Rule MEM-1: Modify Current Member lets a bot set its nick, avatar, banner and bio in a guild
// (null clears one); the guild's bots with GUILD_MEMBERS get GUILD_MEMBER_UPDATE (rule GW-6).
func TestModifyCurrentMember(t *testing.T) {
	f := newBotFixture(t)
	enableIntents(t, f.e, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := dialBot(t, f.e, "")
	g.identify(f.e.App.BotToken, gwire.IntentGuildMembers)
	path := f.api(f.gpath("/members/@me"))
	var m wire.Member
	ok(t, sendJSON(t, http.MethodPatch, path, map[string]any{"nick": "Helper", "avatar": png, "banner": png, "bio": "I help."},
		f.botHeader()), &m)
	require.NotNil(t, m.Nick)
	assert.Equal(t, "Helper", *m.Nick, "MEM-1")
	require.NotNil(t, m.Avatar, "MEM-1: avatar")
	require.NotNil(t, m.Banner, "MEM-1: banner")
	assert.Len(t, *m.Avatar, 32, "MEM-1: the image's hash")
	assert.Equal(t, "I help.", m.Bio, "MEM-1: bio")
	var upd wire.Member
	g.expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate, &upd)
	require.NotNil(t, upd.GuildID)
	assert.Equal(t, f.guild.ID, *upd.GuildID, "GW-6")
	assert.Equal(t, m.Nick, upd.Nick, "GW-6")

	ok(t, sendJSON(t, http.MethodPatch, path, map[string]any{"avatar": nil, "bio": "still"}, f.botHeader()), &m)
	assert.Nil(t, m.Avatar, "MEM-1: null clears")
	assert.NotNil(t, m.Banner, "MEM-1: absent keeps")
	assert.Equal(t, "still", m.Bio)
	g.expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate)

	for _, tc := range []struct {
		what   string
		body   any
		header http.Header
		status int
		code   int
	}{
		{"not an image", map[string]any{"avatar": "hello"}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"bad base64", map[string]any{"banner": "data:image/png;base64,!!!"}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"svg", map[string]any{"avatar": "data:image/svg+xml;base64,PHN2Zz4="}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"bio too long", map[string]any{"bio": strings.Repeat("b", 191)}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"nick too long", map[string]any{"nick": strings.Repeat("n", 33)}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"nick not a string", map[string]any{"nick": 5}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"a user token", map[string]any{"bio": "x"}, bearer(f.bob), 403, wire.CodeMissingAccess},
	} {
		expectAPIError(t, "MEM-1: "+tc.what, sendJSON(t, http.MethodPatch, path, tc.body, tc.header), tc.status, tc.code)
	}
	expectAPIError(t, "MEM-1: not JSON", do(t, http.MethodPatch, path, strings.NewReader("{"),
		http.Header{"Authorization": f.botHeader()["Authorization"], "Content-Type": {"application/json"}}), 400, wire.CodeInvalidJSON)
	seeded := f.other.ID
	expectAPIError(t, "MEM-1: a guild the bot is not in", sendJSON(t, http.MethodPatch, f.api("/guilds/"+seeded.String()+"/members/@me"),
		map[string]any{"bio": "x"}, f.botHeader()), 403, wire.CodeMissingAccess)
	ok(t, do(t, http.MethodGet, f.api(f.gpath("/members/"+f.botID.String())), nil, f.botHeader()), &m)
	assert.Equal(t, "still", m.Bio, "a refused change stored nothing")
	g.sync() // no update for the refused changes
}

// Rule GW-6: a member who joins, changes or leaves reaches the guild's bots with GUILD_MEMBERS
// as GUILD_MEMBER_ADD, UPDATE and REMOVE, so that their member caches stay current; a bot
// without the intent gets none.
func TestGuildMemberEvents(t *testing.T) {
	f := newBotFixture(t)
	enableIntents(t, f.e, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := dialBot(t, f.e, "")
	g.identify(f.e.App.BotToken, gwire.IntentGuildMembers)
	quiet := dialBot(t, f.e, "")
	quiet.identify(f.e.App.BotToken, gwire.IntentGuildMessages)

	// bob leaves.
	r := do(t, http.MethodDelete, f.api("/users/@me/guilds/"+f.guild.ID.String()), nil, bearer(f.bob))
	require.Equal(t, http.StatusNoContent, r.Status, "leave: %s", r.Body)
	var rm wire.MemberRemove
	g.expect(gwire.OpDispatch, gwire.EventGuildMemberRemove, &rm)
	assert.Equal(t, f.e.User("bob").ID, rm.User.ID, "GW-6: remove")
	assert.Equal(t, f.guild.ID, rm.GuildID)
	expectAPIError(t, "bob is gone", do(t, http.MethodGet, f.api(f.gpath("/members/"+f.e.User("bob").ID.String())), nil, f.botHeader()),
		404, wire.CodeUnknownMember)
	expectAPIError(t, "leave twice", do(t, http.MethodDelete, f.api("/users/@me/guilds/"+f.guild.ID.String()), nil, bearer(f.bob)),
		403, wire.CodeMissingAccess)
	expectAPIError(t, "the owner cannot leave", do(t, http.MethodDelete, f.api("/users/@me/guilds/"+f.guild.ID.String()), nil, bearer(f.alice)),
		400, 50055)

	// bob comes back by an invite.
	now := f.e.Clock.Now()
	require.NoError(t, f.e.Server.Store().InsertGuildInvite(context.Background(), &store.GuildInvite{Code: "join-bots",
		GuildID: uint64(f.guild.ID), ChannelID: uint64(f.channel("general").ID), InviterID: uint64(f.e.User("alice").ID),
		MaxUses: 5, ExpiresAt: now.Add(time.Hour), CreatedAt: now}))
	ok(t, do(t, http.MethodPost, f.api("/invites/join-bots"), nil, bearer(f.bob)), nil)
	var add wire.Member
	g.expect(gwire.OpDispatch, gwire.EventGuildMemberAdd, &add)
	assert.Equal(t, f.e.User("bob").ID, add.User.ID, "GW-6: add")
	require.NotNil(t, add.GuildID)
	assert.Equal(t, f.guild.ID, *add.GuildID)

	// The bot changes its member.
	ok(t, sendJSON(t, http.MethodPatch, f.api(f.gpath("/members/@me")), map[string]any{"nick": "B"}, f.botHeader()), nil)
	var upd wire.Member
	g.expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate, &upd)
	assert.Equal(t, f.botID, upd.User.ID, "GW-6: update")
	g.sync()
	quiet.sync() // GW-6: nothing without GUILD_MEMBERS
}

// Rule GW-2 on the service: a bot's request for all members gets the guild's members in a chunk,
// a second one within 30 s RATE_LIMITED; one for user ids is answered at once.
func TestRequestGuildMembersService(t *testing.T) {
	f := newBotFixture(t, servertest.WithFrozenClock(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)))
	enableIntents(t, f.e, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := dialBot(t, f.e, "")
	g.identify(f.e.App.BotToken, gwire.IntentGuildMembers)
	all := map[string]any{"guild_id": f.guild.ID.String(), "query": "", "limit": 0, "nonce": "a"}
	g.send(gwire.OpRequestGuildMembers, all)
	var chunk wire.GuildMembersChunk
	g.expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	assert.Len(t, chunk.Members, 4)
	assert.Equal(t, "a", chunk.Nonce)
	f.e.Clock.Advance(29 * time.Second)
	g.send(gwire.OpRequestGuildMembers, all)
	var rl wire.RateLimitedEvent
	g.expect(gwire.OpDispatch, gwire.EventRateLimited, &rl)
	assert.Equal(t, gwire.OpRequestGuildMembers, rl.Opcode, "GW-2")
	assert.InDelta(t, 1.0, rl.RetryAfter, 0.001, "GW-2")
	assert.Equal(t, f.guild.ID, rl.Meta.GuildID, "GW-2")
	g.send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": f.guild.ID.String(), "query": "car", "limit": 5})
	g.expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	require.Len(t, chunk.Members, 1)
	assert.Equal(t, "carol", chunk.Members[0].User.Username)
	f.e.Clock.Advance(time.Second)
	g.send(gwire.OpRequestGuildMembers, all)
	g.expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	assert.Len(t, chunk.Members, 4, "GW-2: again after 30 s")
}

// messagesQuery is the path of the channel's messages with a query.
func messagesQuery(ch wire.GuildChannel, q url.Values) string {
	return "/channels/" + ch.ID.String() + "/messages?" + q.Encode()
}

// Guild text channel messages: create, get, list with before/after/around/limit, edit and
// delete, with the permissions of the channel (rule PERM-1); the guild's bots that can view the
// channel get MESSAGE_CREATE / UPDATE / DELETE carrying guild_id, channel_type, mentions and
// member.
func TestGuildMessages(t *testing.T) {
	f := newBotFixture(t)
	enableIntents(t, f.e, wire.AppFlagGatewayMessageContentLimited) // the owner turns the intent on (rule LIM-4)
	g := dialBot(t, f.e, "")
	g.identify(f.e.App.BotToken, gwire.IntentGuildMessages|gwire.IntentMessageContent)
	general, staff, hidden := f.channel("general"), f.channel("staff"), f.channel("hidden")
	post := func(ch wire.GuildChannel, content string, h http.Header) resp {
		return sendJSON(t, http.MethodPost, f.api("/channels/"+ch.ID.String()+"/messages"), map[string]any{"content": content}, h)
	}

	// alice writes, mentioning the bot; the bot gets the message.
	var sent wire.GuildMessage
	ok(t, post(general, "hello <@"+f.botID.String()+"> and <@42>", bearer(f.alice)), &sent)
	var created wire.GuildMessage
	raw := g.expect(gwire.OpDispatch, gwire.EventMessageCreate, &created)
	assert.Equal(t, sent.ID, created.ID)
	assert.Equal(t, f.guild.ID, created.GuildID)
	require.NotNil(t, created.ChannelType, "channel_type: %s", raw.D)
	assert.Equal(t, wire.ChannelGuildText, *created.ChannelType)
	require.NotNil(t, created.Member, "member: %s", raw.D)
	assert.Nil(t, created.Member.User, "the message's member has no user")
	require.Len(t, created.Mentions, 1, "only members are mentioned: %s", raw.D)
	assert.Equal(t, f.botID, created.Mentions[0].ID)
	require.NotNil(t, created.Mentions[0].Member)
	assert.Equal(t, []wire.Snowflake{f.mod.ID}, created.Mentions[0].Member.Roles)
	assert.Equal(t, "alice", created.Author.Username)

	// The bot answers.
	var reply wire.GuildMessage
	ok(t, post(general, "hi alice", f.botHeader()), &reply)
	assert.True(t, reply.Author.Bot)
	g.expect(gwire.OpDispatch, gwire.EventMessageCreate) // its own message too, as on the platform

	// Messages in staff (the bot's role may view it) reach it; in hidden they do not.
	ok(t, post(staff, "staff only", bearer(f.carol)), nil)
	g.expect(gwire.OpDispatch, gwire.EventMessageCreate)
	ok(t, post(hidden, "owner only", bearer(f.alice)), nil)
	g.sync()

	// Paging: five more messages, then before/after/around/limit.
	ids := []wire.Snowflake{sent.ID, reply.ID}
	for i := range 5 {
		var m wire.GuildMessage
		ok(t, post(general, "n"+string(rune('0'+i)), bearer(f.bob)), &m)
		g.expect(gwire.OpDispatch, gwire.EventMessageCreate)
		ids = append(ids, m.ID)
	}
	list := func(q url.Values) []wire.Snowflake {
		t.Helper()
		var out []wire.GuildMessage
		ok(t, do(t, http.MethodGet, f.api(messagesQuery(general, q)), nil, f.botHeader()), &out)
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
	ok(t, do(t, http.MethodGet, f.api("/channels/"+general.ID.String()+"/messages/"+reply.ID.String()), nil, bearer(f.bob)), &one)
	assert.Equal(t, "hi alice", one.Content)

	// The bot edits its answer; bob may not.
	msg := f.api("/channels/" + general.ID.String() + "/messages/" + reply.ID.String())
	var edited wire.GuildMessage
	ok(t, sendJSON(t, http.MethodPatch, msg, map[string]any{"content": "hi again"}, f.botHeader()), &edited)
	assert.NotNil(t, edited.EditedTimestamp)
	var upd wire.GuildMessage
	g.expect(gwire.OpDispatch, gwire.EventMessageUpdate, &upd)
	assert.Equal(t, "hi again", upd.Content)
	assert.Equal(t, f.guild.ID, upd.GuildID)
	require.NotNil(t, upd.ChannelType)
	expectAPIError(t, "another's message", sendJSON(t, http.MethodPatch, msg, map[string]any{"content": "x"}, bearer(f.bob)), 403, 50005)
	// bob may not delete it; carol (mod: MANAGE_MESSAGES) may.
	expectAPIError(t, "PERM-1: delete without MANAGE_MESSAGES", do(t, http.MethodDelete, msg, nil, bearer(f.bob)), 403, wire.CodeMissingPermissions)
	r := do(t, http.MethodDelete, msg, nil, bearer(f.carol))
	require.Equal(t, http.StatusNoContent, r.Status, "delete: %s", r.Body)
	var del wire.GuildMessageDelete
	g.expect(gwire.OpDispatch, gwire.EventMessageDelete, &del)
	assert.Equal(t, wire.GuildMessageDelete{ID: reply.ID, ChannelID: general.ID, GuildID: f.guild.ID}, del)
	expectAPIError(t, "deleted", do(t, http.MethodGet, msg, nil, f.botHeader()), 404, wire.CodeUnknownMessage)

	msgs := f.api("/channels/" + general.ID.String() + "/messages")
	for _, tc := range []struct {
		what, method, url string
		body              any
		header            http.Header
		status, code      int
	}{
		{"empty content", http.MethodPost, msgs, map[string]any{"content": ""}, f.botHeader(), 400, 50006},
		{"no content", http.MethodPost, msgs, map[string]any{}, f.botHeader(), 400, 50006},
		{"content too long", http.MethodPost, msgs, map[string]any{"content": strings.Repeat("x", 2001)}, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"content not a string", http.MethodPost, msgs, map[string]any{"content": 5}, f.botHeader(), 400, wire.CodeInvalidJSON},
		{"voice channel", http.MethodPost, f.api("/channels/" + f.channel("voice").ID.String() + "/messages"), map[string]any{"content": "x"}, f.botHeader(), 400, 50008},
		{"hidden channel", http.MethodPost, f.api("/channels/" + hidden.ID.String() + "/messages"), map[string]any{"content": "x"}, f.botHeader(), 403, wire.CodeMissingAccess},
		{"a guild the caller is not in", http.MethodPost, msgs, map[string]any{"content": "x"}, bot(f.e.ChildApp.BotToken), 403, wire.CodeMissingAccess},
		{"unknown channel with a bot token", http.MethodPost, f.api("/channels/42/messages"), map[string]any{"content": "x"}, f.botHeader(), 404, wire.CodeUnknownChannel},
		{"limit 0", http.MethodGet, msgs + "?limit=0", nil, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"limit 101", http.MethodGet, msgs + "?limit=101", nil, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"before and after", http.MethodGet, msgs + "?before=1&after=2", nil, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"bad around", http.MethodGet, msgs + "?around=x", nil, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"bad message id", http.MethodGet, msgs + "/x", nil, f.botHeader(), 400, wire.CodeInvalidFormBody},
		{"unknown message", http.MethodPatch, msgs + "/42", map[string]any{"content": "x"}, f.botHeader(), 404, wire.CodeUnknownMessage},
		{"hidden history", http.MethodGet, f.api("/channels/" + hidden.ID.String() + "/messages"), nil, f.botHeader(), 403, wire.CodeMissingAccess},
	} {
		expectAPIError(t, tc.what, sendJSON(t, tc.method, tc.url, tc.body, tc.header), tc.status, tc.code)
	}
	g.sync() // nothing for the refused requests
}
