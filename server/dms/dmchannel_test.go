package dms_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// GET /channels/{id} serves a DM channel to the players in it, beside guild channels on the same
// path: the platform's DM channel object; 404 10003 to anyone else, and to a bot.
func TestGetDMChannel(t *testing.T) {
	f := guildtest.NewBots(t)
	var dm wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"), map[string]any{"recipient_id": f.E.User("bob").ID},
		guildtest.Bearer(f.Alice)), &dm)
	var m wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"), map[string]any{"content": "gg"},
		guildtest.Bearer(f.Alice)), &m)
	for _, who := range []string{f.Alice, f.Bob} {
		var got wire.DMChannel
		guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()), nil, guildtest.Bearer(who)), &got)
		assert.Equal(t, dm.ID, got.ID)
		assert.Equal(t, wire.ChannelTypeDM, got.Type)
		require.Len(t, got.Recipients, 2)
		require.NotNil(t, got.LastMessageID)
		assert.Equal(t, m.ID, *got.LastMessageID)
	}
	guildtest.ExpectAPIError(t, "carol is not in it", guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()), nil, guildtest.Bearer(f.Carol)),
		http.StatusNotFound, wire.CodeUnknownChannel)
	guildtest.ExpectAPIError(t, "a bot is not in it", guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()), nil, f.BotHeader()),
		http.StatusNotFound, wire.CodeUnknownChannel)
	// A guild channel on the same path, with a user token.
	var ch wire.Channel
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+f.Channel("general").ID.String()), nil, guildtest.Bearer(f.Bob)), &ch)
	assert.Equal(t, "general", ch.Name)
}
