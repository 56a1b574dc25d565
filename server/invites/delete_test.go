package invites_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// createInvite creates an invite of the channel with the body, as the caller of h.
func createInvite(t *testing.T, f *guildtest.Bots, ch wire.Snowflake, body map[string]any, h http.Header) wire.Invite {
	t.Helper()
	var inv wire.Invite
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+ch.String()+"/invites"), body, h), &inv)
	return inv
}

// DELETE /invites/{code}: a member with MANAGE_CHANNELS in the invite's channel, or
// MANAGE_GUILD (the owner), deletes it and gets the invite object; others get 403 50013, an
// unknown or deleted code 404 10006.
func TestDeleteInvite(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	del := func(code string, h http.Header) guildtest.Resp {
		t.Helper()
		return guildtest.Do(t, http.MethodDelete, f.API("/invites/"+code), nil, h)
	}
	inv := createInvite(t, f, general, map[string]any{"max_age": 0, "unique": true}, guildtest.Bearer(f.Alice))
	guildtest.ExpectAPIError(t, "bob, without permissions", del(inv.Code, guildtest.Bearer(f.Bob)), http.StatusForbidden, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "the bot, with MANAGE_MESSAGES only", del(inv.Code, f.BotHeader()), http.StatusForbidden, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "no credential", del(inv.Code, nil), http.StatusUnauthorized, 0)
	var gone wire.Invite
	guildtest.OK(t, del(inv.Code, guildtest.Bearer(f.Alice)), &gone)
	assert.Equal(t, inv.Code, gone.Code)
	assert.Equal(t, f.Guild.ID, gone.Guild.ID)
	assert.Equal(t, general, gone.Channel.ID)
	guildtest.ExpectAPIError(t, "read after", guildtest.Do(t, http.MethodGet, f.API("/invites/"+inv.Code), nil, nil), http.StatusNotFound, wire.CodeUnknownInvite)
	guildtest.ExpectAPIError(t, "deleted twice", del(inv.Code, guildtest.Bearer(f.Alice)), http.StatusNotFound, wire.CodeUnknownInvite)
	guildtest.ExpectAPIError(t, "an unknown code", del("nope", guildtest.Bearer(f.Alice)), http.StatusNotFound, wire.CodeUnknownInvite)

	// MANAGE_CHANNELS in the channel is enough.
	g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Chan", OwnerID: f.E.User("alice").ID,
		Roles:   []wire.RoleSpec{{Name: "chan", Permissions: wire.Permissions(guildaccess.PermManageChannels)}},
		Members: []wire.GuildMemberSpec{{ID: f.BotID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
	require.NoError(t, err)
	inv = createInvite(t, f, g.Channels[0].ID, map[string]any{"max_age": 0}, guildtest.Bearer(f.Alice))
	guildtest.ExpectAPIError(t, "not in the guild", del(inv.Code, guildtest.Bearer(f.Bob)), http.StatusForbidden, wire.CodeMissingAccess)
	guildtest.OK(t, del(inv.Code, f.BotHeader()), &gone)
	assert.Equal(t, inv.Code, gone.Code)
}

// A member who joined through a temporary invite is removed from the guild when they disconnect
// (their last gateway session ends), unless they have a role by then; the guild's bots get
// GUILD_MEMBER_REMOVE.
func TestTemporaryMembersLeaveOnDisconnect(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, guildtest.BotIntents)
	bob := f.E.User("bob").ID
	// Temp comes after Bots (a higher id): bob's memberships are ended in that order.
	temp, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Temp", OwnerID: f.E.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: f.BotID}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
	require.NoError(t, err)
	bot := guildtest.Dial(t, f.E, "")
	bot.Identify(f.E.App.BotToken, gwire.IntentGuilds|gwire.IntentGuildMembers)

	// bob leaves Bots, and comes back through a temporary invite that gives him a role; he joins
	// Temp through a temporary invite without one.
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete, f.API("/users/@me/guilds/"+f.Guild.ID.String()), nil,
		guildtest.Bearer(f.Bob)).Status)
	withRole := createInvite(t, f, f.Channel("general").ID, map[string]any{"temporary": true, "role_ids": []string{f.Quiet.ID.String()}},
		guildtest.Bearer(f.Alice))
	bare := createInvite(t, f, temp.Channels[0].ID, map[string]any{"temporary": true}, guildtest.Bearer(f.Alice))
	assert.True(t, bare.Temporary)
	for _, code := range []string{withRole.Code, bare.Code} {
		guildtest.OK(t, guildtest.Do(t, http.MethodPost, f.API("/invites/"+code), nil, guildtest.Bearer(f.Bob)), nil)
	}
	member := func(g wire.Snowflake) int {
		return guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.String()+"/members/"+bob.String()), nil, f.BotHeader()).Status
	}
	require.Equal(t, http.StatusOK, member(temp.ID))

	// bob connects, then disconnects.
	gw := guildtest.Dial(t, f.E, "")
	gw.Identify(f.Bob, 0)
	require.Equal(t, http.StatusOK, member(temp.ID), "connected, bob stays")
	require.NoError(t, gw.WS.CloseNow())
	var removed wire.MemberRemove
	for removed.GuildID != temp.ID {
		bot.Until(gwire.EventGuildMemberRemove, &removed)
	}
	assert.Equal(t, bob, removed.User.ID)
	guildtest.ExpectAPIError(t, "bob left Temp", guildtest.Do(t, http.MethodGet, f.API("/guilds/"+temp.ID.String()+"/members/"+bob.String()), nil,
		f.BotHeader()), http.StatusNotFound, wire.CodeUnknownMember)
	assert.Equal(t, http.StatusOK, member(f.Guild.ID), "with a role, bob stays in Bots")
}
