package guilds_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// The guild routes a bot reads: the guild, its roles, its members (limit/after), one member,
// and channels, with the platform's errors for bad input.
func TestBotGuildRoutes(t *testing.T) {
	f := guildtest.NewBots(t)
	h := f.BotHeader()
	var g wire.Guild
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("")), nil, h), &g)
	assert.Equal(t, "Bots", g.Name)
	assert.Equal(t, f.E.User("alice").ID, g.OwnerID)
	assert.Len(t, g.Roles, 3)
	assert.Nil(t, g.ApproximateMemberCount)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("?with_counts=true")), nil, h), &g)
	require.NotNil(t, g.ApproximateMemberCount)
	assert.Equal(t, 4, *g.ApproximateMemberCount)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("")), nil, guildtest.Bearer(f.Bob)), &g) // a member's user token

	var members []wire.Member
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/members")), nil, h), &members)
	assert.Len(t, members, 1, "the default limit is 1")
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/members?limit=1000")), nil, h), &members)
	require.Len(t, members, 4)
	for i := 1; i < len(members); i++ {
		assert.Less(t, members[i-1].User.ID, members[i].User.ID, "by user id")
	}
	var rest []wire.Member
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/members?limit=2&after="+members[1].User.ID.String())), nil, h), &rest)
	assert.Equal(t, members[2:], rest)

	var m wire.Member
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/members/"+f.E.User("carol").ID.String())), nil, h), &m)
	assert.Equal(t, "carol", m.User.Username)
	assert.Equal(t, []wire.Snowflake{f.Mod.ID}, m.Roles)

	var ch wire.Channel
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+f.Channel("staff").ID.String()), nil, h), &ch)
	assert.Equal(t, "staff", ch.Name)
	require.NotNil(t, ch.GuildID)
	assert.Equal(t, f.Guild.ID, *ch.GuildID)
	assert.Len(t, ch.PermissionOverwrites, 2)

	// A Bearer token without the guilds scope, or none.
	narrow := f.E.Token(t, "bob", "openid identify").AccessToken
	seeded := f.Other.ID // the bot is not in it
	for _, tc := range []struct {
		what, path string
		header     http.Header
		status     int
		code       int
	}{
		{"no token", f.GuildPath(""), nil, 401, 0},
		{"no guilds scope", f.GuildPath(""), guildtest.Bearer(narrow), 403, wire.CodeMissingAccess},
		{"not a member", "/guilds/" + seeded.String(), h, 403, wire.CodeMissingAccess},
		{"unknown guild", "/guilds/42", h, 404, wire.CodeUnknownGuild},
		{"bad guild id", "/guilds/x", h, 400, wire.CodeInvalidFormBody},
		{"bad with_counts", f.GuildPath("?with_counts=maybe"), h, 400, wire.CodeInvalidFormBody},
		{"roles of a guild not the bot's", "/guilds/" + seeded.String() + "/roles", h, 403, wire.CodeMissingAccess},
		{"limit 0", f.GuildPath("/members?limit=0"), h, 400, wire.CodeInvalidFormBody},
		{"limit 1001", f.GuildPath("/members?limit=1001"), h, 400, wire.CodeInvalidFormBody},
		{"limit x", f.GuildPath("/members?limit=x"), h, 400, wire.CodeInvalidFormBody},
		{"after x", f.GuildPath("/members?after=x"), h, 400, wire.CodeInvalidFormBody},
		{"unknown member", f.GuildPath("/members/42"), h, 404, wire.CodeUnknownMember},
		{"bad member id", f.GuildPath("/members/@you"), h, 400, wire.CodeInvalidFormBody},
		{"hidden channel", "/channels/" + f.Channel("hidden").ID.String(), h, 403, wire.CodeMissingAccess},
		{"staff channel for bob", "/channels/" + f.Channel("staff").ID.String(), guildtest.Bearer(f.Bob), 403, wire.CodeMissingAccess},
		{"unknown channel", "/channels/42", h, 404, wire.CodeUnknownChannel},
		{"bad channel id", "/channels/x", h, 400, wire.CodeInvalidFormBody},
	} {
		guildtest.ExpectAPIError(t, tc.what, guildtest.Do(t, http.MethodGet, f.API(tc.path), nil, tc.header), tc.status, tc.code)
	}
}

// Rule GLD-1: Get Current User Guilds takes shard (0..max_concurrency-1) from a bot and returns
// that shard's guilds; an application using large bot sharding must give it (400).
func TestCurrentUserGuildsShard(t *testing.T) {
	f := guildtest.NewBots(t)
	h := f.BotHeader()
	for i := range 5 { // more guilds, so that both shards hold some
		_, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "g" + string(rune('a'+i)), OwnerID: f.E.User("bob").ID,
			Members: []wire.GuildMemberSpec{{ID: f.BotID}}})
		require.NoError(t, err)
	}
	var all []wire.PartialGuild
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/users/@me/guilds"), nil, h), &all)
	require.Len(t, all, 6)
	var one []wire.PartialGuild
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/users/@me/guilds?shard=0"), nil, h), &one)
	assert.Len(t, one, 6, "GLD-1: one shard holds every guild")

	require.NoError(t, f.E.Server.SetMaxConcurrency(uint64(f.E.App.ID), 2))
	guildtest.ExpectAPIError(t, "GLD-1: large sharding without shard", guildtest.Do(t, http.MethodGet, f.API("/users/@me/guilds"), nil, h), 400, wire.CodeInvalidFormBody)
	seen := map[wire.Snowflake]bool{}
	for shard := range 2 {
		var part []wire.PartialGuild
		guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/users/@me/guilds?shard="+string(rune('0'+shard))), nil, h), &part)
		for _, g := range part {
			assert.Equal(t, shard, int((uint64(g.ID)>>22)%2), "GLD-1: guild %s in shard %d", g.ID, shard)
			seen[g.ID] = true
		}
	}
	assert.Len(t, seen, 6, "GLD-1: the shards together hold every guild")
	for _, bad := range []string{"2", "-1", "x", ""} {
		guildtest.ExpectAPIError(t, "GLD-1: shard "+bad, guildtest.Do(t, http.MethodGet, f.API("/users/@me/guilds?shard="+bad), nil, h), 400, wire.CodeInvalidFormBody)
	}
	guildtest.ExpectAPIError(t, "a user's shard", guildtest.Do(t, http.MethodGet, f.API("/users/@me/guilds?shard=0"), nil, guildtest.Bearer(f.Alice)), 400, wire.CodeInvalidFormBody)
}

// Rule MEM-1: Modify Current Member lets a bot set its nick, avatar, banner and bio in a guild
// (null clears one); the guild's bots with GUILD_MEMBERS get GUILD_MEMBER_UPDATE (rule GW-6).
func TestModifyCurrentMember(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	path := f.API(f.GuildPath("/members/@me"))
	var m wire.Member
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, path, map[string]any{"nick": "Helper", "avatar": guildtest.PNG, "banner": guildtest.PNG, "bio": "I help."},
		f.BotHeader()), &m)
	require.NotNil(t, m.Nick)
	assert.Equal(t, "Helper", *m.Nick, "MEM-1")
	require.NotNil(t, m.Avatar, "MEM-1: avatar")
	require.NotNil(t, m.Banner, "MEM-1: banner")
	assert.Len(t, *m.Avatar, 32, "MEM-1: the image's hash")
	assert.Equal(t, "I help.", m.Bio, "MEM-1: bio")
	var upd wire.Member
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate, &upd)
	require.NotNil(t, upd.GuildID)
	assert.Equal(t, f.Guild.ID, *upd.GuildID, "GW-6")
	assert.Equal(t, m.Nick, upd.Nick, "GW-6")

	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, path, map[string]any{"avatar": nil, "bio": "still"}, f.BotHeader()), &m)
	assert.Nil(t, m.Avatar, "MEM-1: null clears")
	assert.NotNil(t, m.Banner, "MEM-1: absent keeps")
	assert.Equal(t, "still", m.Bio)
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate)

	for _, tc := range []struct {
		what   string
		body   any
		header http.Header
		status int
		code   int
	}{
		{"not an image", map[string]any{"avatar": "hello"}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"bad base64", map[string]any{"banner": "data:image/guildtest.PNG;base64,!!!"}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"svg", map[string]any{"avatar": "data:image/svg+xml;base64,PHN2Zz4="}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"bio too long", map[string]any{"bio": strings.Repeat("b", 191)}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"nick too long", map[string]any{"nick": strings.Repeat("n", 33)}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"nick not a string", map[string]any{"nick": 5}, f.BotHeader(), 400, wire.CodeInvalidFormBody},
		{"a user token", map[string]any{"bio": "x"}, guildtest.Bearer(f.Bob), 403, wire.CodeMissingAccess},
	} {
		guildtest.ExpectAPIError(t, "MEM-1: "+tc.what, guildtest.SendJSON(t, http.MethodPatch, path, tc.body, tc.header), tc.status, tc.code)
	}
	guildtest.ExpectAPIError(t, "MEM-1: not JSON", guildtest.Do(t, http.MethodPatch, path, strings.NewReader("{"),
		http.Header{"Authorization": f.BotHeader()["Authorization"], "Content-Type": {"application/json"}}), 400, wire.CodeInvalidJSON)
	seeded := f.Other.ID
	guildtest.ExpectAPIError(t, "MEM-1: a guild the bot is not in", guildtest.SendJSON(t, http.MethodPatch, f.API("/guilds/"+seeded.String()+"/members/@me"),
		map[string]any{"bio": "x"}, f.BotHeader()), 403, wire.CodeMissingAccess)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/members/"+f.BotID.String())), nil, f.BotHeader()), &m)
	assert.Equal(t, "still", m.Bio, "a refused change stored nothing")
	g.Sync() // no update for the refused changes
}

// Rule GW-6: a member who joins, changes or leaves reaches the guild's bots with GUILD_MEMBERS
// as GUILD_MEMBER_ADD, UPDATE and REMOVE, so that their member caches stay current; a bot
// without the intent gets none.
func TestGuildMemberEvents(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	quiet := guildtest.Dial(t, f.E, "")
	quiet.Identify(f.E.App.BotToken, gwire.IntentGuildMessages)

	// bob leaves.
	r := guildtest.Do(t, http.MethodDelete, f.API("/users/@me/guilds/"+f.Guild.ID.String()), nil, guildtest.Bearer(f.Bob))
	require.Equal(t, http.StatusNoContent, r.Status, "leave: %s", r.Body)
	var rm wire.MemberRemove
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberRemove, &rm)
	assert.Equal(t, f.E.User("bob").ID, rm.User.ID, "GW-6: remove")
	assert.Equal(t, f.Guild.ID, rm.GuildID)
	guildtest.ExpectAPIError(t, "bob is gone", guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/members/"+f.E.User("bob").ID.String())), nil, f.BotHeader()),
		404, wire.CodeUnknownMember)
	guildtest.ExpectAPIError(t, "leave twice", guildtest.Do(t, http.MethodDelete, f.API("/users/@me/guilds/"+f.Guild.ID.String()), nil, guildtest.Bearer(f.Bob)),
		403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "the owner cannot leave", guildtest.Do(t, http.MethodDelete, f.API("/users/@me/guilds/"+f.Guild.ID.String()), nil, guildtest.Bearer(f.Alice)),
		400, 50055)

	// bob comes back by an invite.
	now := f.E.Clock.Now()
	require.NoError(t, f.E.Server.Store().InsertGuildInvite(context.Background(), &store.GuildInvite{Code: "join-bots",
		GuildID: uint64(f.Guild.ID), ChannelID: uint64(f.Channel("general").ID), InviterID: uint64(f.E.User("alice").ID),
		MaxUses: 5, ExpiresAt: now.Add(time.Hour), CreatedAt: now}))
	guildtest.OK(t, guildtest.Do(t, http.MethodPost, f.API("/invites/join-bots"), nil, guildtest.Bearer(f.Bob)), nil)
	var add wire.Member
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberAdd, &add)
	assert.Equal(t, f.E.User("bob").ID, add.User.ID, "GW-6: add")
	require.NotNil(t, add.GuildID)
	assert.Equal(t, f.Guild.ID, *add.GuildID)

	// The bot changes its member.
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.API(f.GuildPath("/members/@me")), map[string]any{"nick": "B"}, f.BotHeader()), nil)
	var upd wire.Member
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate, &upd)
	assert.Equal(t, f.BotID, upd.User.ID, "GW-6: update")
	g.Sync()
	quiet.Sync() // GW-6: nothing without GUILD_MEMBERS
}

// Rule GW-2 on the service: a bot's request for all members gets the guild's members in a chunk,
// a second one within 30 s RATE_LIMITED; one for user ids is answered at once.
func TestRequestGuildMembersService(t *testing.T) {
	f := guildtest.NewBots(t, servertest.WithFrozenClock(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)))
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	all := map[string]any{"guild_id": f.Guild.ID.String(), "query": "", "limit": 0, "nonce": "a"}
	g.Send(gwire.OpRequestGuildMembers, all)
	var chunk wire.GuildMembersChunk
	g.Expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	assert.Len(t, chunk.Members, 4)
	assert.Equal(t, "a", chunk.Nonce)
	f.E.Clock.Advance(29 * time.Second)
	g.Send(gwire.OpRequestGuildMembers, all)
	var rl wire.RateLimitedEvent
	g.Expect(gwire.OpDispatch, gwire.EventRateLimited, &rl)
	assert.Equal(t, gwire.OpRequestGuildMembers, rl.Opcode, "GW-2")
	assert.InDelta(t, 1.0, rl.RetryAfter, 0.001, "GW-2")
	assert.Equal(t, f.Guild.ID, rl.Meta.GuildID, "GW-2")
	g.Send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": f.Guild.ID.String(), "query": "car", "limit": 5})
	g.Expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	require.Len(t, chunk.Members, 1)
	assert.Equal(t, "carol", chunk.Members[0].User.Username)
	f.E.Clock.Advance(time.Second)
	g.Send(gwire.OpRequestGuildMembers, all)
	g.Expect(gwire.OpDispatch, gwire.EventGuildMembersChunk, &chunk)
	assert.Len(t, chunk.Members, 4, "GW-2: again after 30 s")
}
