package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/apps"
	"sdkpp/server/servertest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// enableIntents turns on limited privileged intent flags of the application, as its owner does in
// the application's settings: PATCH /applications/@me with the bot token, keeping the other
// flags (rule LIM-4: the test fixtures' bots reach far fewer than 10,000 users).
func enableIntents(t testing.TB, e *servertest.Env, limited uint64) {
	t.Helper()
	app, err := e.Server.Store().GetApplication(context.Background(), uint64(e.App.ID))
	require.NoError(t, err)
	body, err := json.Marshal(map[string]uint64{"flags": (app.Flags | limited) & wire.AppFlagsLegacyMask})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPatch, e.APIURL+"/applications/@me", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+e.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "PATCH /applications/@me flags")
}

// botIntents are the limited flags of the privileged intents the bot fixtures identify with.
const botIntents = wire.AppFlagGatewayGuildMembersLimited | wire.AppFlagGatewayMessageContentLimited

// expectClosed reads until the connection closes and checks its close code.
func (g *botGW) expectClosed(code int) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, raw, err := g.ws.Read(ctx)
		if err != nil {
			assert.Equal(g.t, websocket.StatusCode(code), websocket.CloseStatus(err), "close: %v", err)
			return
		}
		g.t.Logf("before the close: %s", raw)
	}
}

// identifyOnly sends Identify with the token and intents, without reading READY.
func (g *botGW) identifyOnly(token string, intents uint64) {
	g.t.Helper()
	g.send(gwire.OpIdentify, map[string]any{"token": token, "intents": intents,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}})
}

// LIM-4: a bot identifying with a privileged intent needs its application's approved or limited
// flag for that intent, or it is closed with 4014 (final); non-privileged intents need no flag;
// a flag for another privileged intent does not do.
func TestPrivilegedIntentsNeedFlags(t *testing.T) {
	f := newBotFixture(t)
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
			setAppFlags(t, f, tc.flags)
			g := dialBot(t, f.e, "")
			g.t = t
			if tc.allowed {
				ready := g.identify("Bot "+f.e.App.BotToken, tc.intents)
				assert.Contains(t, ready, "session_id")
				return
			}
			g.identifyOnly("Bot "+f.e.App.BotToken, tc.intents)
			g.expectClosed(gwire.CloseDisallowedIntents)
		})
	}
	assert.True(t, gwire.IsFinal(gwire.CloseDisallowedIntents), "4014 is final")
}

// LIM-4: a resumed bot session is checked again: once its application lost the flag of one of
// its privileged intents, Resume is closed with 4014.
func TestResumeLosesPrivilegedIntent(t *testing.T) {
	f := newBotFixture(t)
	setAppFlags(t, f, wire.AppFlagGatewayGuildMembersLimited)
	g := dialBot(t, f.e, "")
	ready := g.identify("Bot "+f.e.App.BotToken, gwire.IntentGuilds|gwire.IntentGuildMembers)
	var sid string
	require.NoError(t, json.Unmarshal(ready["session_id"], &sid))
	_ = g.ws.CloseNow()

	setAppFlags(t, f, 0)
	r := dialBot(t, f.e, "")
	r.send(gwire.OpResume, map[string]any{"token": "Bot " + f.e.App.BotToken, "session_id": sid, "seq": 1})
	r.expectClosed(gwire.CloseDisallowedIntents)
}

// User (OAuth) gateway sessions of the SDK are not bots: their intents need no application flag.
func TestUserSessionsNeedNoIntentFlags(t *testing.T) {
	f := newBotFixture(t)
	setAppFlags(t, f, 0)
	g := dialBot(t, f.e, "")
	ready := g.identify(f.alice, gwire.IntentGuildMembers|gwire.IntentGuildPresences|gwire.IntentMessageContent)
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

	patch := func(flags uint64) resp {
		return sendJSON(t, http.MethodPatch, e.APIURL+"/applications/@me", map[string]uint64{"flags": flags}, bot(e.App.BotToken))
	}
	reviewRefused := func(r resp) {
		t.Helper()
		require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		apiErr := r.apiError(t)
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
	setFlags := sendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(wire.AppFlagGatewayGuildMembers, 10)}, admin(e))
	require.Equal(t, http.StatusOK, setFlags.Status, "%s", setFlags.Body)
	g := dialBot(t, e, "")
	assert.Contains(t, g.identify("Bot "+e.App.BotToken, gwire.IntentGuildMembers), "session_id")
}
