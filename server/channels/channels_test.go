package channels_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// Rule GCH-1: a user's guilds, and each guild's channels with type, position and parent category
// id, sorted by position; bad input on both routes.
func TestGuildsAndChannels(t *testing.T) {
	f := guildtest.NewSeeded(t)
	list := f.Guilds(t, f.Alice)
	require.Len(t, list, 3, "alice's guilds: %+v", list)
	own := f.OwnGuild(t, f.Alice)
	require.Equal(t, "Alice's Guild", own.Name, "own guild %+v", own)
	require.NotEmpty(t, own.Permissions, "own guild %+v", own)
	require.NotNil(t, own.Features, "own guild %+v", own)
	chans := f.Channels(t, f.Alice, own.ID)
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
	assert.True(t, guildtest.ChannelNamed(t, f.Channels(t, f.Bob, own.ID), "general").IsLinkable, "is_linkable does not follow the manage-channels permission")
	assert.False(t, guildtest.ChannelNamed(t, f.Channels(t, f.Carol, own.ID), "general").IsLinkable, "is_linkable does not follow the manage-channels permission")

	// Bad input.
	api := f.E.APIURL
	lonely, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Alone", OwnerID: f.E.User("alice").ID})
	require.NoError(t, err)
	guildtest.ExpectAPIError(t, "non-member", guildtest.Do(t, http.MethodGet, api+"/guilds/"+lonely.ID.String()+"/channels", nil, guildtest.Bearer(f.Bob)), 403, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "unknown guild", guildtest.Do(t, http.MethodGet, api+"/guilds/42/channels", nil, guildtest.Bearer(f.Bob)), 404, wire.CodeUnknownGuild)
	guildtest.ExpectAPIError(t, "bad id", guildtest.Do(t, http.MethodGet, api+"/guilds/x1/channels", nil, guildtest.Bearer(f.Bob)), 400, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "no token", guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, nil), 401, 0)
	botGuilds := guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, guildtest.Bot(f.E.App.BotToken)) // a bot in no guild
	assert.Equal(t, http.StatusOK, botGuilds.Status, "bot token: %s", botGuilds.Body)
	assert.JSONEq(t, "[]", string(botGuilds.Body), "bot token")
	guildtest.ExpectAPIError(t, "wrong bot token", guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, guildtest.Bot("nope")), 401, 0)
	narrow := f.E.Token(t, "bob", "openid identify").AccessToken
	guildtest.ExpectAPIError(t, "without the guilds scope", guildtest.Do(t, http.MethodGet, api+"/users/@me/guilds", nil, guildtest.Bearer(narrow)), 403, wire.CodeMissingAccess)

	// The dev route refuses bad specs and stores nothing.
	admin := http.Header{"Authorization": {"Admin " + f.E.Creds.AdminToken}}
	one := 0
	for _, bad := range []struct {
		spec  wire.GuildSpec
		field string
	}{
		{wire.GuildSpec{Name: "", OwnerID: f.E.User("bob").ID}, "name"},
		{wire.GuildSpec{Name: strings.Repeat("n", 101), OwnerID: f.E.User("bob").ID}, "name"},
		{wire.GuildSpec{Name: "g", OwnerID: 12345}, "owner_id"},
		{wire.GuildSpec{Name: "g", OwnerID: f.E.User("bob").ID, Channel: []wire.GuildChannelSpec{{Name: "c", Type: 99}}}, "channels"},
		{wire.GuildSpec{Name: "g", OwnerID: f.E.User("bob").ID, Channel: []wire.GuildChannelSpec{{Name: "t", Type: 0}, {Name: "c", Type: 0, Parent: &one}}}, "channels"},
	} {
		r := guildtest.SendJSON(t, http.MethodPost, api+"/dev/guilds", bad.spec, admin)
		e := r.APIError(t)
		assert.Equal(t, 400, r.Status, "bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
		assert.Equal(t, wire.CodeInvalidFormBody, e.Code, "bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
		assert.False(t, e.Errors[bad.field] == nil, "bad spec %+v: %d %s", bad.spec, r.Status, r.Body)
	}
	n := len(f.Guilds(t, f.Bob))
	assert.Equal(t, 3, n, "a refused spec stored a guild: bob is in %d guilds", n)
	r := guildtest.SendJSON(t, http.MethodPost, api+"/dev/guilds", wire.GuildSpec{Name: "Made", OwnerID: f.E.User("bob").ID,
		Channel: []wire.GuildChannelSpec{{Name: "cat", Type: 4, Position: 1}, {Name: "t", Type: 0, Position: 0, Parent: &one}}}, admin)
	var made wire.DevGuild
	r.JSON(t, &made)
	require.Equal(t, 200, r.Status, "dev guild: %d %s", r.Status, r.Body)
	require.Len(t, made.Channels, 2, "dev guild: %d %s", r.Status, r.Body)
	// sorted by position
	got := f.Channels(t, f.Bob, made.ID)
	if assert.Len(t, got, 2, "dev guild channels %+v", got) {
		assert.Equal(t, "t", got[0].Name, "dev guild channels %+v", got)
		assert.Equal(t, "cat", got[1].Name, "dev guild channels %+v", got)
	}
	r = guildtest.SendJSON(t, http.MethodPost, api+"/dev/guilds", wire.GuildSpec{Name: "x"}, nil)
	assert.Equal(t, 401, r.Status, "dev route without the admin token: %d", r.Status)
}
