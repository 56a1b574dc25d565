package guildvoice_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	vwire "sdkpp/wire/voice"
)

// voiceLab is a guild owned by alice with bob and the application's bot: voice channels
// "lounge" and "den", "locked" (@everyone denied CONNECT) and "hidden" (denied VIEW_CHANNEL),
// a text channel "general"; and another guild with a voice channel of its own.
type voiceLab struct {
	e                                             *servertest.Env
	guild                                         wire.DevGuild
	lounge, den, locked, hidden, general, faraway wire.Snowflake
}

func newVoiceLab(t *testing.T) *voiceLab {
	t.Helper()
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)))
	alice, bob := e.User("alice"), e.User("bob")
	voice := func(name string, pos int, deny uint64) wire.GuildChannelSpec {
		c := wire.GuildChannelSpec{Name: name, Type: wire.ChannelGuildVoice, Position: pos}
		if deny != 0 {
			c.Overwrites = []wire.OverwriteSpec{{Everyone: true, Deny: wire.Permissions(deny)}}
		}
		return c
	}
	g, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Voice Lab", OwnerID: alice.ID,
		Roles:   []wire.RoleSpec{{Name: "status", Permissions: wire.Permissions(wire.PermSetVoiceChannelStatus)}},
		Members: []wire.GuildMemberSpec{{ID: bob.ID}, {ID: e.App.BotUserID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{voice("lounge", 0, 0), voice("den", 1, 0), voice("locked", 2, guildaccess.PermConnect),
			voice("hidden", 3, guildaccess.PermViewChannel), {Name: "general", Type: wire.ChannelGuildText, Position: 4}}})
	require.NoError(t, err)
	far, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Far", OwnerID: bob.ID,
		Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID}}, Channel: []wire.GuildChannelSpec{voice("far", 0, 0)}})
	require.NoError(t, err)
	l := &voiceLab{e: e, guild: g, faraway: far.Channels[0].ID}
	for i, p := range []*wire.Snowflake{&l.lounge, &l.den, &l.locked, &l.hidden, &l.general} {
		*p = g.Channels[i].ID
	}
	return l
}

// bot dials a bot session with intents and reads its READY and GUILD_CREATEs (the lab's guild's
// last), returning that one.
func (l *voiceLab) bot(t *testing.T, intents uint64) (*guildtest.Gateway, wire.GuildCreate) {
	t.Helper()
	g := guildtest.Dial(t, l.e, "/?v=10&encoding=json")
	g.Identify("Bot "+l.e.App.BotToken, intents)
	var gc wire.GuildCreate
	for range 2 {
		var one wire.GuildCreate
		g.Expect(gwire.OpDispatch, gwire.EventGuildCreate, &one)
		if one.ID == l.guild.ID {
			gc = one
		}
	}
	require.Equal(t, l.guild.ID, gc.ID)
	return g, gc
}

// player dials a player's session (a user token) with intents.
func (l *voiceLab) player(t *testing.T, name string, intents uint64) *guildtest.Gateway {
	t.Helper()
	g := guildtest.Dial(t, l.e, "")
	g.Identify(l.e.Token(t, name, "openid sdk.social_layer").AccessToken, intents)
	return g
}

// join sends op 4 for the lab's guild; channel 0 leaves.
func (l *voiceLab) join(g *guildtest.Gateway, channel wire.Snowflake, mute bool) {
	d := map[string]any{"guild_id": l.guild.ID, "channel_id": nil, "self_mute": mute, "self_deaf": false}
	if channel != 0 {
		d["channel_id"] = channel
	}
	g.Send(gwire.OpVoiceStateUpdate, d)
}

// voiceNext reads the next payload that is not a PRESENCE_UPDATE (which a player's session gets
// whenever its own or a friend's presence changes), checks its op and event, and decodes its d
// into out.
func voiceNext(g *guildtest.Gateway, op int, event string, out any) {
	g.T.Helper()
	for {
		p := g.Next()
		if p.T != nil && *p.T == gwire.EventPresenceUpdate {
			continue
		}
		t := ""
		if p.T != nil {
			t = *p.T
		}
		require.Equal(g.T, [2]any{op, event}, [2]any{p.Op, t}, "payload d %s", p.D)
		if out != nil {
			require.NoError(g.T, json.Unmarshal(p.D, out), "d %s", p.D)
		}
		return
	}
}

// fence sends a heartbeat and reads up to its ACK (presences aside): nothing else came before.
func fence(g *guildtest.Gateway) {
	g.T.Helper()
	g.Send(gwire.OpHeartbeat, nil)
	voiceNext(g, gwire.OpHeartbeatACK, "", nil)
}

// state reads a VOICE_STATE_UPDATE.
func state(g *guildtest.Gateway) wire.VoiceState {
	g.T.Helper()
	var v wire.VoiceState
	voiceNext(g, gwire.OpDispatch, gwire.EventVoiceStateUpdate, &v)
	return v
}

// startTime reads a VOICE_CHANNEL_START_TIME_UPDATE.
func startTime(g *guildtest.Gateway) gwire.VoiceChannelStartTimeUpdate {
	g.T.Helper()
	var v gwire.VoiceChannelStartTimeUpdate
	voiceNext(g, gwire.OpDispatch, gwire.EventVoiceChannelStartTimeUpdate, &v)
	return v
}

func unix(t time.Time) *int64 { s := t.Unix(); return &s }

// Update Voice State (op 4) in guild voice channels: joins, moves, self_mute and leaves are
// VOICE_STATE_UPDATEs to the guild's sessions with GUILD_VOICE_STATES (and only those), with
// the member; GUILD_CREATE carries the voice states. A channel's voice_start_time is set when
// its first member joins and cleared when its last one leaves, each change dispatched as
// VOICE_CHANNEL_START_TIME_UPDATE (rule GW-4) and reported by Request Channel Info (rule GW-3).
// A session whose connection ends leaves its channel.
func TestGuildVoiceStartTime(t *testing.T) {
	l := newVoiceLab(t)
	e := l.e
	alice, bot := e.User("alice").ID, e.App.BotUserID
	watcher, gc := l.bot(t, gwire.IntentGuilds|gwire.IntentGuildVoiceStates)
	assert.Empty(t, gc.VoiceStates)
	quiet, _ := l.bot(t, gwire.IntentGuilds) // no GUILD_VOICE_STATES
	ap := l.player(t, "alice", gwire.IntentGuildVoiceStates)
	start := e.Clock.Now()

	// alice joins the lounge, muted: its voice session starts.
	l.join(ap, l.lounge, true)
	own := state(ap)
	assert.Equal(t, l.lounge, *own.ChannelID)
	v := state(watcher)
	assert.Equal(t, own, v, "every session with the intent gets the same state")
	require.NotNil(t, v.GuildID)
	assert.Equal(t, l.guild.ID, *v.GuildID)
	assert.Equal(t, alice, v.UserID)
	assert.True(t, v.SelfMute)
	assert.NotEmpty(t, v.SessionID)
	require.NotNil(t, v.Member, "VOICE_STATE_UPDATE carries the member")
	assert.Equal(t, "alice", v.Member.User.Username)
	assert.Equal(t, gwire.VoiceChannelStartTimeUpdate{ID: l.lounge, GuildID: l.guild.ID, VoiceStartTime: unix(start)},
		startTime(watcher), "GW-4: the first member starts the channel's voice session")
	assert.Equal(t, gwire.VoiceChannelStartTimeUpdate{ID: l.lounge, GuildID: l.guild.ID, VoiceStartTime: unix(start)},
		startTime(quiet), "GW-4: to the guild's bots with GUILDS")
	fence(ap)
	fence(quiet) // no VOICE_STATE_UPDATE without GUILD_VOICE_STATES

	// The bot joins a minute later: the session's start does not move.
	e.Clock.Advance(time.Minute)
	l.join(watcher, l.lounge, false)
	v = state(watcher)
	assert.Equal(t, bot, v.UserID)
	assert.Equal(t, l.lounge, *v.ChannelID)
	assert.Equal(t, bot, state(ap).UserID)
	fence(watcher) // no start time update: the session was already on

	// GW-3: Request Channel Info reports it.
	watcher.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": l.guild.ID, "fields": []string{"voice_start_time"}})
	var info gwire.ChannelInfo
	watcher.Expect(gwire.OpDispatch, gwire.EventChannelInfo, &info)
	starts := map[wire.Snowflake]*int64{}
	for _, c := range info.Channels {
		starts[c.ID] = c.VoiceStartTime
	}
	assert.Equal(t, map[wire.Snowflake]*int64{l.lounge: unix(start), l.den: nil, l.locked: nil, l.hidden: nil}, starts, "GW-3")

	// GUILD_CREATE of a new session with the intent holds both states.
	third, gc := l.bot(t, gwire.IntentGuilds|gwire.IntentGuildVoiceStates)
	require.Len(t, gc.VoiceStates, 2)
	require.Less(t, bot, alice, "the states come by user id")
	assert.Equal(t, []wire.Snowflake{bot, alice}, []wire.Snowflake{gc.VoiceStates[0].UserID, gc.VoiceStates[1].UserID})
	assert.Nil(t, gc.VoiceStates[1].GuildID, "implied by the guild")
	assert.Equal(t, l.lounge, *gc.VoiceStates[1].ChannelID)
	assert.True(t, gc.VoiceStates[1].SelfMute)
	assert.False(t, gc.VoiceStates[0].SelfMute)

	// alice unmutes, then leaves: the bot is still there, the session goes on.
	l.join(ap, l.lounge, false)
	assert.False(t, state(watcher).SelfMute)
	assert.False(t, state(ap).SelfMute)
	l.join(ap, 0, false)
	v = state(watcher)
	assert.Equal(t, alice, v.UserID)
	assert.Nil(t, v.ChannelID, "a leave has channel_id null")
	assert.Equal(t, v, state(ap))
	assert.False(t, state(third).SelfMute)
	assert.Equal(t, v, state(third))
	fence(ap)
	fence(watcher)

	// The bot moves to the den: the lounge's session ends, the den's starts.
	e.Clock.Advance(time.Minute)
	moved := e.Clock.Now()
	l.join(watcher, l.den, false)
	assert.Equal(t, l.den, *state(watcher).ChannelID)
	assert.Equal(t, gwire.VoiceChannelStartTimeUpdate{ID: l.lounge, GuildID: l.guild.ID}, startTime(watcher), "GW-4: the last one left")
	assert.Equal(t, gwire.VoiceChannelStartTimeUpdate{ID: l.den, GuildID: l.guild.ID, VoiceStartTime: unix(moved)},
		startTime(watcher), "GW-4")
	third.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": l.guild.ID, "fields": []string{"voice_start_time", "status"}})
	// third reads what the move sent it first.
	assert.Equal(t, l.den, *state(third).ChannelID)
	assert.Nil(t, startTime(third).VoiceStartTime)
	assert.Equal(t, unix(moved), startTime(third).VoiceStartTime)
	var after gwire.ChannelInfo
	third.Expect(gwire.OpDispatch, gwire.EventChannelInfo, &after)
	require.Len(t, after.Channels, 4)
	for _, c := range after.Channels {
		switch c.ID {
		case l.den:
			assert.Equal(t, unix(moved), c.VoiceStartTime, "GW-3")
		default:
			assert.Nil(t, c.VoiceStartTime, "GW-3: channel %s", c.ID)
		}
	}

	// The bot's connection ends: it leaves the den, whose session ends.
	require.NoError(t, watcher.WS.CloseNow())
	v = state(third)
	assert.Equal(t, bot, v.UserID)
	assert.Nil(t, v.ChannelID)
	assert.Equal(t, gwire.VoiceChannelStartTimeUpdate{ID: l.den, GuildID: l.guild.ID}, startTime(third), "GW-4")
	fence(third)
	_, gc = l.bot(t, gwire.IntentGuildVoiceStates|gwire.IntentGuilds)
	assert.Empty(t, gc.VoiceStates)
}

// Joining a guild voice channel needs membership, VIEW_CHANNEL and CONNECT in a voice channel of
// that guild; each refusal is an SDKPP_VOICE_ERROR to the session, and changes nothing. A member
// that leaves the guild leaves its voice channel.
func TestGuildVoiceRefusals(t *testing.T) {
	l := newVoiceLab(t)
	e := l.e
	bp := l.player(t, "bob", gwire.IntentGuildVoiceStates)
	carol := l.player(t, "carol", gwire.IntentGuildVoiceStates) // not a member
	for _, tc := range []struct {
		what    string
		g       *guildtest.Gateway
		guild   wire.Snowflake
		channel wire.Snowflake
		code    int
	}{
		{"no CONNECT", bp, l.guild.ID, l.locked, vwire.CodeMissingPermissions},
		{"not viewable", bp, l.guild.ID, l.hidden, vwire.CodeMissingAccess},
		{"a text channel", bp, l.guild.ID, l.general, vwire.CodeInvalidChannelType},
		{"another guild's channel", bp, l.guild.ID, l.faraway, vwire.CodeUnknownChannel},
		{"an unknown channel", bp, l.guild.ID, 42, vwire.CodeUnknownChannel},
		{"an unknown guild", bp, 42, l.lounge, vwire.CodeUnknownGuild},
		{"not a member", carol, l.guild.ID, l.lounge, vwire.CodeUnknownGuild},
	} {
		tc.g.Send(gwire.OpVoiceStateUpdate, map[string]any{"guild_id": tc.guild, "channel_id": tc.channel})
		var refused vwire.Error
		voiceNext(tc.g, gwire.OpDispatch, gwire.EventVoiceError, &refused)
		assert.Equal(t, tc.code, refused.Code, "%s: %+v", tc.what, refused)
		require.NotNil(t, refused.ChannelID, tc.what)
		assert.Equal(t, tc.channel, *refused.ChannelID, tc.what)
	}
	_, gc := l.bot(t, gwire.IntentGuilds|gwire.IntentGuildVoiceStates)
	assert.Empty(t, gc.VoiceStates, "refusals change nothing")

	// The owner may join even the locked channel; bob joins the lounge, then leaves the guild.
	ap := l.player(t, "alice", gwire.IntentGuildVoiceStates)
	l.join(ap, l.locked, false)
	assert.Equal(t, l.locked, *state(ap).ChannelID)
	assert.Equal(t, l.locked, *state(bp).ChannelID)
	l.join(bp, l.lounge, false)
	assert.Equal(t, l.lounge, *state(ap).ChannelID)
	assert.Equal(t, l.lounge, *state(bp).ChannelID)
	r := guildtest.Do(t, http.MethodDelete, e.APIURL+"/users/@me/guilds/"+l.guild.ID.String(), nil,
		guildtest.Bearer(e.Token(t, "bob", "openid sdk.social_layer guilds").AccessToken))
	require.Equal(t, http.StatusNoContent, r.Status, "leave: %s", r.Body)
	v := state(ap)
	assert.Equal(t, e.User("bob").ID, v.UserID)
	assert.Nil(t, v.ChannelID, "bob left the guild, and its voice channel")
	assert.Nil(t, v.Member, "no longer a member")
	assert.Nil(t, state(bp).ChannelID, "bob hears that it left")
}

// VCS-1: a bot connected to the voice channel sets its status without MANAGE_CHANNELS.
func TestVoiceStatusWhenConnected(t *testing.T) {
	l := newVoiceLab(t)
	status := func() guildtest.Resp {
		return guildtest.Do(t, http.MethodPut, l.e.APIURL+"/channels/"+l.lounge.String()+"/voice-status",
			strings.NewReader(`{"status":"Raid night"}`), http.Header{"Content-Type": {"application/json"},
				"Authorization": {"Bot " + l.e.App.BotToken}})
	}
	guildtest.ExpectAPIError(t, "VCS-1: not connected, no MANAGE_CHANNELS", status(), http.StatusForbidden, wire.CodeMissingPermissions)
	g, _ := l.bot(t, gwire.IntentGuilds|gwire.IntentGuildVoiceStates)
	l.join(g, l.lounge, false)
	state(g)
	startTime(g)
	r := status()
	require.Equal(t, http.StatusNoContent, r.Status, "VCS-1: connected: %s", r.Body)
	var upd gwire.VoiceChannelStatusUpdate
	g.Expect(gwire.OpDispatch, gwire.EventVoiceChannelStatusUpdate, &upd)
	require.NotNil(t, upd.Status)
	assert.Equal(t, "Raid night", *upd.Status)
}

// A malformed guild Voice State Update closes the connection with 4002, like any malformed
// payload.
func TestGuildVoiceMalformed(t *testing.T) {
	l := newVoiceLab(t)
	for _, d := range []string{`{"guild_id":"x","channel_id":"1"}`, `{"guild_id":"0","channel_id":"1"}`,
		`{"guild_id":"` + l.guild.ID.String() + `","channel_id":"0"}`, `{"guild_id":"` + l.guild.ID.String() + `","self_mute":"yes"}`,
		`{"guild_id":["1"],"channel_id":null}`, `{"guild_id":"18446744073709551616","channel_id":null}`} {
		g, _ := l.bot(t, gwire.IntentGuilds)
		require.NoError(t, g.WS.Write(t.Context(), websocket.MessageText, []byte(`{"op":4,"d":`+d+`}`)))
		_, _, err := g.WS.Read(t.Context())
		assert.Equal(t, websocket.StatusCode(gwire.CloseDecodeError), websocket.CloseStatus(err), "%s: %v", d, err)
	}
}
