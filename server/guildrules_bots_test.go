package server_test

import (
	"net/http"
	"strconv"
	"strings"
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

// guildCreateChannels reads the GUILD_CREATE after READY and returns its channels by name.
func guildCreateChannels(t *testing.T, g *guildtest.Gateway) map[string]wire.Channel {
	t.Helper()
	var gc wire.GuildCreate
	g.Expect(gwire.OpDispatch, gwire.EventGuildCreate, &gc)
	out := map[string]wire.Channel{}
	for _, c := range gc.Channels {
		if c.Flags&wire.ChannelFlagObfuscated != 0 {
			out["#"+c.ID.String()] = c
			continue
		}
		out[c.Name] = c
	}
	return out
}

// GW-1, CH-2, CH-3: with the Identify capability or the app's bot setting, the channels the bot
// cannot view come obfuscated in GUILD_CREATE; without either, as they are.
func TestGuildCreateObfuscation(t *testing.T) {
	f := guildtest.NewBots(t)
	hidden := f.Channel("hidden")
	for _, tc := range []struct {
		name    string
		caps    int64
		setting bool
		hidden  bool
	}{{"neither", 0, false, false}, {"capability", gwire.CapabilityChannelObfuscation, false, true}, {"bot setting", 0, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := guildtest.SendJSON(t, http.MethodPut, f.E.APIURL+"/dev/applications/"+f.E.App.ID.String()+"/flags",
				map[string]any{"channel_obfuscation": tc.setting}, http.Header{"Authorization": {"Admin " + f.E.Creds.AdminToken}})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			g := guildtest.Dial(t, f.E, "/?v=10&encoding=json")
			g.Send(gwire.OpIdentify, map[string]any{"token": f.E.App.BotToken, "intents": gwire.IntentGuilds, "capabilities": tc.caps,
				"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}})
			g.Expect(gwire.OpDispatch, gwire.EventReady)
			chans := guildCreateChannels(t, g)
			assert.Contains(t, chans, "staff", "the bot's role may view staff")
			obf, isHidden := chans["#"+hidden.ID.String()]
			assert.Equal(t, tc.hidden, isHidden, "GW-1: %s", tc.name)
			if isHidden {
				assert.Equal(t, wire.ObfuscatedChannelName, obf.Name, "CH-3")
				require.Len(t, obf.PermissionOverwrites, 1, "CH-3")
				assert.Equal(t, f.Guild.ID, obf.PermissionOverwrites[0].ID, "CH-3: @everyone")
				assert.Equal(t, wire.Permissions(guildaccess.PermViewChannel), obf.PermissionOverwrites[0].Deny, "CH-3")
				assert.Equal(t, hidden.Position, obf.Position)
			} else {
				assert.Contains(t, chans, "hidden")
			}
		})
	}
}

// GW-4, VCS-1: a bot whose role grants SET_VOICE_CHANNEL_STATUS and MANAGE_CHANNELS sets a
// status; the change reaches the guild's bot sessions with GUILDS, an unchanged status does not.
func TestVoiceStatusDispatchedToBots(t *testing.T) {
	e := servertest.Start(t)
	g0, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Voice", OwnerID: e.User("alice").ID,
		Roles:   []wire.RoleSpec{{Name: "dj", Permissions: wire.Permissions(wire.PermSetVoiceChannelStatus | guildaccess.PermManageChannels)}},
		Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{{Name: "Lounge", Type: wire.ChannelGuildVoice}}})
	require.NoError(t, err)
	voiceCh := g0.Channels[0]
	g := guildtest.Dial(t, e, "/?v=10&encoding=json")
	g.Identify(e.App.BotToken, gwire.IntentGuilds)
	g.Expect(gwire.OpDispatch, gwire.EventGuildCreate)
	put := func(body string) {
		r := guildtest.Do(t, http.MethodPut, e.APIURL+"/channels/"+voiceCh.ID.String()+"/voice-status", strings.NewReader(body),
			http.Header{"Authorization": {"Bot " + e.App.BotToken}, "Content-Type": {"application/json"}})
		require.Equal(t, http.StatusNoContent, r.Status, "VCS-1: %s", r.Body)
	}
	put(`{"status":"Raid night"}`)
	var u gwire.VoiceChannelStatusUpdate
	g.Expect(gwire.OpDispatch, gwire.EventVoiceChannelStatusUpdate, &u)
	require.NotNil(t, u.Status, "GW-4")
	assert.Equal(t, "Raid night", *u.Status, "GW-4")
	assert.Equal(t, voiceCh.ID, u.ID)
	put(`{"status":"Raid night"}`)
	g.Sync() // GW-4: no dispatch before the ACK for an unchanged status
	put(`{"status":null}`)
	g.Expect(gwire.OpDispatch, gwire.EventVoiceChannelStatusUpdate, &u)
	assert.Nil(t, u.Status, "GW-4: cleared")
}

// GCL-1 (VER-3): a bot's GET /guilds/{id}/channels lists "hidden" until Nov 16, 2026, not after.
func TestGuildChannelsOmittedFromDate(t *testing.T) {
	for _, tc := range []struct {
		at     time.Time
		listed bool
	}{{wire.ChannelsOmittedFrom.Add(-time.Millisecond), true}, {wire.ChannelsOmittedFrom, false}} {
		f := guildtest.NewBots(t, servertest.WithFrozenClock(tc.at))
		r := guildtest.Do(t, http.MethodGet, f.E.APIURL+"/guilds/"+f.Guild.ID.String()+"/channels", nil, guildtest.Bot(f.E.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var list []wire.GuildChannel
		r.JSON(t, &list)
		var names []string
		for _, c := range list {
			names = append(names, c.Name)
		}
		assert.Equal(t, tc.listed, strings.Contains(strings.Join(names, ","), "hidden"), "GCL-1 at %s: %v", tc.at, names)
		assert.Contains(t, names, "staff")
	}
}

// APP-1: READY's application carries the 32-bit flags.
func TestReadyApplicationFlags(t *testing.T) {
	e := servertest.Start(t)
	const all = uint64(1)<<40 | wire.AppFlagGatewayMessageContentLimited
	r := guildtest.SendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(all, 10)}, http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	g := guildtest.Dial(t, e, "/?v=10&encoding=json")
	ready := g.Identify(e.App.BotToken, 0)
	assert.JSONEq(t, `{"id":"`+e.App.ID.String()+`","flags":`+strconv.FormatUint(wire.AppFlagGatewayMessageContentLimited, 10)+`}`,
		string(ready["application"]), "APP-1")
}
