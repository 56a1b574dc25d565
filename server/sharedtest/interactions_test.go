package sharedtest_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// An interaction made on node 1 is answered on node 2, once: two answers racing on nodes 2 and
// 3 are one 204 and one 40060. A modal shown through node 2 is submitted on node 3, once. A
// command registered on node 1 is seen at once on node 2, and commands registered at once on
// several nodes are all kept.
func TestInteractionsAcrossNodes(t *testing.T) {
	t.Parallel()
	u := database(t)
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	f := guildtest.NewBots(t, servertest.WithClock(clk), node(u, 1))
	nodes := []*servertest.Env{f.E, servertest.Start(t, servertest.WithClock(clk), node(u, 2)),
		servertest.Start(t, servertest.WithClock(clk), node(u, 3))}
	bot := guildtest.Dial(t, f.E, "")
	bot.Identify(f.E.App.BotToken, 0)
	general := f.Channel("general")

	commands := "/applications/" + f.E.App.ID.String() + "/guilds/" + f.Guild.ID.String() + "/commands"
	var cmd wire.ApplicationCommand
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, nodes[1].APIURL+commands, nil, f.BotHeader()), &[]wire.ApplicationCommand{})
	r := guildtest.SendJSON(t, http.MethodPost, f.API(commands), map[string]any{"name": "feedback", "description": "d"}, f.BotHeader())
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.JSON(t, &cmd)
	var seen []wire.ApplicationCommand
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, nodes[1].APIURL+commands, nil, f.BotHeader()), &seen)
	require.Len(t, seen, 1, "node 2 reads the command node 1 registered")

	invoke := func(e *servertest.Env, body map[string]any) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/interactions", body, guildtest.Bearer(f.Alice))
	}
	callback := func(e *servertest.Env, ix wire.Interaction, body any) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/interactions/"+ix.ID.String()+"/"+ix.Token+"/callback", body, nil)
	}
	require.Equal(t, http.StatusNoContent, invoke(f.E, map[string]any{"type": 2, "application_id": f.E.App.ID,
		"guild_id": f.Guild.ID, "channel_id": general.ID, "data": map[string]any{"id": cmd.ID, "name": "feedback"}}).Status)
	var ix wire.Interaction
	bot.Until("INTERACTION_CREATE", &ix)

	modal := json.RawMessage(`{"type": 9, "data": {"custom_id": "fb", "title": "Feedback", "components": [
		{"type": 18, "label": "Agree", "component": {"type": 23, "custom_id": "ok"}}]}}`)
	statuses := make([]int, 2)
	var wg sync.WaitGroup
	for i, e := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := callback(e, ix, modal)
			statuses[i] = r.Status
			if r.Status != http.StatusNoContent {
				assert.Equal(t, wire.CodeInteractionAcknowledged, r.APIError(t).Code)
			}
		}()
	}
	wg.Wait()
	assert.ElementsMatch(t, []int{http.StatusNoContent, http.StatusBadRequest}, statuses, "answered once of two racing answers")

	submit := map[string]any{"type": 5, "application_id": f.E.App.ID, "guild_id": f.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": ix.ID, "custom_id": "fb",
			"components": json.RawMessage(`[{"type": 18, "component": {"type": 23, "custom_id": "ok", "value": true}}]`)}}
	r = invoke(nodes[2], submit)
	require.Equal(t, http.StatusNoContent, r.Status, "the modal opened on another node is submitted on node 3: %s", r.Body)
	r = invoke(nodes[0], submit)
	assert.Equal(t, http.StatusNotFound, r.Status, "submitted once: %s", r.Body)

	for i := range 2 * len(nodes) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := guildtest.SendJSON(t, http.MethodPost, nodes[i%len(nodes)].APIURL+commands,
				map[string]any{"name": "c" + strconv.Itoa(i), "description": "d"}, f.BotHeader())
			assert.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		}()
	}
	wg.Wait()
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, nodes[2].APIURL+commands, nil, f.BotHeader()), &seen)
	assert.Len(t, seen, 1+2*len(nodes), "no registration lost to another node's")
}
