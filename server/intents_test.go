package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/apps"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// LIM-4: a bot identifying with a privileged intent needs its application's approved or limited
// flag for that intent, or it is closed with 4014 (final); non-privileged intents need no flag;
// a flag for another privileged intent does not do.
func TestPrivilegedIntentsNeedFlags(t *testing.T) {
	f := guildtest.NewBots(t)
	nonPrivileged := gwire.KnownIntents &^ (gwire.IntentGuildMembers | gwire.IntentGuildPresences | gwire.IntentMessageContent)
	cases := []struct {
		name    string
		flags   uint64
		intents uint64
		allowed bool
	}{
		{"every non-privileged intent, no flags", 0, nonPrivileged, true},
		{"no intents, no flags", 0, 0, true},
		{"GUILD_MEMBERS without a flag", 0, gwire.IntentGuildMembers, false},
		{"GUILD_PRESENCES without a flag", 0, gwire.IntentGuildPresences, false},
		{"MESSAGE_CONTENT without a flag", 0, gwire.IntentMessageContent, false},
		{"GUILD_MEMBERS with another intent's flags", wire.AppFlagGatewayPresence | wire.AppFlagGatewayMessageContentLimited,
			gwire.IntentGuildMembers, false},
		{"GUILD_PRESENCES with another intent's flags", wire.AppFlagGatewayGuildMembers | wire.AppFlagGatewayMessageContentLimited,
			gwire.IntentGuildPresences, false},
		{"MESSAGE_CONTENT with another intent's flags", wire.AppFlagGatewayGuildMembers | wire.AppFlagGatewayPresenceLimited,
			gwire.IntentMessageContent, false},
		{"GUILD_MEMBERS approved", wire.AppFlagGatewayGuildMembers, gwire.IntentGuildMembers, true},
		{"GUILD_MEMBERS limited", wire.AppFlagGatewayGuildMembersLimited, gwire.IntentGuildMembers, true},
		{"GUILD_PRESENCES approved", wire.AppFlagGatewayPresence, gwire.IntentGuildPresences, true},
		{"GUILD_PRESENCES limited", wire.AppFlagGatewayPresenceLimited, gwire.IntentGuildPresences, true},
		{"MESSAGE_CONTENT approved", wire.AppFlagGatewayMessageContent, gwire.IntentMessageContent, true},
		{"MESSAGE_CONTENT limited", wire.AppFlagGatewayMessageContentLimited, gwire.IntentMessageContent, true},
		{"all three, one missing", wire.AppFlagGatewayGuildMembers | wire.AppFlagGatewayPresenceLimited,
			gwire.IntentGuildMembers | gwire.IntentGuildPresences | gwire.IntentMessageContent, false},
		{"all three with mixed flags", wire.AppFlagGatewayGuildMembers | wire.AppFlagGatewayPresenceLimited | wire.AppFlagGatewayMessageContent,
			gwire.KnownIntents, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			guildtest.SetAppFlags(t, f.E, tc.flags)
			g := guildtest.Dial(t, f.E, "")
			g.T = t
			if tc.allowed {
				ready := g.Identify("Bot "+f.E.App.BotToken, tc.intents)
				assert.Contains(t, ready, "session_id")
				return
			}
			g.IdentifyOnly("Bot "+f.E.App.BotToken, tc.intents)
			g.ExpectClosed(gwire.CloseDisallowedIntents)
		})
	}
	assert.True(t, gwire.IsFinal(gwire.CloseDisallowedIntents), "4014 is final")
}

// LIM-4: a resumed bot session is checked again: once its application lost the flag of one of
// its privileged intents, Resume is closed with 4014.
func TestResumeLosesPrivilegedIntent(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.SetAppFlags(t, f.E, wire.AppFlagGatewayGuildMembersLimited)
	g := guildtest.Dial(t, f.E, "")
	ready := g.Identify("Bot "+f.E.App.BotToken, gwire.IntentGuilds|gwire.IntentGuildMembers)
	var sid string
	require.NoError(t, json.Unmarshal(ready["session_id"], &sid))
	_ = g.WS.CloseNow()
	// Once the service has seen the connection go, the session waits to be resumed (a live one
	// would be ended by the flag's change, TestPrivilegedIntentOffEndsSessions).
	require.Eventually(t, func() bool {
		s := f.E.Server.Hub().UserSessions(uint64(f.BotID))
		return len(s) == 1 && !s[0].Connected
	}, 10*time.Second, time.Millisecond)

	guildtest.SetAppFlags(t, f.E, 0)
	r := guildtest.Dial(t, f.E, "")
	r.Send(gwire.OpResume, map[string]any{"token": "Bot " + f.E.App.BotToken, "session_id": sid, "seq": 1})
	r.ExpectClosed(gwire.CloseDisallowedIntents)
}

// User (OAuth) gateway sessions of the SDK are not bots: their intents need no application flag.
func TestUserSessionsNeedNoIntentFlags(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.SetAppFlags(t, f.E, 0)
	g := guildtest.Dial(t, f.E, "")
	ready := g.Identify(f.Alice, gwire.IntentGuildMembers|gwire.IntentGuildPresences|gwire.IntentMessageContent)
	assert.Contains(t, ready, "session_id")
}

// LIM-4: below 10,000 reachable users (the distinct members of the guilds the bot is in, the
// bot excepted), PATCH /applications/@me turns the limited intent flags on; at 10,000 it is
// refused with 400 50035 on flags, while flags already on stay on and may be turned off. The
// approved flags are never PATCH's to set: only the dev route (the platform's review) sets them.
func TestIntentsReviewThreshold(t *testing.T) {
	e := servertest.Start(t)
	ctx := context.Background()
	st := e.Server.Store()
	botID := uint64(e.App.BotUserID)
	// One guild with the bot and its members, inserted through the store to stay fast.
	guild, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Crowd", OwnerID: e.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID}}})
	require.NoError(t, err)
	gid := uint64(guild.ID)
	count := func() int {
		n, err := apps.ReachableUsers(ctx, st, &store.Application{BotUserID: botID})
		require.NoError(t, err)
		return n
	}
	joined := e.Server.Clock().Now()
	base := count() // the guild's owner, and members of the seeded guilds the bot may be in
	require.NoError(t, st.WithTx(ctx, func(tx store.Store) error {
		for u := base; u < apps.ReviewThresholdUsers-1; u++ {
			if err := tx.PutGuildMember(ctx, &store.GuildMember{GuildID: gid, UserID: uint64(1_000_000 + u), JoinedAt: joined}); err != nil {
				return err
			}
		}
		return nil
	}))
	require.Equal(t, apps.ReviewThresholdUsers-1, count(), "9,999 users reachable")

	patch := func(flags uint64) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPatch, e.APIURL+"/applications/@me", map[string]uint64{"flags": flags}, guildtest.Bot(e.App.BotToken))
	}
	reviewRefused := func(r guildtest.Resp) {
		t.Helper()
		require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		apiErr := r.APIError(t)
		assert.Equal(t, wire.CodeInvalidFormBody, apiErr.Code)
		assert.Contains(t, string(r.Body), `"flags"`, "the error names flags")
	}
	// Below the threshold: the owner turns a limited flag on.
	r := patch(wire.AppFlagGatewayMessageContentLimited)
	require.Equal(t, http.StatusOK, r.Status, "9,999 users: no review: %s", r.Body)
	// The approved flags are not PATCH's, below the threshold either.
	for _, approved := range []uint64{wire.AppFlagGatewayGuildMembers, wire.AppFlagGatewayPresence, wire.AppFlagGatewayMessageContent} {
		r := patch(wire.AppFlagGatewayMessageContentLimited | approved)
		require.Equal(t, http.StatusBadRequest, r.Status, "approved flag %d: %s", approved, r.Body)
		assert.Contains(t, string(r.Body), "APPLICATION_FLAGS_INVALID")
	}

	// One more member: 10,000 users reachable.
	require.NoError(t, st.PutGuildMember(ctx, &store.GuildMember{GuildID: gid, UserID: 2_000_000, JoinedAt: joined}))
	require.Equal(t, apps.ReviewThresholdUsers, count())
	for _, limited := range []uint64{wire.AppFlagGatewayGuildMembersLimited, wire.AppFlagGatewayPresenceLimited} {
		r := patch(wire.AppFlagGatewayMessageContentLimited | limited)
		reviewRefused(r)
		assert.Contains(t, string(r.Body), "APPLICATION_INTENTS_REVIEW_REQUIRED")
		assert.Contains(t, string(r.Body), "review")
	}
	// The flag already on stays on: PATCHing it again is fine, and so is turning it off.
	r = patch(wire.AppFlagGatewayMessageContentLimited)
	require.Equal(t, http.StatusOK, r.Status, "a flag already on stays on: %s", r.Body)
	app, err := st.GetApplication(ctx, uint64(e.App.ID))
	require.NoError(t, err)
	assert.Equal(t, wire.AppFlagGatewayMessageContentLimited, app.Flags)
	r = patch(0)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	reviewRefused(patch(wire.AppFlagGatewayMessageContentLimited)) // and once off, it needs review
	// The review (the dev route) sets the approved flags, and the bot identifies with them.
	setFlags := guildtest.SendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(wire.AppFlagGatewayGuildMembers, 10)}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, setFlags.Status, "%s", setFlags.Body)
	g := guildtest.Dial(t, e, "")
	assert.Contains(t, g.Identify("Bot "+e.App.BotToken, gwire.IntentGuildMembers), "session_id")
}

// LIM-4: turning a privileged intent's flag off (PATCH /applications/@me, or the dev route) ends
// the bot's live sessions that identified with that intent, with 4014, and they cannot be
// resumed; its other sessions go on.
func TestPrivilegedIntentOffEndsSessions(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, guildtest.BotIntents)
	dial := func(intents uint64) (*guildtest.Gateway, string) {
		g := guildtest.Dial(t, f.E, "")
		ready := g.Identify(f.E.App.BotToken, intents)
		var id string
		require.NoError(t, json.Unmarshal(ready["session_id"], &id))
		return g, id
	}
	members, membersID := dial(gwire.IntentGuilds | gwire.IntentGuildMembers)
	content, _ := dial(gwire.IntentGuildMessages | gwire.IntentMessageContent)
	plain, _ := dial(gwire.IntentGuilds)
	var created map[string]json.RawMessage
	plain.Until(gwire.EventGuildCreate, &created)

	r := guildtest.SendJSON(t, http.MethodPatch, f.E.APIURL+"/applications/@me",
		map[string]uint64{"flags": wire.AppFlagGatewayMessageContentLimited}, f.BotHeader())
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	members.ExpectClosed(gwire.CloseDisallowedIntents)
	content.Sync()
	plain.Sync()
	// The ended session is gone: a resume is refused (op 9).
	again := guildtest.Dial(t, f.E, "")
	again.Send(gwire.OpResume, map[string]any{"token": f.E.App.BotToken, "session_id": membersID, "seq": 1})
	again.Expect(gwire.OpInvalidSession, "")

	// The dev route turning MESSAGE_CONTENT off ends the session that uses it.
	guildtest.SetAppFlags(t, f.E, 0)
	content.ExpectClosed(gwire.CloseDisallowedIntents)
	plain.Sync()
}
