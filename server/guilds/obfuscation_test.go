package guilds_test

import (
	"net/http"
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
