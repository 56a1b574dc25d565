package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// guildFixture is a dev service with bearer tokens of the three seeded users.
type guildFixture struct {
	e                 *servertest.Env
	alice, bob, carol string
}

func newGuildFixture(t *testing.T) *guildFixture {
	e := servertest.Start(t)
	f := &guildFixture{e: e}
	f.alice = e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	f.bob = e.Token(t, "bob", "openid sdk.social_layer").AccessToken
	f.carol = e.Token(t, "carol", "openid sdk.social_layer").AccessToken
	return f
}

func (f *guildFixture) guilds(t *testing.T, tok string) []wire.PartialGuild {
	t.Helper()
	r := guildtest.Do(t, http.MethodGet, f.e.APIURL+"/users/@me/guilds", nil, guildtest.Bearer(tok))
	require.Equal(t, http.StatusOK, r.Status, "guilds: %d %s", r.Status, r.Body)
	var out []wire.PartialGuild
	r.JSON(t, &out)
	return out
}

func (f *guildFixture) channels(t *testing.T, tok string, guild wire.Snowflake) []wire.GuildChannel {
	t.Helper()
	r := guildtest.Do(t, http.MethodGet, f.e.APIURL+"/guilds/"+guild.String()+"/channels", nil, guildtest.Bearer(tok))
	require.Equal(t, http.StatusOK, r.Status, "channels: %d %s", r.Status, r.Body)
	var out []wire.GuildChannel
	r.JSON(t, &out)
	return out
}

// ownGuild returns the guild the token's user owns.
func (f *guildFixture) ownGuild(t *testing.T, tok string) wire.PartialGuild {
	t.Helper()
	for _, g := range f.guilds(t, tok) {
		if g.Owner {
			return g
		}
	}
	require.FailNow(t, "no owned guild")
	return wire.PartialGuild{}
}

func channelNamed(t *testing.T, list []wire.GuildChannel, name string) wire.GuildChannel {
	t.Helper()
	for _, c := range list {
		if c.Name == name {
			return c
		}
	}
	require.FailNow(t, "no channel", "%q", name)
	return wire.GuildChannel{}
}

// Rule GCH-1: a user's guilds, and each guild's channels with type, position and parent category
// id, sorted by position; bad input on both routes.
func TestGuildsAndChannels(t *testing.T) {
	f := newGuildFixture(t)
	list := f.guilds(t, f.alice)
	require.Len(t, list, 3, "alice's guilds: %+v", list)
	own := f.ownGuild(t, f.alice)
	require.Equal(t, "Alice's Guild", own.Name, "own guild %+v", own)
	require.NotEmpty(t, own.Permissions, "own guild %+v", own)
	require.NotNil(t, own.Features, "own guild %+v", own)
	chans := f.channels(t, f.alice, own.ID)
	var names []string
	for i, c := range chans {
		names = append(names, c.Name)
		// rule GCH-1: sorted by position
		if i > 0 {
			assert.LessOrEqual(t, chans[i-1].Position, c.Position, "not sorted by position: %+v", chans)
		}
	}
	require.Equal(t, "Text Channels,general,looking-for-group,Voice Channels,Lounge", strings.Join(names, ","), "channels in order")
	text, general, lounge := chans[0], chans[1], chans[4]
	// rule GCH-1: type and parent category id.
	require.Equal(t, wire.ChannelGuildCategory, text.Type, "types and parents: %+v", chans)
	require.Nil(t, text.ParentID, "types and parents: %+v", chans)
	require.Equal(t, wire.ChannelGuildText, general.Type, "types and parents: %+v", chans)
	require.NotNil(t, general.ParentID, "types and parents: %+v", chans)
	require.Equal(t, text.ID, *general.ParentID, "types and parents: %+v", chans)
	require.Equal(t, wire.ChannelGuildVoice, lounge.Type, "types and parents: %+v", chans)
	require.Equal(t, chans[3].ID, *lounge.ParentID, "types and parents: %+v", chans)
	assert.True(t, general.IsLinkable, "the owner may link text channels only: %+v", chans)
	assert.False(t, lounge.IsLinkable, "the owner may link text channels only: %+v", chans)
	assert.False(t, text.IsLinkable, "the owner may link text channels only: %+v", chans)
	// In alice's guild bob manages channels and carol does not.
	assert.True(t, channelNamed(t, f.channels(t, f.bob, own.ID), "general").IsLinkable, "is_linkable does not follow the manage-channels permission")
	assert.False(t, channelNamed(t, f.channels(t, f.carol, own.ID), "general").IsLinkable, "is_linkable does not follow the manage-channels permission")

	// Bad input.
	api := f.e.APIURL
	lonely, err := f.e.Server.CreateGuild(wire.GuildSpec{Name: "Alone", OwnerID: f.e.User("alice").ID})
	require.NoError(t, err)
	guildtest.ExpectAPIError(t, "non-member", guildtest.Do(t, http.MethodGet, api+"/guilds/"+lonely.ID.String()+"/channels", nil, guildtest.Bearer(f.bob)), 403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "unknown guild", guildtest.Do(t, http.MethodGet, api+"/guilds/42/channels", nil, guildtest.Bearer(f.bob)), 404, wire.CodeUnknownGuild)
	guildtest.ExpectAPIError(t, "bad id", guildtest.Do(t, http.MethodGet, api+"/guilds/x1/channels", nil, guildtest.Bearer(f.bob)), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "no token", guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, nil), 401, 0)
	botGuilds := guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, guildtest.Bot(f.e.App.BotToken)) // a bot in no guild
	assert.Equal(t, http.StatusOK, botGuilds.Status, "bot token: %s", botGuilds.Body)
	assert.JSONEq(t, "[]", string(botGuilds.Body), "bot token")
	guildtest.ExpectAPIError(t, "wrong bot token", guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, guildtest.Bot("nope")), 401, 0)
	narrow := f.e.Token(t, "bob", "openid identify").AccessToken
	guildtest.ExpectAPIError(t, "without the guilds scope", guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, guildtest.Bearer(narrow)), 403, wire.CodeMissingAccess)

	// The dev route refuses bad specs and stores nothing.
	admin := http.Header{"Authorization": {"Admin " + f.e.Creds.AdminToken}}
	one := 0
	for _, bad := range []struct {
		spec  wire.GuildSpec
		field string
	}{
		{wire.GuildSpec{Name: "", OwnerID: f.e.User("bob").ID}, "name"},
		{wire.GuildSpec{Name: strings.Repeat("n", 101), OwnerID: f.e.User("bob").ID}, "name"},
		{wire.GuildSpec{Name: "g", OwnerID: 12345}, "owner_id"},
		{wire.GuildSpec{Name: "g", OwnerID: f.e.User("bob").ID, Channel: []wire.GuildChannelSpec{{Name: "c", Type: 99}}}, "channels"},
		{wire.GuildSpec{Name: "g", OwnerID: f.e.User("bob").ID, Channel: []wire.GuildChannelSpec{{Name: "t", Type: 0}, {Name: "c", Type: 0, Parent: &one}}}, "channels"},
	} {
		r := guildtest.SendJSON(t, http.MethodPost, api+"/dev/guilds", bad.spec, admin)
		e := r.APIError(t)
		assert.Equal(t, 400, r.Status, "bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
		assert.Equal(t, wire.CodeInvalidFormBody, e.Code, "bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
		assert.False(t, e.Errors[bad.field] == nil, "bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
	}
	n := len(f.guilds(t, f.bob))
	assert.Equal(t, 3, n, "a refused spec stored a guild: bob is in %d guilds", n)
	r := guildtest.SendJSON(t, http.MethodPost, api+"/dev/guilds", wire.GuildSpec{Name: "Made", OwnerID: f.e.User("bob").ID,
		Channel: []wire.GuildChannelSpec{{Name: "cat", Type: 4, Position: 1}, {Name: "t", Type: 0, Position: 0, Parent: &one}}}, admin)
	var made wire.DevGuild
	r.JSON(t, &made)
	require.Equal(t, 200, r.Status, "dev guild: %d %s", r.Status, r.Body)
	require.Len(t, made.Channels, 2, "dev guild: %d %s", r.Status, r.Body)
	// sorted by position
	got := f.channels(t, f.bob, made.ID)
	if assert.Len(t, got, 2, "dev guild channels %+v", got) {
		assert.Equal(t, "t", got[0].Name, "dev guild channels %+v", got)
		assert.Equal(t, "cat", got[1].Name, "dev guild channels %+v", got)
	}
	r = guildtest.SendJSON(t, http.MethodPost, api+"/dev/guilds", wire.GuildSpec{Name: "x"}, nil)
	assert.Equal(t, 401, r.Status, "dev route without the admin token: %d", r.Status)
}

// Rule LOB-5: a member with CanLinkLobby links a text channel they manage; the lobby shows it as
// linked_channel and the channel the lobby as linked_lobby; lobby channel invites are single use
// and valid one hour; bad input on every route.
func TestLobbyChannelLinkingAndInvites(t *testing.T) {
	f := newGuildFixture(t)
	api := f.e.APIURL
	var lobby wire.Lobby
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "linkme"}, guildtest.Bearer(f.alice)).JSON(t, &lobby)
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "linkme"}, guildtest.Bearer(f.bob))
	lobbyURL := api + "/lobbies/" + lobby.ID.String()
	own := f.ownGuild(t, f.alice)
	chans := f.channels(t, f.alice, own.ID)
	general, lounge, category := channelNamed(t, chans, "general"), channelNamed(t, chans, "Lounge"), channelNamed(t, chans, "Text Channels")
	link := func(tok string, body any) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPatch, lobbyURL+"/channel-linking", body, guildtest.Bearer(tok))
	}
	// Without the member flag CanLinkLobby: 50013.
	guildtest.ExpectAPIError(t, "no CanLinkLobby", link(f.alice, map[string]any{"channel_id": general.ID}), 403, wire.CodeMissingPermissions)
	r := guildtest.SendJSON(t, http.MethodPut, lobbyURL+"/members/"+f.e.User("alice").ID.String(), map[string]any{"flags": 1}, guildtest.Bot(f.e.App.BotToken))
	require.Equal(t, 200, r.Status, "set flag: %d %s", r.Status, r.Body)
	// Bad input, nothing linked.
	guildtest.ExpectAPIError(t, "voice channel", link(f.alice, map[string]any{"channel_id": lounge.ID}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "category", link(f.alice, map[string]any{"channel_id": category.ID}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "unknown channel", link(f.alice, map[string]any{"channel_id": "42"}), 404, wire.CodeUnknownChannel)
	guildtest.ExpectAPIError(t, "malformed id", link(f.alice, map[string]any{"channel_id": "abc"}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "wrong type", link(f.alice, map[string]any{"channel_id": true}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "not an object", link(f.alice, []int{1}), 400, wire.CodeInvalidJSON)
	guildtest.ExpectAPIError(t, "malformed JSON", guildtest.Do(t, http.MethodPatch, lobbyURL+"/channel-linking", strings.NewReader("{"),
		http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + f.alice}}), 400, wire.CodeInvalidJSON)
	guildtest.ExpectAPIError(t, "not a lobby member", link(f.carol, map[string]any{"channel_id": general.ID}), 403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "bot token", guildtest.SendJSON(t, http.MethodPatch, lobbyURL+"/channel-linking", map[string]any{}, guildtest.Bot(f.e.App.BotToken)), 401, 0)
	guildtest.ExpectAPIError(t, "unknown lobby", guildtest.SendJSON(t, http.MethodPatch, api+"/lobbies/42/channel-linking", map[string]any{}, guildtest.Bearer(f.alice)), 404, wire.CodeUnknownLobby)
	// A channel of bob's guild, where alice may not manage channels.
	bobs := channelNamed(t, f.channels(t, f.bob, f.ownGuild(t, f.bob).ID), "general")
	guildtest.ExpectAPIError(t, "channel alice may not manage", link(f.alice, map[string]any{"channel_id": bobs.ID}), 403, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "invite without a linked channel",
		guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/@me/invites", nil, guildtest.Bearer(f.bob)), 404, wire.CodeUnknownChannel)

	// Link: the lobby has linked_channel, the channel linked_lobby.
	r = link(f.alice, map[string]any{"channel_id": general.ID})
	var linked wire.Lobby
	r.JSON(t, &linked)
	require.Equal(t, 200, r.Status, "link: %d %s", r.Status, r.Body)
	require.NotNil(t, linked.LinkedChannel, "link: %d %s", r.Status, r.Body)
	require.Equal(t, general.ID, linked.LinkedChannel.ID, "link: %d %s", r.Status, r.Body)
	require.Equal(t, own.ID, linked.LinkedChannel.GuildID, "link: %d %s", r.Status, r.Body)
	require.Equal(t, "general", linked.LinkedChannel.Name, "link: %d %s", r.Status, r.Body)
	var got wire.Lobby
	guildtest.Do(t, http.MethodGet, lobbyURL, nil, guildtest.Bearer(f.bob)).JSON(t, &got)
	if assert.NotNil(t, got.LinkedChannel, "GET lobby") {
		assert.Equal(t, general.ID, got.LinkedChannel.ID, "GET lobby: %+v", got.LinkedChannel)
	}
	ll := channelNamed(t, f.channels(t, f.alice, own.ID), "general").LinkedLobby
	if assert.NotNil(t, ll, "channel linked_lobby") {
		assert.Equal(t, lobby.ID, ll.LobbyID, "channel linked_lobby %+v", ll)
		assert.Equal(t, f.e.App.ID, ll.ApplicationID, "channel linked_lobby %+v", ll)
	}
	// Another lobby cannot take the channel.
	var other wire.Lobby
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "other"}, guildtest.Bearer(f.alice)).JSON(t, &other)
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies/"+other.ID.String()+"/members/"+f.e.User("alice").ID.String(), map[string]any{"flags": 1}, guildtest.Bot(f.e.App.BotToken))
	guildtest.ExpectAPIError(t, "channel linked elsewhere", guildtest.SendJSON(t, http.MethodPatch, api+"/lobbies/"+other.ID.String()+"/channel-linking",
		map[string]any{"channel_id": general.ID}, guildtest.Bearer(f.alice)), 400, wire.CodeInvalidFormBody)

	// Rule LOB-5: invites for self (Bearer) and for a user (Bot), single use, one hour.
	invite := func(path string, h http.Header) string {
		t.Helper()
		r := guildtest.SendJSON(t, http.MethodPost, lobbyURL+path, nil, h)
		var c wire.InviteCode
		r.JSON(t, &c)
		require.Equal(t, 200, r.Status, "invite %s: %d %s", path, r.Status, r.Body)
		require.NotEmpty(t, c.Code, "invite %s: %d %s", path, r.Status, r.Body)
		return c.Code
	}
	self := invite("/members/@me/invites", guildtest.Bearer(f.bob))
	var inv wire.Invite
	guildtest.Do(t, http.MethodGet, api+"/invites/"+self, nil, nil).JSON(t, &inv)
	require.Equal(t, 1, inv.MaxUses, "invite %+v", inv)
	require.Equal(t, 3600, inv.MaxAge, "invite %+v", inv)
	require.Equal(t, own.ID, inv.Guild.ID, "invite %+v", inv)
	require.Equal(t, general.ID, inv.Channel.ID, "invite %+v", inv)
	require.NotNil(t, inv.Lobby, "invite %+v", inv)
	require.Equal(t, lobby.ID, inv.Lobby.ID, "invite %+v", inv)
	r = guildtest.Do(t, http.MethodPost, api+"/invites/"+self, nil, guildtest.Bearer(f.bob))
	require.Equal(t, 200, r.Status, "accept: %d %s", r.Status, r.Body)
	guildtest.ExpectAPIError(t, "second use (LOB-5 single use)", guildtest.Do(t, http.MethodPost, api+"/invites/"+self, nil, guildtest.Bearer(f.carol)), 404, wire.CodeUnknownInvite)
	guildtest.ExpectAPIError(t, "used invite", guildtest.Do(t, http.MethodGet, api+"/invites/"+self, nil, nil), 404, wire.CodeUnknownInvite)
	forBob := invite("/members/"+f.e.User("bob").ID.String()+"/invites", guildtest.Bot(f.e.App.BotToken))
	guildtest.ExpectAPIError(t, "bot invite for a non-member", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/"+f.e.User("carol").ID.String()+"/invites", nil,
		guildtest.Bot(f.e.App.BotToken)), 404, wire.CodeUnknownMember)
	guildtest.ExpectAPIError(t, "bot route with a bearer token", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/"+f.e.User("bob").ID.String()+"/invites", nil,
		guildtest.Bearer(f.bob)), 401, 0)
	guildtest.ExpectAPIError(t, "self invite by a non-member", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/@me/invites", nil, guildtest.Bearer(f.carol)), 403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "bad user id", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/zz/invites", nil, guildtest.Bot(f.e.App.BotToken)), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "unknown invite", guildtest.Do(t, http.MethodGet, api+"/invites/nope", nil, nil), 404, wire.CodeUnknownInvite)

	// Unlink (channel_id null): the lobby loses linked_channel and the channel becomes free.
	r = link(f.alice, map[string]any{"channel_id": nil})
	var unlinked wire.Lobby
	r.JSON(t, &unlinked)
	require.Equal(t, 200, r.Status, "unlink: %d %s", r.Status, r.Body)
	require.Nil(t, unlinked.LinkedChannel, "unlink: %d %s", r.Status, r.Body)
	ll = channelNamed(t, f.channels(t, f.alice, own.ID), "general").LinkedLobby
	assert.Nil(t, ll, "unlinked channel still shows %+v", ll)

	// Rule LOB-5: valid one hour, by the service's clock.
	f.e.Clock.Advance(time.Hour - time.Second)
	r = guildtest.Do(t, http.MethodGet, api+"/invites/"+forBob, nil, nil)
	assert.Equal(t, 200, r.Status, "invite before its hour: %d %s", r.Status, r.Body)
	f.e.Clock.Advance(2 * time.Second)
	guildtest.ExpectAPIError(t, "invite after its hour", guildtest.Do(t, http.MethodGet, api+"/invites/"+forBob, nil, nil), 404, wire.CodeUnknownInvite)
	guildtest.ExpectAPIError(t, "accept after its hour", guildtest.Do(t, http.MethodPost, api+"/invites/"+forBob, nil, guildtest.Bearer(f.bob)), 404, wire.CodeUnknownInvite)
}

// Rate limits on the live service: the platform's headers on every answer, 429 with its body and
// headers past the limit, and a new window by the service's clock.
func TestRateLimitHeadersAnd429(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) {
			c.RateLimits = ratelimit.Config{Routes: map[string]ratelimit.Rule{"GET /users/@me": {Limit: 2, Window: 5 * time.Second}}}
		}))
	tok := e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	for i, want := range []string{"1", "0"} {
		r := guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, guildtest.Bearer(tok))
		require.Equal(t, 200, r.Status, "request %d: %d %v", i, r.Status, r.Header)
		require.Equal(t, want, r.Header.Get("X-RateLimit-Remaining"), "request %d: %d %v", i, r.Status, r.Header)
		require.Equal(t, "2", r.Header.Get("X-RateLimit-Limit"), "request %d: %d %v", i, r.Status, r.Header)
		require.Equal(t, "5.000", r.Header.Get("X-RateLimit-Reset-After"), "request %d: %d %v", i, r.Status, r.Header)
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Bucket"), "request %d: %d %v", i, r.Status, r.Header)
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Reset"), "request %d: %d %v", i, r.Status, r.Header)
	}
	e.Clock.Advance(time.Second)
	r := guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, guildtest.Bearer(tok))
	var body ratelimit.Body
	r.JSON(t, &body)
	require.Equal(t, http.StatusTooManyRequests, r.Status, "429: %d %v %s", r.Status, r.Header, r.Body)
	require.Equal(t, float64(4), body.RetryAfter, "429: %d %v %s", r.Status, r.Header, r.Body)
	require.False(t, body.Global, "429: %d %v %s", r.Status, r.Header, r.Body)
	require.NotEmpty(t, body.Message, "429: %d %v %s", r.Status, r.Header, r.Body)
	require.Equal(t, "4", r.Header.Get("Retry-After"), "429: %d %v %s", r.Status, r.Header, r.Body)
	require.Empty(t, r.Header.Values("X-RateLimit-Global"), "a route 429 carries no X-RateLimit-Global: %d %v %s", r.Status, r.Header, r.Body)
	require.Equal(t, "user", r.Header.Get("X-RateLimit-Scope"), "429: %d %v %s", r.Status, r.Header, r.Body)
	e.Clock.Advance(4 * time.Second)
	r = guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, guildtest.Bearer(tok))
	require.Equal(t, 200, r.Status, "after the window: %d", r.Status)
}
