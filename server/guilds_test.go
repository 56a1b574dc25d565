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

// Rule LOB-5: a member with CanLinkLobby links a text channel they manage; the lobby shows it as
// linked_channel and the channel the lobby as linked_lobby; lobby channel invites are single use
// and valid one hour; bad input on every route.
func TestLobbyChannelLinkingAndInvites(t *testing.T) {
	f := guildtest.NewSeeded(t)
	api := f.E.APIURL
	var lobby wire.Lobby
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "linkme"}, guildtest.Bearer(f.Alice)).JSON(t, &lobby)
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "linkme"}, guildtest.Bearer(f.Bob))
	lobbyURL := api + "/lobbies/" + lobby.ID.String()
	own := f.OwnGuild(t, f.Alice)
	chans := f.Channels(t, f.Alice, own.ID)
	general, lounge, category := guildtest.ChannelNamed(t, chans, "general"), guildtest.ChannelNamed(t, chans, "Lounge"), guildtest.ChannelNamed(t, chans, "Text Channels")
	link := func(tok string, body any) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPatch, lobbyURL+"/channel-linking", body, guildtest.Bearer(tok))
	}
	// Without the member flag CanLinkLobby: 50013.
	guildtest.ExpectAPIError(t, "no CanLinkLobby", link(f.Alice, map[string]any{"channel_id": general.ID}), 403, wire.CodeMissingPermissions)
	r := guildtest.SendJSON(t, http.MethodPut, lobbyURL+"/members/"+f.E.User("alice").ID.String(), map[string]any{"flags": 1}, guildtest.Bot(f.E.App.BotToken))
	require.Equal(t, 200, r.Status, "set flag: %d %s", r.Status, r.Body)
	// Bad input, nothing linked.
	guildtest.ExpectAPIError(t, "voice channel", link(f.Alice, map[string]any{"channel_id": lounge.ID}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "category", link(f.Alice, map[string]any{"channel_id": category.ID}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "unknown channel", link(f.Alice, map[string]any{"channel_id": "42"}), 404, wire.CodeUnknownChannel)
	guildtest.ExpectAPIError(t, "malformed id", link(f.Alice, map[string]any{"channel_id": "abc"}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "wrong type", link(f.Alice, map[string]any{"channel_id": true}), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "not an object", link(f.Alice, []int{1}), 400, wire.CodeInvalidJSON)
	guildtest.ExpectAPIError(t, "malformed JSON", guildtest.Do(t, http.MethodPatch, lobbyURL+"/channel-linking", strings.NewReader("{"),
		http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + f.Alice}}), 400, wire.CodeInvalidJSON)
	guildtest.ExpectAPIError(t, "not a lobby member", link(f.Carol, map[string]any{"channel_id": general.ID}), 403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "bot token", guildtest.SendJSON(t, http.MethodPatch, lobbyURL+"/channel-linking", map[string]any{}, guildtest.Bot(f.E.App.BotToken)), 401, 0)
	guildtest.ExpectAPIError(t, "unknown lobby", guildtest.SendJSON(t, http.MethodPatch, api+"/lobbies/42/channel-linking", map[string]any{}, guildtest.Bearer(f.Alice)), 404, wire.CodeUnknownLobby)
	// A channel of bob's guild, where alice may not manage channels.
	bobs := guildtest.ChannelNamed(t, f.Channels(t, f.Bob, f.OwnGuild(t, f.Bob).ID), "general")
	guildtest.ExpectAPIError(t, "channel alice may not manage", link(f.Alice, map[string]any{"channel_id": bobs.ID}), 403, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "invite without a linked channel",
		guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/@me/invites", nil, guildtest.Bearer(f.Bob)), 404, wire.CodeUnknownChannel)

	// Link: the lobby has linked_channel, the channel linked_lobby.
	r = link(f.Alice, map[string]any{"channel_id": general.ID})
	var linked wire.Lobby
	r.JSON(t, &linked)
	require.Equal(t, 200, r.Status, "link: %d %s", r.Status, r.Body)
	require.NotNil(t, linked.LinkedChannel, "link: %d %s", r.Status, r.Body)
	require.Equal(t, general.ID, linked.LinkedChannel.ID, "link: %d %s", r.Status, r.Body)
	require.Equal(t, own.ID, linked.LinkedChannel.GuildID, "link: %d %s", r.Status, r.Body)
	require.Equal(t, "general", linked.LinkedChannel.Name, "link: %d %s", r.Status, r.Body)
	var got wire.Lobby
	guildtest.Do(t, http.MethodGet, lobbyURL, nil, guildtest.Bearer(f.Bob)).JSON(t, &got)
	if assert.NotNil(t, got.LinkedChannel, "GET lobby") {
		assert.Equal(t, general.ID, got.LinkedChannel.ID, "GET lobby: %+v", got.LinkedChannel)
	}
	ll := guildtest.ChannelNamed(t, f.Channels(t, f.Alice, own.ID), "general").LinkedLobby
	if assert.NotNil(t, ll, "channel linked_lobby") {
		assert.Equal(t, lobby.ID, ll.LobbyID, "channel linked_lobby %+v", ll)
		assert.Equal(t, f.E.App.ID, ll.ApplicationID, "channel linked_lobby %+v", ll)
	}
	// Another lobby cannot take the channel.
	var other wire.Lobby
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "other"}, guildtest.Bearer(f.Alice)).JSON(t, &other)
	guildtest.SendJSON(t, http.MethodPut, api+"/lobbies/"+other.ID.String()+"/members/"+f.E.User("alice").ID.String(), map[string]any{"flags": 1}, guildtest.Bot(f.E.App.BotToken))
	guildtest.ExpectAPIError(t, "channel linked elsewhere", guildtest.SendJSON(t, http.MethodPatch, api+"/lobbies/"+other.ID.String()+"/channel-linking",
		map[string]any{"channel_id": general.ID}, guildtest.Bearer(f.Alice)), 400, wire.CodeInvalidFormBody)

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
	self := invite("/members/@me/invites", guildtest.Bearer(f.Bob))
	var inv wire.Invite
	guildtest.Do(t, http.MethodGet, api+"/invites/"+self, nil, nil).JSON(t, &inv)
	require.Equal(t, 1, inv.MaxUses, "invite %+v", inv)
	require.Equal(t, 3600, inv.MaxAge, "invite %+v", inv)
	require.Equal(t, own.ID, inv.Guild.ID, "invite %+v", inv)
	require.Equal(t, general.ID, inv.Channel.ID, "invite %+v", inv)
	require.NotNil(t, inv.Lobby, "invite %+v", inv)
	require.Equal(t, lobby.ID, inv.Lobby.ID, "invite %+v", inv)
	r = guildtest.Do(t, http.MethodPost, api+"/invites/"+self, nil, guildtest.Bearer(f.Bob))
	require.Equal(t, 200, r.Status, "accept: %d %s", r.Status, r.Body)
	guildtest.ExpectAPIError(t, "second use (LOB-5 single use)", guildtest.Do(t, http.MethodPost, api+"/invites/"+self, nil, guildtest.Bearer(f.Carol)), 404, wire.CodeUnknownInvite)
	guildtest.ExpectAPIError(t, "used invite", guildtest.Do(t, http.MethodGet, api+"/invites/"+self, nil, nil), 404, wire.CodeUnknownInvite)
	forBob := invite("/members/"+f.E.User("bob").ID.String()+"/invites", guildtest.Bot(f.E.App.BotToken))
	guildtest.ExpectAPIError(t, "bot invite for a non-member", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/"+f.E.User("carol").ID.String()+"/invites", nil,
		guildtest.Bot(f.E.App.BotToken)), 404, wire.CodeUnknownMember)
	guildtest.ExpectAPIError(t, "bot route with a bearer token", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/"+f.E.User("bob").ID.String()+"/invites", nil,
		guildtest.Bearer(f.Bob)), 401, 0)
	guildtest.ExpectAPIError(t, "self invite by a non-member", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/@me/invites", nil, guildtest.Bearer(f.Carol)), 403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "bad user id", guildtest.SendJSON(t, http.MethodPost, lobbyURL+"/members/zz/invites", nil, guildtest.Bot(f.E.App.BotToken)), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "unknown invite", guildtest.Do(t, http.MethodGet, api+"/invites/nope", nil, nil), 404, wire.CodeUnknownInvite)

	// Unlink (channel_id null): the lobby loses linked_channel and the channel becomes free.
	r = link(f.Alice, map[string]any{"channel_id": nil})
	var unlinked wire.Lobby
	r.JSON(t, &unlinked)
	require.Equal(t, 200, r.Status, "unlink: %d %s", r.Status, r.Body)
	require.Nil(t, unlinked.LinkedChannel, "unlink: %d %s", r.Status, r.Body)
	ll = guildtest.ChannelNamed(t, f.Channels(t, f.Alice, own.ID), "general").LinkedLobby
	assert.Nil(t, ll, "unlinked channel still shows %+v", ll)

	// Rule LOB-5: valid one hour, by the service's clock.
	f.E.Clock.Advance(time.Hour - time.Second)
	r = guildtest.Do(t, http.MethodGet, api+"/invites/"+forBob, nil, nil)
	assert.Equal(t, 200, r.Status, "invite before its hour: %d %s", r.Status, r.Body)
	f.E.Clock.Advance(2 * time.Second)
	guildtest.ExpectAPIError(t, "invite after its hour", guildtest.Do(t, http.MethodGet, api+"/invites/"+forBob, nil, nil), 404, wire.CodeUnknownInvite)
	guildtest.ExpectAPIError(t, "accept after its hour", guildtest.Do(t, http.MethodPost, api+"/invites/"+forBob, nil, guildtest.Bearer(f.Bob)), 404, wire.CodeUnknownInvite)
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
