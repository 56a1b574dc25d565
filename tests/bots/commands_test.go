package bots

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// The command the bots of this package register in their guild, through their library:
//
//	/game start rounds:INTEGER map:STRING(autocomplete)   answered "<rounds> rounds on <map>"
//	/game peek                                             answered ephemerally "only you see this"
//	/game slow                                             deferred, then a follow-up "slow done"
//
// Each bot prints one step line (JSON) when it has handled an interaction: {"step": "ready"}
// once registered; {"step": "autocomplete", "sub", "focused"} after answering choices (the maps
// starting with what was typed, of Harbour, Hangar and Desert); {"step": "start", "sub",
// "rounds", "map"}; {"step": "peek"}; {"step": "slow"}.

// stepper gives a bot's next step line.
type stepper interface {
	step(t *testing.T, what string, v any)
}

// gameStep is a bot's step line.
type gameStep struct {
	Step    string `json:"step"`
	Sub     string `json:"sub"`
	Focused string `json:"focused"`
	Rounds  int    `json:"rounds"`
	Map     string `json:"map"`
}

// playGame has alice use the bot's /game command in general, its guild's channel, and checks
// what the bot's library gave it (its step lines) and what the service shows: the autocomplete
// choices on alice's gateway session, the ephemeral answer there only, the answers of type 20
// with interaction_metadata in the channel.
func playGame(t *testing.T, e *servertest.Env, guild wire.DevGuild, bot stepper) {
	t.Helper()
	var ready gameStep
	bot.step(t, "ready", &ready)
	require.Equal(t, "ready", ready.Step)
	general := guild.Channels[0].ID
	aliceToken := e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	alice := guildtest.Dial(t, e, "")
	alice.Identify(aliceToken, 0)

	var cmds []wire.ApplicationCommand
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, e.APIURL+"/applications/"+e.App.ID.String()+"/guilds/"+guild.ID.String()+"/commands",
		nil, guildtest.Bot(e.App.BotToken)), &cmds)
	require.Len(t, cmds, 1)
	game := cmds[0]
	assert.Equal(t, "game", game.Name)
	require.Len(t, game.Options, 3, "the subcommands: %+v", game.Options)
	invoke := func(typ int, sub string, opts []any) {
		t.Helper()
		r := guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/interactions", map[string]any{"type": typ, "application_id": e.App.ID,
			"guild_id": guild.ID, "channel_id": general, "data": map[string]any{"id": game.ID, "name": "game", "type": 1,
				"options": []any{map[string]any{"name": sub, "type": 1, "options": opts}}}}, guildtest.Bearer(aliceToken))
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	}

	// Autocomplete: alice types "ha" into map.
	invoke(wire.InteractionAutocomplete, "start", []any{map[string]any{"name": "map", "value": "ha", "focused": true}})
	var s gameStep
	bot.step(t, "autocomplete", &s)
	assert.Equal(t, gameStep{Step: "autocomplete", Sub: "start", Focused: "ha"}, s)
	var choices wire.AutocompleteResponse
	alice.Until(wire.EventAutocompleteResponse, &choices)
	names := []string{}
	for _, c := range choices.Choices {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"Harbour", "Hangar"}, names)

	// The subcommand with its options.
	invoke(wire.InteractionApplicationCommand, "start", []any{map[string]any{"name": "rounds", "value": 3},
		map[string]any{"name": "map", "value": "harbour"}})
	s = gameStep{}
	bot.step(t, "start", &s)
	assert.Equal(t, gameStep{Step: "start", Sub: "start", Rounds: 3, Map: "harbour"}, s)

	// An ephemeral answer: alice's sessions get it, the channel does not keep it.
	invoke(wire.InteractionApplicationCommand, "peek", nil)
	s = gameStep{}
	bot.step(t, "peek", &s)
	assert.Equal(t, "peek", s.Step)
	var eph map[string]json.RawMessage
	alice.Until(gwire.EventMessageCreate, &eph)
	assert.JSONEq(t, `"only you see this"`, string(eph["content"]))
	assert.JSONEq(t, `64`, string(eph["flags"]))

	// Deferred, then a follow-up.
	invoke(wire.InteractionApplicationCommand, "slow", nil)
	s = gameStep{}
	bot.step(t, "slow", &s)
	assert.Equal(t, "slow", s.Step)

	var history []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, e.APIURL+"/channels/"+general.String()+"/messages", nil, guildtest.Bearer(aliceToken)), &history)
	require.Len(t, history, 2, "the ephemeral answer is not kept: %+v", history)
	assert.Equal(t, "slow done", history[0].Content)
	assert.Equal(t, "3 rounds on harbour", history[1].Content)
	for _, m := range history {
		assert.Equal(t, wire.MessageTypeChatInputCommand, m.Type)
		assert.Equal(t, e.App.BotUserID, m.Author.ID)
		require.NotNil(t, m.InteractionMetadata)
		assert.Equal(t, e.User("alice").ID, m.InteractionMetadata.User.ID)
	}
}
