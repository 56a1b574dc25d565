package guilds_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// A bot logs in with its bot token: READY's user is the bot and its guilds come unavailable,
// then one GUILD_CREATE with the channels (overwrites as strings, rule PERM-1), the roles (color
// and colors, rule ROLE-1) and, with GUILD_MEMBERS, every member; without it, the bot's own.
func TestBotGatewayLogin(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, guildtest.BotIntents) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "/?v=10&encoding=json")
	ready := g.Identify("Bot "+f.E.App.BotToken, guildtest.AllGuildIntents)
	var user wire.User
	require.NoError(t, json.Unmarshal(ready["user"], &user))
	assert.Equal(t, f.BotID, user.ID)
	assert.True(t, user.Bot)
	assert.JSONEq(t, `[{"id":"`+f.Guild.ID.String()+`","unavailable":true}]`, string(ready["guilds"]))
	var gc wire.GuildCreate
	raw := g.Expect(gwire.OpDispatch, gwire.EventGuildCreate, &gc)
	assert.Equal(t, f.Guild.ID, gc.ID)
	assert.False(t, gc.Unavailable)
	assert.Equal(t, 4, gc.MemberCount)
	assert.Len(t, gc.Members, 4)
	assert.Len(t, gc.Channels, 4)
	assert.Equal(t, []string{wire.FeatureEnhancedRoleColors}, gc.Features)
	var doc struct {
		Roles []map[string]any `json:"roles"`
		Chans []struct {
			Name       string           `json:"name"`
			Overwrites []map[string]any `json:"permission_overwrites"`
		} `json:"channels"`
	}
	require.NoError(t, json.Unmarshal(raw.D, &doc))
	// ROLE-1: color is still sent, beside colors.
	assert.Equal(t, map[string]any{"primary_color": float64(0xff0000), "secondary_color": float64(0x00ff00),
		"tertiary_color": float64(0x0000ff)}, doc.Roles[1]["colors"], "ROLE-1")
	assert.Equal(t, float64(0xff0000), doc.Roles[1]["color"], "ROLE-1")
	assert.Equal(t, map[string]any{"primary_color": float64(0x888888), "secondary_color": nil, "tertiary_color": nil},
		doc.Roles[2]["colors"], "ROLE-1")
	assert.Equal(t, "8192", doc.Roles[1]["permissions"], "PERM-1: a string")
	for _, c := range doc.Chans {
		if c.Name == "staff" {
			require.Len(t, c.Overwrites, 2)
			for _, o := range c.Overwrites {
				assert.IsType(t, "", o["allow"], "PERM-1: allow is a string")
				assert.IsType(t, "", o["deny"], "PERM-1: deny is a string")
			}
		}
	}

	g2 := guildtest.Dial(t, f.E, "")
	g2.Identify(f.E.App.BotToken, gwire.IntentGuilds) // a bare bot token; no GUILD_MEMBERS
	g2.Expect(gwire.OpDispatch, gwire.EventGuildCreate, &gc)
	require.Len(t, gc.Members, 1, "only the bot's own member")
	assert.Equal(t, f.BotID, gc.Members[0].User.ID)
	assert.Equal(t, []wire.Snowflake{f.Mod.ID}, gc.Members[0].Roles)

	// A shard of two that does not hold the guild lists none.
	shard := int((uint64(f.Guild.ID) >> 22) % 2)
	g3 := guildtest.Dial(t, f.E, "")
	g3.Send(gwire.OpIdentify, map[string]any{"token": f.E.App.BotToken, "intents": gwire.IntentGuilds, "shard": []int{1 - shard, 2}})
	var r3 struct {
		Guilds []json.RawMessage `json:"guilds"`
	}
	g3.Expect(gwire.OpDispatch, gwire.EventReady, &r3)
	assert.Empty(t, r3.Guilds)
	g3.Sync()
}
