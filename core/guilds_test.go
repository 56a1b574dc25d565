package core

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
	"sdkpp/wire"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member's Connected flag follows the member's gateway session: true while connected, false
// after the member's client closes, delivered by LOBBY_MEMBER_UPDATE.
func TestLobbyMemberConnected(t *testing.T) {
	env := servertest.Start(t)
	p1, p2 := connected(t, env, "c1"), connected(t, env, "c2")
	var lobbyID uint64
	for _, p := range []*sdkClient{p1, p2} {
		var res *ClientResult
		p.CreateOrJoinLobby("conn", Func(func(r *ClientResult, id uint64) { res, lobbyID = r, id }))
		await(t, "join", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
	}
	other := p2.GetCurrentUserV2().Id()
	var updates int
	p1.SetLobbyMemberUpdatedCallback(Func(func(_, member uint64) {
		if member == other {
			updates++
		}
	}))
	await(t, "p2 connected in p1's view", func() bool {
		h := p1.GetLobbyHandle(lobbyID)
		m := h.GetLobbyMemberHandle(other)
		return m != nil && m.Connected()
	})
	h := p1.GetLobbyHandle(lobbyID)
	require.Nil(t, h.LinkedChannel(), "a lobby without a link shows a linked channel")
	p2.Close()
	await(t, "p2 disconnected in p1's view", func() bool {
		return !p1.GetLobbyHandle(lobbyID).GetLobbyMemberHandle(other).Connected() && updates > 0
	})
}

// A 429 fills ClientResult's Retryable and RetryAfter from the platform's rate-limit body.
func TestRateLimitedResultIsRetryable(t *testing.T) {
	env := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) {
			c.RateLimits = ratelimit.Config{Routes: map[string]ratelimit.Rule{"PATCH /lobbies/{lobby_id}/channel-linking": {Limit: 1, Window: 3 * time.Second}}}
		}))
	p := connected(t, env, "r1")
	var res *ClientResult
	p.CreateOrJoinLobby("rl", Func(func(r *ClientResult, _ uint64) { res = r }))
	await(t, "join", func() bool { return res != nil })
	id := p.GetLobbyIds()[0]
	var first, second *ClientResult
	p.UnlinkChannelFromLobby(id, resultCallback(&first))
	await(t, "first", func() bool { return first != nil })
	p.UnlinkChannelFromLobby(id, resultCallback(&second))
	await(t, "second", func() bool { return second != nil })
	assert.NotEqual(t, HttpStatusCodeTooManyRequests, first.Status(), "first: %s", first.ToString())
	assert.False(t, first.Retryable(), "first: %s", first.ToString())
	assert.EqualValues(t, 429, second.Status(), "second: %s", second.ToString())
	assert.True(t, second.Retryable(), "second: %s", second.ToString())
	assert.EqualValues(t, 3, second.RetryAfter(), "second: %s", second.ToString())
}

// linkedPlayer returns a Client of the seeded user username (a full account, with guilds),
// signed in through Authorize and GetToken and Ready on the gateway.
func linkedPlayer(t *testing.T, env *servertest.Env, username string) *sdkClient {
	t.Helper()
	u := env.User(username)
	c := newSDKClient(t, env, func(loc string) { follow(t, env.Approve(t, loc, u.Username, u.Password)) })
	v := c.CreateAuthorizationCodeVerifier()
	args := NewAuthorizationArgs()
	args.SetScopes(ClientGetDefaultCommunicationScopes())
	args.SetCodeChallenge(v.Challenge())
	var res *ClientResult
	var code, redirect string
	c.Authorize(args, Func(func(r *ClientResult, cd, ru string) { res, code, redirect = r, cd, ru }))
	await(t, username+" Authorize", func() bool { return res != nil })
	require.True(t, res.Successful(), "Authorize: %s", res.ToString())
	var tok *tokens
	c.GetToken(uint64(env.App.ID), code, v.Verifier(), redirect, tokenCallback(&tok))
	await(t, username+" GetToken", func() bool { return tok != nil })
	require.True(t, tok.result.Successful(), "GetToken: %s", tok.result.ToString())
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, tok.access, resultCallback(&up))
	c.Connect()
	await(t, username+" Ready", func() bool { return c.GetStatus() == ClientStatusReady && c.GetCurrentUserV2() != nil })
	return c
}

// userGuilds runs GetUserGuilds to its end.
func userGuilds(t *testing.T, c *sdkClient) (*ClientResult, []*GuildMinimal) {
	t.Helper()
	var res *ClientResult
	var list []*GuildMinimal
	c.GetUserGuilds(Func(func(r *ClientResult, g []*GuildMinimal) { res, list = r, g }))
	await(t, "GetUserGuilds", func() bool { return res != nil })
	return res, list
}

// guildChannels runs GetGuildChannels to its end.
func guildChannels(t *testing.T, c *sdkClient, guild uint64) (*ClientResult, []*GuildChannel) {
	t.Helper()
	var res *ClientResult
	var list []*GuildChannel
	c.GetGuildChannels(guild, Func(func(r *ClientResult, g []*GuildChannel) { res, list = r, g }))
	await(t, "GetGuildChannels", func() bool { return res != nil })
	return res, list
}

func guildNamed(t *testing.T, list []*GuildMinimal, name string) *GuildMinimal {
	t.Helper()
	i := slices.IndexFunc(list, func(g *GuildMinimal) bool { return g.Name() == name })
	require.NotEqual(t, -1, i, "no guild %q", name)
	return list[i]
}

func sdkChannelNamed(t *testing.T, list []*GuildChannel, name string) *GuildChannel {
	t.Helper()
	i := slices.IndexFunc(list, func(c *GuildChannel) bool { return c.Name() == name })
	require.NotEqual(t, -1, i, "no channel %q", name)
	return list[i]
}

// Rule GCH-1: GetUserGuilds lists the player's guilds; GetGuildChannels answers a guild's
// channels with type and parent category id, sorted by position; bad input fails cleanly.
func TestGetUserGuildsAndChannels(t *testing.T) {
	env := servertest.Start(t)
	alice := linkedPlayer(t, env, "alice")
	res, guilds := userGuilds(t, alice)
	require.True(t, res.Successful(), "GetUserGuilds: %s %d", res.ToString(), len(guilds))
	require.Len(t, guilds, 3, "GetUserGuilds: %s %d", res.ToString(), len(guilds))
	own := guildNamed(t, guilds, "Alice's Guild")
	guildNamed(t, guilds, "Bob's Guild")
	require.NotZero(t, own.Id(), "guild without an id")
	res, chans := guildChannels(t, alice, own.Id())
	require.True(t, res.Successful(), res.ToString())
	var names []string
	for i, c := range chans {
		names = append(names, c.Name())
		if i > 0 {
			assert.LessOrEqual(t, chans[i-1].Position(), c.Position(), "not sorted by position at %d", i)
		} // rule GCH-1: sorted by position
	}
	got := strings.Join(names, ",")
	require.Equal(t, "Text Channels,general,looking-for-group,Voice Channels,Lounge", got, "channels in order: %s", got)
	text, general, voice, lounge := chans[0], chans[1], chans[3], chans[4]
	for _, c := range []struct {
		ch       *GuildChannel
		typ      ChannelType
		parent   uint64
		linkable bool
	}{
		{text, ChannelTypeGuildCategory, 0, false},
		{general, ChannelTypeGuildText, text.Id(), true},
		{chans[2], ChannelTypeGuildText, text.Id(), true},
		{voice, ChannelTypeGuildCategory, 0, false},
		{lounge, ChannelTypeGuildVoice, voice.Id(), false},
	} {
		p, has := c.ch.ParentId()
		assert.Equal(t, c.typ, c.ch.Type(), "%s: type %v parent %d,%v linkable %v", c.ch.Name(), c.ch.Type(), p, has, c.ch.IsLinkable())
		assert.Equal(t, (c.parent != 0), has, "%s: type %v parent %d,%v linkable %v", c.ch.Name(), c.ch.Type(), p, has, c.ch.IsLinkable())
		assert.Equal(t, c.parent, p, "%s: type %v parent %d,%v linkable %v", c.ch.Name(), c.ch.Type(), p, has, c.ch.IsLinkable())
		assert.Equal(t, c.linkable, c.ch.IsLinkable(), "%s: type %v parent %d,%v linkable %v", c.ch.Name(), c.ch.Type(), p, has, c.ch.IsLinkable())
		assert.True(t, c.ch.IsViewableAndWriteableByAllMembers(), "%s: type %v parent %d,%v linkable %v", c.ch.Name(), c.ch.Type(), p, has, c.ch.IsLinkable())
		assert.Nil(t, c.ch.LinkedLobby(), "%s: type %v parent %d,%v linkable %v", c.ch.Name(), c.ch.Type(), p, has, c.ch.IsLinkable())
	}
	// The records are copies the game may change.
	cp := general.Clone()
	cp.SetParentId(nil)
	cp.SetLinkedLobby(NewLinkedLobby())
	_, has := general.ParentId()
	assert.True(t, has, "a clone shares state with its original")
	assert.Nil(t, general.LinkedLobby(), "a clone shares state with its original")

	// Bad input: guild 0, an unknown guild, a guild alice is not in, no token.
	lonely, err := env.Server.CreateGuild(wire.GuildSpec{Name: "Alone", OwnerID: env.User("bob").ID})
	require.NoError(t, err)
	for _, bad := range []struct {
		name   string
		guild  uint64
		typ    ErrorType
		status HttpStatusCode
		code   int32
	}{
		{"guild 0", 0, ErrorTypeValidationError, 0, 0},
		{"unknown guild", 42, ErrorTypeHTTPError, 404, wire.CodeUnknownGuild},
		{"not a member", uint64(lonely.ID), ErrorTypeHTTPError, 403, wire.CodeMissingAccess},
	} {
		res, list := guildChannels(t, alice, bad.guild)
		assert.False(t, res.Successful(), "%s: %s", bad.name, res.ToString())
		assert.Equal(t, bad.typ, res.Type(), "%s: %s", bad.name, res.ToString())
		assert.Equal(t, bad.status, res.Status(), "%s: %s", bad.name, res.ToString())
		assert.Equal(t, bad.code, res.ErrorCode(), "%s: %s", bad.name, res.ToString())
		assert.Nil(t, list, "%s: %s", bad.name, res.ToString())
	}
	fresh := newSDKClient(t, env, nil)
	res, _ = userGuilds(t, fresh)
	assert.Equal(t, ErrorTypeClientNotReady, res.Type(), "without a token: %s", res.ToString())
}

// Rule LOB-5: linking a channel from the SDK (after the backend grants CanLinkLobby), the
// lobby's LinkedChannel and the channel's LinkedLobby, JoinLinkedLobbyGuild's single-use invite
// URL, and unlinking; a provisional player gets the merge callback and no request is made.
func TestChannelLinkingAndJoinLinkedLobbyGuild(t *testing.T) {
	var logs servertest.LogBuffer
	env := servertest.Start(t, servertest.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	invites := func() int { return strings.Count(logs.String(), "/members/@me/invites") }
	alice, bob := linkedPlayer(t, env, "alice"), linkedPlayer(t, env, "bob")
	guest := connected(t, env, "guest")
	var lobbyID uint64
	for _, p := range []*sdkClient{alice, bob, guest} {
		var res *ClientResult
		p.CreateOrJoinLobby("linked", Func(func(r *ClientResult, id uint64) { res, lobbyID = r, id }))
		await(t, "join", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
	}
	_, guilds := userGuilds(t, alice)
	own := guildNamed(t, guilds, "Alice's Guild")
	_, chans := guildChannels(t, alice, own.Id())
	general, lounge := sdkChannelNamed(t, chans, "general"), sdkChannelNamed(t, chans, "Lounge")
	link := func(p *sdkClient, channel uint64) *ClientResult {
		var res *ClientResult
		p.LinkChannelToLobby(lobbyID, channel, resultCallback(&res))
		await(t, "LinkChannelToLobby", func() bool { return res != nil })
		return res
	}
	res := link(alice, general.Id())
	require.EqualValues(t, 403, res.Status(), "link without CanLinkLobby: %s", res.ToString())
	require.EqualValues(t, wire.CodeMissingPermissions, res.ErrorCode(), "link without CanLinkLobby: %s", res.ToString())
	aliceID := alice.GetCurrentUserV2().Id()
	botRequest(t, env, http.MethodPut, "/lobbies/"+strconv.FormatUint(lobbyID, 10)+"/members/"+strconv.FormatUint(aliceID, 10), map[string]any{"flags": 1}, 200)
	await(t, "CanLinkLobby in alice's view", func() bool {
		m := alice.GetLobbyHandle(lobbyID).GetLobbyMemberHandle(aliceID)
		return m != nil && m.CanLinkLobby()
	})
	for _, bad := range []struct {
		name    string
		channel uint64
		status  HttpStatusCode
		code    int32
	}{
		{"voice channel", lounge.Id(), 400, wire.CodeInvalidFormBody},
		{"unknown channel", 42, 404, wire.CodeUnknownChannel},
	} {
		res := link(alice, bad.channel)
		assert.Equal(t, bad.status, res.Status(), "%s: %s", bad.name, res.ToString())
		assert.Equal(t, bad.code, res.ErrorCode(), "%s: %s", bad.name, res.ToString())
	}
	join := func(p *sdkClient) (merge bool, res *ClientResult, url string) {
		p.JoinLinkedLobbyGuild(lobbyID, Func(func() { merge = true }), Func(func(r *ClientResult, u string) { res, url = r, u }))
		await(t, "JoinLinkedLobbyGuild", func() bool { return merge || res != nil })
		return merge, res, url
	}
	merge, res, _ := join(bob)
	assert.False(t, merge, "JoinLinkedLobbyGuild before a link: %v %s", merge, res.ToString())
	assert.False(t, res.Successful(), "JoinLinkedLobbyGuild before a link: %v %s", merge, res.ToString())
	assert.EqualValues(t, wire.CodeUnknownChannel, res.ErrorCode(), "JoinLinkedLobbyGuild before a link: %v %s", merge, res.ToString())

	res = link(alice, general.Id())
	require.True(t, res.Successful(), "link: %s", res.ToString())
	await(t, "the link in bob's view", func() bool {
		lc := bob.GetLobbyHandle(lobbyID).LinkedChannel()
		return lc != nil && lc.Id() == general.Id() && lc.GuildId() == own.Id() && lc.Name() == "general"
	})
	_, chans = guildChannels(t, alice, own.Id())
	ll := sdkChannelNamed(t, chans, "general").LinkedLobby()
	assert.NotNil(t, ll, "general's LinkedLobby: %+v", ll)
	assert.Equal(t, lobbyID, ll.LobbyId(), "general's LinkedLobby: %+v", ll)
	assert.Equal(t, uint64(env.App.ID), ll.ApplicationId(), "general's LinkedLobby: %+v", ll)

	// Rule LOB-5: bob's invite is a single-use web URL to the linked channel's guild.
	merge, res, url := join(bob)
	require.False(t, merge, "JoinLinkedLobbyGuild: %v %s %q", merge, res.ToString(), url)
	require.True(t, res.Successful(), "JoinLinkedLobbyGuild: %v %s %q", merge, res.ToString(), url)
	require.True(t, strings.HasPrefix(url, env.URL+"/invite/"), "JoinLinkedLobbyGuild: %v %s %q", merge, res.ToString(), url)
	code := strings.TrimPrefix(url, env.URL+"/invite/")
	resp, err := http.Get(env.APIURL + "/invites/" + code)
	require.NoError(t, err)
	var inv wire.Invite
	err = json.NewDecoder(resp.Body).Decode(&inv)
	resp.Body.Close()
	assert.NoError(t, err, "invite %+v", inv)
	assert.EqualValues(t, 200, resp.StatusCode, "invite %+v", inv)
	assert.EqualValues(t, 1, inv.MaxUses, "invite %+v", inv)
	assert.EqualValues(t, 3600, inv.MaxAge, "invite %+v", inv)
	assert.Equal(t, own.Id(), uint64(inv.Guild.ID), "invite %+v", inv)
	assert.Equal(t, general.Id(), uint64(inv.Channel.ID), "invite %+v", inv)
	// A provisional player: only the merge callback, and no invite request (bob's next request
	// is the only one the service logs after it).
	await(t, "the service logged bob's invite requests", func() bool { return invites() == 2 })
	merge, res, _ = join(guest)
	assert.True(t, merge, "provisional player: merge %v, result %v", merge, res)
	assert.Nil(t, res, "provisional player: merge %v, result %v", merge, res)
	merge, res, _ = join(bob)
	assert.False(t, merge, "bob's second invite: %s", res.ToString())
	assert.True(t, res.Successful(), "bob's second invite: %s", res.ToString())
	await(t, "the service logged bob's third invite request", func() bool { return invites() >= 3 })
	n := invites()
	assert.EqualValues(t, 3, n, "%d invite requests logged, want 3: the provisional player's call made a request", n)

	var unlinked *ClientResult
	alice.UnlinkChannelFromLobby(lobbyID, resultCallback(&unlinked))
	await(t, "unlink", func() bool { return unlinked != nil && bob.GetLobbyHandle(lobbyID).LinkedChannel() == nil })
	assert.True(t, unlinked.Successful(), unlinked.ToString())
}
