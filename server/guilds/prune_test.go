package guilds_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

const day = 24 * time.Hour

// pruneCount asks Get Guild Prune Count with query q as the bot, expecting 200.
func pruneCount(t *testing.T, f *guildtest.Bots, g wire.DevGuild, q string) int {
	t.Helper()
	var out wire.PruneCount
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/prune"+q), nil, f.BotHeader()), &out)
	require.NotNil(t, out.Pruned)
	return *out.Pruned
}

// GLD-2: prune counts and removes the members not seen for days days (their last message in
// the guild, their gateway sessions, their join as the floor) who have no role but those of
// include_roles; never the owner or a bot. Begin Guild Prune sends GUILD_MEMBER_REMOVE as
// leaving does, and answers pruned null when compute_prune_count is false.
func TestGuildPrune(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	f := guildtest.NewBots(t, servertest.WithFrozenClock(t0))
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Prune", OwnerID: f.E.User("alice").ID,
		Roles: []wire.RoleSpec{{Name: "pruner", Permissions: wire.Permissions(wire.PermKickMembers | wire.PermManageGuild)},
			{Name: "r"}},
		Members: []wire.GuildMemberSpec{{ID: f.BotID, Roles: []int{0}}, {ID: f.E.User("bob").ID}, {ID: f.E.User("carol").ID, Roles: []int{1}}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
	require.NoError(t, err)
	var roles []wire.Role
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/roles"), nil, f.BotHeader()), &roles)
	r := roles[len(roles)-1]
	require.Equal(t, "r", r.Name)

	f.E.Clock.Advance(2 * day)
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+g.Channels[0].ID.String()+"/messages"), map[string]any{"content": "hi"}, guildtest.Bearer(f.Bob)), nil)
	f.E.Clock.Advance(6 * day) // bob was seen 6 days ago, the others joined 8 days ago

	assert.Equal(t, 0, pruneCount(t, f, g, "?days=7"), "bob was seen, carol has a role, the owner and the bot never go")
	assert.Equal(t, 1, pruneCount(t, f, g, "?days=7&include_roles="+r.ID.String()), "carol's role is included")
	assert.Equal(t, 1, pruneCount(t, f, g, "?days=5"), "bob was not seen for 5 days")
	assert.Equal(t, 2, pruneCount(t, f, g, "?days=5&include_roles="+r.ID.String()))
	assert.Equal(t, 0, pruneCount(t, f, g, ""), "days defaults to 7")

	// carol's gateway session counts as activity (with a new token: the first has expired).
	c := guildtest.Dial(t, f.E, "")
	c.Identify(f.E.Token(t, "carol", "openid sdk.social_layer").AccessToken, 0)
	c.Send(gwire.OpHeartbeat, nil)
	for c.Next().Op != gwire.OpHeartbeatACK { // past the session's own dispatches: Identify was handled
	}
	// The session's start is recorded on a goroutine of its connection's (gateway's goOnline), so
	// that a store slow to answer holds no dispatch back: it is seen a moment after Identify.
	require.Eventually(t, func() bool {
		var n wire.PruneCount
		r := guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/prune?days=5&include_roles="+r.ID.String()), nil, f.BotHeader())
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &n) == nil && n.Pruned != nil && *n.Pruned == 1
	}, 10*time.Second, 5*time.Millisecond, "carol was seen just now")

	for _, q := range []string{"?days=0", "?days=31", "?days=x", "?include_roles=x", "?include_roles=1,,2"} {
		res := guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/prune"+q), nil, f.BotHeader())
		assert.Equal(t, http.StatusBadRequest, res.Status, "%s: %s", q, res.Body)
	}
	for _, body := range []map[string]any{{"days": 0}, {"days": 31}, {"days": "x"}, {"compute_prune_count": "x"}, {"include_roles": "x"}} {
		res := guildtest.SendJSON(t, http.MethodPost, f.API("/guilds/"+g.ID.String()+"/prune"), body, f.BotHeader())
		assert.Equal(t, http.StatusBadRequest, res.Status, "%v: %s", body, res.Body)
	}

	gw := guildtest.Dial(t, f.E, "")
	gw.Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	gw.Sync()
	var out wire.PruneCount
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/guilds/"+g.ID.String()+"/prune"), map[string]any{"days": 5}, f.BotHeader()), &out)
	require.NotNil(t, out.Pruned)
	assert.Equal(t, 1, *out.Pruned, "GLD-2: bob is pruned")
	var rm wire.MemberRemove
	gw.Expect(gwire.OpDispatch, gwire.EventGuildMemberRemove, &rm)
	assert.Equal(t, f.E.User("bob").ID, rm.User.ID)
	assert.Equal(t, g.ID, rm.GuildID)
	guildtest.ExpectAPIError(t, "bob is gone", guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/members/"+f.E.User("bob").ID.String()), nil, f.BotHeader()),
		404, wire.CodeUnknownMember)

	// The end of carol's session counts too: moving the clock times it out, and carol is seen then.
	f.E.Clock.Advance(6 * day)
	require.Eventually(t, func() bool {
		var n wire.PruneCount
		r := guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/prune?days=1&include_roles="+r.ID.String()), nil, f.BotHeader())
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &n) == nil && n.Pruned != nil && *n.Pruned == 0
	}, 10*time.Second, 5*time.Millisecond, "carol's session ended just now")
	f.E.Clock.Advance(6 * day)
	gw = guildtest.Dial(t, f.E, "") // the first session timed out as the clock moved
	gw.Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	gw.Sync()
	res := guildtest.SendJSON(t, http.MethodPost, f.API("/guilds/"+g.ID.String()+"/prune"),
		map[string]any{"days": 5, "compute_prune_count": false, "include_roles": []string{r.ID.String()}}, f.BotHeader())
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	assert.JSONEq(t, `{"pruned": null}`, string(res.Body))
	gw.Expect(gwire.OpDispatch, gwire.EventGuildMemberRemove, &rm)
	assert.Equal(t, f.E.User("carol").ID, rm.User.ID, "carol is pruned")
	var members []wire.Member
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/members?limit=10"), nil, f.BotHeader()), &members)
	assert.Len(t, members, 2, "the owner and the bot stay")
}

// GLD-2: prune needs MANAGE_GUILD and KICK_MEMBERS (403 50013 without either), and ADMINISTRATOR
// as well when the guild has the PRUNE_REQUIRES_ADMIN feature.
func TestGuildPrunePermissions(t *testing.T) {
	f := guildtest.NewBots(t)
	both := wire.PermKickMembers | wire.PermManageGuild
	for _, tc := range []struct {
		name     string
		perms    uint64
		features []string
		want     int
	}{
		{"MANAGE_GUILD and KICK_MEMBERS", both, nil, http.StatusOK},
		{"KICK_MEMBERS only", wire.PermKickMembers, nil, http.StatusForbidden},
		{"MANAGE_GUILD only", wire.PermManageGuild, nil, http.StatusForbidden},
		{"both, PRUNE_REQUIRES_ADMIN", both, []string{wire.FeaturePruneRequiresAdmin}, http.StatusForbidden},
		{"ADMINISTRATOR, PRUNE_REQUIRES_ADMIN", guildaccess.PermAdministrator, []string{wire.FeaturePruneRequiresAdmin}, http.StatusOK},
	} {
		g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "P", OwnerID: f.E.User("alice").ID,
			Roles:   []wire.RoleSpec{{Name: "r", Permissions: wire.Permissions(tc.perms)}},
			Members: []wire.GuildMemberSpec{{ID: f.BotID, Roles: []int{0}}}})
		require.NoError(t, err)
		// The owner turns the feature on (no route of this service does).
		require.NoError(t, f.E.Server.Store().SetGuildFeatures(context.Background(), uint64(g.ID), tc.features))
		for _, res := range []guildtest.Resp{
			guildtest.Do(t, http.MethodGet, f.API("/guilds/"+g.ID.String()+"/prune"), nil, f.BotHeader()),
			guildtest.SendJSON(t, http.MethodPost, f.API("/guilds/"+g.ID.String()+"/prune"), map[string]any{}, f.BotHeader()),
		} {
			require.Equal(t, tc.want, res.Status, "GLD-2: %s: %s", tc.name, res.Body)
			if tc.want == http.StatusForbidden {
				assert.Equal(t, 50013, res.APIError(t).Code)
			}
		}
	}
}
