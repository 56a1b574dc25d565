package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// GET /channels/{id} serves a DM channel to the players in it, beside guild channels on the same
// path: the platform's DM channel object; 404 10003 to anyone else, and to a bot.
func TestGetDMChannel(t *testing.T) {
	f := newBotFixture(t)
	var dm wire.DMChannel
	ok(t, sendJSON(t, http.MethodPost, f.api("/users/@me/channels"), map[string]any{"recipient_id": f.e.User("bob").ID},
		bearer(f.alice)), &dm)
	var m wire.Message
	ok(t, sendJSON(t, http.MethodPost, f.api("/channels/"+dm.ID.String()+"/messages"), map[string]any{"content": "gg"},
		bearer(f.alice)), &m)
	for _, who := range []string{f.alice, f.bob} {
		var got wire.DMChannel
		ok(t, do(t, http.MethodGet, f.api("/channels/"+dm.ID.String()), nil, bearer(who)), &got)
		assert.Equal(t, dm.ID, got.ID)
		assert.Equal(t, wire.ChannelTypeDM, got.Type)
		require.Len(t, got.Recipients, 2)
		require.NotNil(t, got.LastMessageID)
		assert.Equal(t, m.ID, *got.LastMessageID)
	}
	expectAPIError(t, "carol is not in it", do(t, http.MethodGet, f.api("/channels/"+dm.ID.String()), nil, bearer(f.carol)),
		http.StatusNotFound, wire.CodeUnknownChannel)
	expectAPIError(t, "a bot is not in it", do(t, http.MethodGet, f.api("/channels/"+dm.ID.String()), nil, f.botHeader()),
		http.StatusNotFound, wire.CodeUnknownChannel)
	// A guild channel on the same path, with a user token.
	var ch wire.Channel
	ok(t, do(t, http.MethodGet, f.api("/channels/"+f.channel("general").ID.String()), nil, bearer(f.bob)), &ch)
	assert.Equal(t, "general", ch.Name)
}
