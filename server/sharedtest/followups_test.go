package sharedtest_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// An interaction deferred (ephemerally) on node 1 is followed up through its webhook on nodes 2
// and 3 at once: one follow-up completes the deferral and becomes @original, ephemeral as the
// deferral said, the other is a follow-up of its own. Every node then reads, edits and deletes
// those messages.
func TestDeferredInteractionFollowedUpOnAnotherNode(t *testing.T) {
	t.Parallel()
	f, nodes, bot, clk := botNodes(t)
	general := f.Channel("general")

	var cmd wire.ApplicationCommand
	r := guildtest.SendJSON(t, http.MethodPost, f.API("/applications/"+f.E.App.ID.String()+"/guilds/"+f.Guild.ID.String()+"/commands"),
		map[string]any{"name": "slow", "description": "d"}, f.BotHeader())
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.JSON(t, &cmd)
	r = guildtest.SendJSON(t, http.MethodPost, f.API("/interactions"), map[string]any{"type": 2, "application_id": f.E.App.ID,
		"guild_id": f.Guild.ID, "channel_id": general.ID, "data": map[string]any{"id": cmd.ID, "name": "slow"}}, guildtest.Bearer(f.Alice))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var ix wire.Interaction
	bot.Until("INTERACTION_CREATE", &ix)
	hook := func(e *servertest.Env, method, rest string, body any) guildtest.Resp {
		u := e.APIURL + "/webhooks/" + f.E.App.ID.String() + "/" + ix.Token + rest
		if body == nil {
			return guildtest.Do(t, method, u, nil, nil)
		}
		return guildtest.SendJSON(t, method, u, body, nil)
	}

	guildtest.ExpectAPIError(t, "a follow-up before the answer, on node 2", hook(nodes[1], http.MethodPost, "", map[string]any{"content": "x"}),
		http.StatusNotFound, wire.CodeUnknownWebhook)
	r = guildtest.SendJSON(t, http.MethodPost, f.API("/interactions/"+ix.ID.String()+"/"+ix.Token+"/callback"),
		map[string]any{"type": 5, "data": map[string]any{"flags": wire.MessageFlagEphemeral}}, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "deferred on node 1: %s", r.Body)
	guildtest.ExpectAPIError(t, "@original while deferred, on node 3", hook(nodes[2], http.MethodGet, "/messages/@original", nil),
		http.StatusNotFound, wire.CodeUnknownMessage)

	clk.Advance(5 * time.Second) // past the initial response's 3 seconds, within the token's 15 minutes
	posted := make([]wire.GuildMessage, 2)
	var wg sync.WaitGroup
	for i, e := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := hook(e, http.MethodPost, "", map[string]any{"content": "done"})
			if assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body) {
				r.JSON(t, &posted[i])
			}
		}()
	}
	wg.Wait()
	require.NotEqual(t, posted[0].ID, posted[1].ID)

	var original wire.GuildMessage
	guildtest.OK(t, hook(nodes[0], http.MethodGet, "/messages/@original", nil), &original)
	other := posted[0]
	if other.ID == original.ID {
		other = posted[1]
	}
	require.Contains(t, []wire.Snowflake{posted[0].ID, posted[1].ID}, original.ID, "one of the follow-ups is @original")
	assert.Equal(t, wire.MessageFlagEphemeral, original.Flags&wire.MessageFlagEphemeral, "ephemeral, as deferred")
	assert.Zero(t, other.Flags&wire.MessageFlagEphemeral, "the other follow-up is of the channel")
	require.NotNil(t, original.InteractionMetadata)
	assert.Equal(t, ix.ID, original.InteractionMetadata.ID)

	var edited wire.GuildMessage
	guildtest.OK(t, hook(nodes[0], http.MethodPatch, "/messages/@original", map[string]any{"content": "done!"}), &edited)
	assert.Equal(t, original.ID, edited.ID)
	guildtest.OK(t, hook(nodes[1], http.MethodGet, "/messages/@original", nil), &edited)
	assert.Equal(t, "done!", edited.Content, "the ephemeral edit made on node 1, read on node 2")
	assert.NotNil(t, edited.EditedTimestamp)

	var got wire.GuildMessage
	guildtest.OK(t, hook(nodes[2], http.MethodGet, "/messages/"+other.ID.String(), nil), &got)
	assert.Equal(t, "done", got.Content)
	r = hook(nodes[2], http.MethodDelete, "/messages/"+other.ID.String(), nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	guildtest.ExpectAPIError(t, "deleted on node 3, on node 1", hook(nodes[0], http.MethodGet, "/messages/"+other.ID.String(), nil),
		http.StatusNotFound, wire.CodeUnknownMessage)
	r = hook(nodes[1], http.MethodDelete, "/messages/@original", nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	guildtest.ExpectAPIError(t, "@original deleted on node 2, on node 3", hook(nodes[2], http.MethodGet, "/messages/@original", nil),
		http.StatusNotFound, wire.CodeUnknownMessage)
}
