package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
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
	f.alice = linkedTokens(t, e, "alice", "openid sdk.social_layer").AccessToken
	f.bob = linkedTokens(t, e, "bob", "openid sdk.social_layer").AccessToken
	f.carol = linkedTokens(t, e, "carol", "openid sdk.social_layer").AccessToken
	return f
}

func (f *guildFixture) guilds(t *testing.T, tok string) []wire.PartialGuild {
	t.Helper()
	r := do(t, http.MethodGet, f.e.APIURL+"/users/@me/guilds", nil, bearer(tok))
	if r.Status != http.StatusOK {
		t.Fatalf("guilds: %d %s", r.Status, r.Body)
	}
	var out []wire.PartialGuild
	r.json(t, &out)
	return out
}

func (f *guildFixture) channels(t *testing.T, tok string, guild wire.Snowflake) []wire.GuildChannel {
	t.Helper()
	r := do(t, http.MethodGet, f.e.APIURL+"/guilds/"+guild.String()+"/channels", nil, bearer(tok))
	if r.Status != http.StatusOK {
		t.Fatalf("channels: %d %s", r.Status, r.Body)
	}
	var out []wire.GuildChannel
	r.json(t, &out)
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
	t.Fatal("no owned guild")
	return wire.PartialGuild{}
}

func channelNamed(t *testing.T, list []wire.GuildChannel, name string) wire.GuildChannel {
	t.Helper()
	for _, c := range list {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no channel %q", name)
	return wire.GuildChannel{}
}

func expectAPIError(t *testing.T, what string, r resp, status, code int) {
	t.Helper()
	if r.Status != status || r.apiError(t).Code != code {
		t.Errorf("%s: HTTP %d %s, want %d code %d", what, r.Status, r.Body, status, code)
	}
}

// Rule GCH-1: a user's guilds, and each guild's channels with type, position and parent category
// id, sorted by position; bad input on both routes.
func TestGuildsAndChannels(t *testing.T) {
	f := newGuildFixture(t)
	list := f.guilds(t, f.alice)
	if len(list) != 3 {
		t.Fatalf("alice's guilds: %+v", list)
	}
	own := f.ownGuild(t, f.alice)
	if own.Name != "Alice's Guild" || own.Permissions == "" || own.Features == nil {
		t.Fatalf("own guild %+v", own)
	}
	chans := f.channels(t, f.alice, own.ID)
	var names []string
	for i, c := range chans {
		names = append(names, c.Name)
		if i > 0 && chans[i-1].Position > c.Position { // rule GCH-1: sorted by position
			t.Errorf("not sorted by position: %+v", chans)
		}
	}
	if got := strings.Join(names, ","); got != "Text Channels,general,looking-for-group,Voice Channels,Lounge" {
		t.Fatalf("channels in order: %s", got)
	}
	text, general, lounge := chans[0], chans[1], chans[4]
	// rule GCH-1: type and parent category id.
	if text.Type != wire.ChannelGuildCategory || text.ParentID != nil || general.Type != wire.ChannelGuildText ||
		general.ParentID == nil || *general.ParentID != text.ID || lounge.Type != wire.ChannelGuildVoice || *lounge.ParentID != chans[3].ID {
		t.Fatalf("types and parents: %+v", chans)
	}
	if !general.IsLinkable || lounge.IsLinkable || text.IsLinkable {
		t.Errorf("the owner may link text channels only: %+v", chans)
	}
	// In alice's guild bob manages channels and carol does not.
	if !channelNamed(t, f.channels(t, f.bob, own.ID), "general").IsLinkable ||
		channelNamed(t, f.channels(t, f.carol, own.ID), "general").IsLinkable {
		t.Error("is_linkable does not follow the manage-channels permission")
	}

	// Bad input.
	api := f.e.APIURL
	lonely, err := f.e.Server.CreateGuild(wire.GuildSpec{Name: "Alone", OwnerID: f.e.User("alice").ID})
	if err != nil {
		t.Fatal(err)
	}
	expectAPIError(t, "non-member", do(t, http.MethodGet, api+"/guilds/"+lonely.ID.String()+"/channels", nil, bearer(f.bob)), 403, wire.CodeMissingAccess)
	expectAPIError(t, "unknown guild", do(t, http.MethodGet, api+"/guilds/42/channels", nil, bearer(f.bob)), 404, wire.CodeUnknownGuild)
	expectAPIError(t, "bad id", do(t, http.MethodGet, api+"/guilds/x1/channels", nil, bearer(f.bob)), 400, wire.CodeInvalidFormBody)
	expectAPIError(t, "no token", do(t, http.MethodGet, api+"/users/@me/guilds", nil, nil), 401, 0)
	expectAPIError(t, "bot token", do(t, http.MethodGet, api+"/users/@me/guilds", nil, bot(f.e.App.BotToken)), 401, 0)
	narrow := linkedTokens(t, f.e, "bob", "openid identify").AccessToken
	expectAPIError(t, "without the guilds scope", do(t, http.MethodGet, api+"/users/@me/guilds", nil, bearer(narrow)), 403, wire.CodeMissingAccess)

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
		r := sendJSON(t, http.MethodPost, api+"/dev/guilds", bad.spec, admin)
		if e := r.apiError(t); r.Status != 400 || e.Code != wire.CodeInvalidFormBody || e.Errors[bad.field] == nil {
			t.Errorf("bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
		}
	}
	if n := len(f.guilds(t, f.bob)); n != 3 {
		t.Errorf("a refused spec stored a guild: bob is in %d guilds", n)
	}
	r := sendJSON(t, http.MethodPost, api+"/dev/guilds", wire.GuildSpec{Name: "Made", OwnerID: f.e.User("bob").ID,
		Channel: []wire.GuildChannelSpec{{Name: "cat", Type: 4, Position: 1}, {Name: "t", Type: 0, Position: 0, Parent: &one}}}, admin)
	var made wire.DevGuild
	if r.json(t, &made); r.Status != 200 || len(made.Channels) != 2 {
		t.Fatalf("dev guild: %d %s", r.Status, r.Body)
	}
	if got := f.channels(t, f.bob, made.ID); got[0].Name != "t" || got[1].Name != "cat" { // sorted by position
		t.Errorf("dev guild channels %+v", got)
	}
	if r := sendJSON(t, http.MethodPost, api+"/dev/guilds", wire.GuildSpec{Name: "x"}, nil); r.Status != 401 {
		t.Errorf("dev route without the admin token: %d", r.Status)
	}
}

// Rule LOB-5: a member with CanLinkLobby links a text channel they manage; the lobby shows it as
// linked_channel and the channel the lobby as linked_lobby; lobby channel invites are single use
// and valid one hour; bad input on every route.
func TestLobbyChannelLinkingAndInvites(t *testing.T) {
	f := newGuildFixture(t)
	api := f.e.APIURL
	var lobby wire.Lobby
	sendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "linkme"}, bearer(f.alice)).json(t, &lobby)
	sendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "linkme"}, bearer(f.bob))
	lobbyURL := api + "/lobbies/" + lobby.ID.String()
	own := f.ownGuild(t, f.alice)
	chans := f.channels(t, f.alice, own.ID)
	general, lounge, category := channelNamed(t, chans, "general"), channelNamed(t, chans, "Lounge"), channelNamed(t, chans, "Text Channels")
	link := func(tok string, body any) resp {
		return sendJSON(t, http.MethodPatch, lobbyURL+"/channel-linking", body, bearer(tok))
	}
	// Without the member flag CanLinkLobby: 50013.
	expectAPIError(t, "no CanLinkLobby", link(f.alice, map[string]any{"channel_id": general.ID}), 403, wire.CodeMissingPermissions)
	if r := sendJSON(t, http.MethodPut, lobbyURL+"/members/"+f.e.User("alice").ID.String(), map[string]any{"flags": 1}, bot(f.e.App.BotToken)); r.Status != 200 {
		t.Fatalf("set flag: %d %s", r.Status, r.Body)
	}
	// Bad input, nothing linked.
	expectAPIError(t, "voice channel", link(f.alice, map[string]any{"channel_id": lounge.ID}), 400, wire.CodeInvalidFormBody)
	expectAPIError(t, "category", link(f.alice, map[string]any{"channel_id": category.ID}), 400, wire.CodeInvalidFormBody)
	expectAPIError(t, "unknown channel", link(f.alice, map[string]any{"channel_id": "42"}), 404, wire.CodeUnknownChannel)
	expectAPIError(t, "malformed id", link(f.alice, map[string]any{"channel_id": "abc"}), 400, wire.CodeInvalidFormBody)
	expectAPIError(t, "wrong type", link(f.alice, map[string]any{"channel_id": true}), 400, wire.CodeInvalidFormBody)
	expectAPIError(t, "not an object", link(f.alice, []int{1}), 400, wire.CodeInvalidJSON)
	expectAPIError(t, "malformed JSON", do(t, http.MethodPatch, lobbyURL+"/channel-linking", strings.NewReader("{"),
		http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + f.alice}}), 400, wire.CodeInvalidJSON)
	expectAPIError(t, "not a lobby member", link(f.carol, map[string]any{"channel_id": general.ID}), 403, wire.CodeMissingAccess)
	expectAPIError(t, "bot token", sendJSON(t, http.MethodPatch, lobbyURL+"/channel-linking", map[string]any{}, bot(f.e.App.BotToken)), 401, 0)
	expectAPIError(t, "unknown lobby", sendJSON(t, http.MethodPatch, api+"/lobbies/42/channel-linking", map[string]any{}, bearer(f.alice)), 404, wire.CodeUnknownLobby)
	// A channel of bob's guild, where alice may not manage channels.
	bobs := channelNamed(t, f.channels(t, f.bob, f.ownGuild(t, f.bob).ID), "general")
	expectAPIError(t, "channel alice may not manage", link(f.alice, map[string]any{"channel_id": bobs.ID}), 403, wire.CodeMissingPermissions)
	expectAPIError(t, "invite without a linked channel",
		sendJSON(t, http.MethodPost, lobbyURL+"/members/@me/invites", nil, bearer(f.bob)), 404, wire.CodeUnknownChannel)

	// Link: the lobby has linked_channel, the channel linked_lobby.
	r := link(f.alice, map[string]any{"channel_id": general.ID})
	var linked wire.Lobby
	if r.json(t, &linked); r.Status != 200 || linked.LinkedChannel == nil || linked.LinkedChannel.ID != general.ID ||
		linked.LinkedChannel.GuildID != own.ID || linked.LinkedChannel.Name != "general" {
		t.Fatalf("link: %d %s", r.Status, r.Body)
	}
	var got wire.Lobby
	do(t, http.MethodGet, lobbyURL, nil, bearer(f.bob)).json(t, &got)
	if got.LinkedChannel == nil || got.LinkedChannel.ID != general.ID {
		t.Errorf("GET lobby: %+v", got.LinkedChannel)
	}
	if ll := channelNamed(t, f.channels(t, f.alice, own.ID), "general").LinkedLobby; ll == nil || ll.LobbyID != lobby.ID || ll.ApplicationID != f.e.App.ID {
		t.Errorf("channel linked_lobby %+v", ll)
	}
	// Another lobby cannot take the channel.
	var other wire.Lobby
	sendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "other"}, bearer(f.alice)).json(t, &other)
	sendJSON(t, http.MethodPut, api+"/lobbies/"+other.ID.String()+"/members/"+f.e.User("alice").ID.String(), map[string]any{"flags": 1}, bot(f.e.App.BotToken))
	expectAPIError(t, "channel linked elsewhere", sendJSON(t, http.MethodPatch, api+"/lobbies/"+other.ID.String()+"/channel-linking",
		map[string]any{"channel_id": general.ID}, bearer(f.alice)), 400, wire.CodeInvalidFormBody)

	// Rule LOB-5: invites for self (Bearer) and for a user (Bot), single use, one hour.
	invite := func(path string, h http.Header) string {
		t.Helper()
		r := sendJSON(t, http.MethodPost, lobbyURL+path, nil, h)
		var c wire.InviteCode
		if r.json(t, &c); r.Status != 200 || c.Code == "" {
			t.Fatalf("invite %s: %d %s", path, r.Status, r.Body)
		}
		return c.Code
	}
	self := invite("/members/@me/invites", bearer(f.bob))
	var inv wire.Invite
	do(t, http.MethodGet, api+"/invites/"+self, nil, nil).json(t, &inv)
	if inv.MaxUses != 1 || inv.MaxAge != 3600 || inv.Guild.ID != own.ID || inv.Channel.ID != general.ID || inv.Lobby == nil || inv.Lobby.ID != lobby.ID {
		t.Fatalf("invite %+v", inv)
	}
	if r := do(t, http.MethodPost, api+"/invites/"+self, nil, bearer(f.bob)); r.Status != 200 {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	expectAPIError(t, "second use (LOB-5 single use)", do(t, http.MethodPost, api+"/invites/"+self, nil, bearer(f.carol)), 404, wire.CodeUnknownInvite)
	expectAPIError(t, "used invite", do(t, http.MethodGet, api+"/invites/"+self, nil, nil), 404, wire.CodeUnknownInvite)
	forBob := invite("/members/"+f.e.User("bob").ID.String()+"/invites", bot(f.e.App.BotToken))
	expectAPIError(t, "bot invite for a non-member", sendJSON(t, http.MethodPost, lobbyURL+"/members/"+f.e.User("carol").ID.String()+"/invites", nil,
		bot(f.e.App.BotToken)), 404, wire.CodeUnknownMember)
	expectAPIError(t, "bot route with a bearer token", sendJSON(t, http.MethodPost, lobbyURL+"/members/"+f.e.User("bob").ID.String()+"/invites", nil,
		bearer(f.bob)), 401, 0)
	expectAPIError(t, "self invite by a non-member", sendJSON(t, http.MethodPost, lobbyURL+"/members/@me/invites", nil, bearer(f.carol)), 403, wire.CodeMissingAccess)
	expectAPIError(t, "bad user id", sendJSON(t, http.MethodPost, lobbyURL+"/members/zz/invites", nil, bot(f.e.App.BotToken)), 400, wire.CodeInvalidFormBody)
	expectAPIError(t, "unknown invite", do(t, http.MethodGet, api+"/invites/nope", nil, nil), 404, wire.CodeUnknownInvite)

	// Unlink (channel_id null): the lobby loses linked_channel and the channel becomes free.
	r = link(f.alice, map[string]any{"channel_id": nil})
	var unlinked wire.Lobby
	if r.json(t, &unlinked); r.Status != 200 || unlinked.LinkedChannel != nil {
		t.Fatalf("unlink: %d %s", r.Status, r.Body)
	}
	if ll := channelNamed(t, f.channels(t, f.alice, own.ID), "general").LinkedLobby; ll != nil {
		t.Errorf("unlinked channel still shows %+v", ll)
	}

	// Rule LOB-5: valid one hour, by the service's clock.
	f.e.Clock.Advance(time.Hour - time.Second)
	if r := do(t, http.MethodGet, api+"/invites/"+forBob, nil, nil); r.Status != 200 {
		t.Errorf("invite before its hour: %d %s", r.Status, r.Body)
	}
	f.e.Clock.Advance(2 * time.Second)
	expectAPIError(t, "invite after its hour", do(t, http.MethodGet, api+"/invites/"+forBob, nil, nil), 404, wire.CodeUnknownInvite)
	expectAPIError(t, "accept after its hour", do(t, http.MethodPost, api+"/invites/"+forBob, nil, bearer(f.bob)), 404, wire.CodeUnknownInvite)
}

// Rate limits on the live service: the platform's headers on every answer, 429 with its body and
// headers past the limit, and a new window by the service's clock.
func TestRateLimitHeadersAnd429(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) {
			c.RateLimits = ratelimit.Config{Routes: map[string]ratelimit.Rule{"GET /users/@me": {Limit: 2, Window: 5 * time.Second}}}
		}))
	tok := linkedTokens(t, e, "alice", "openid sdk.social_layer").AccessToken
	for i, want := range []string{"1", "0"} {
		r := do(t, http.MethodGet, e.APIURL+"/users/@me", nil, bearer(tok))
		if r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != want || r.Header.Get("X-RateLimit-Limit") != "2" ||
			r.Header.Get("X-RateLimit-Reset-After") != "5.000" || r.Header.Get("X-RateLimit-Bucket") == "" || r.Header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("request %d: %d %v", i, r.Status, r.Header)
		}
	}
	e.Clock.Advance(time.Second)
	r := do(t, http.MethodGet, e.APIURL+"/users/@me", nil, bearer(tok))
	var body ratelimit.Body
	if r.json(t, &body); r.Status != http.StatusTooManyRequests || body.RetryAfter != 4 || body.Global || body.Message == "" ||
		r.Header.Get("Retry-After") != "4" || r.Header.Get("X-RateLimit-Global") != "false" || r.Header.Get("X-RateLimit-Scope") != "user" {
		t.Fatalf("429: %d %v %s", r.Status, r.Header, r.Body)
	}
	e.Clock.Advance(4 * time.Second)
	if r := do(t, http.MethodGet, e.APIURL+"/users/@me", nil, bearer(tok)); r.Status != 200 {
		t.Fatalf("after the window: %d", r.Status)
	}
}
