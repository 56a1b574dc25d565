package bots

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// A discord.js bot opens a DM with a member of its guild (users.createDM), asks there, and
// receives the user's answer through its messageCreate event, as a DM message that mentions it.
func TestDiscordjsDM(t *testing.T) {
	node, modules := discordjsReady(t)
	e := servertest.Start(t)
	botLab(t, e, "JS DM Lab")
	alice := e.User("alice")
	bot := startBot(t, []string{"NODE_PATH=" + modules, "SDKPP_API_BASE=" + e.URL + "/api", "SDKPP_BOT_TOKEN=" + e.App.BotToken},
		node, "testdata/dmbot.js")
	next := func(step string, v any) {
		t.Helper()
		line := bot.next(t, step+" line")
		var failed struct {
			Error string `json:"error"`
		}
		require.NoError(t, json.Unmarshal(line, &failed), "%s", line)
		require.Empty(t, failed.Error, "the bot failed; its log:\n%s", bot.log())
		require.NoError(t, json.Unmarshal(line, v), "%s", line)
	}
	var ready struct{ Step string }
	next("ready", &ready)
	_, err := fmt.Fprintln(bot.in, alice.ID.String())
	require.NoError(t, err)
	var asked struct {
		Channel, Recipient, Message string
		Type                        int
	}
	next("asked", &asked)
	assert.Equal(t, 1, asked.Type, "a DM channel")
	assert.Equal(t, alice.ID.String(), asked.Recipient)
	assert.NotEmpty(t, asked.Message)

	aliceSays(t, e, asked.Channel, "<@"+e.App.BotUserID.String()+"> the harbour")
	var answered struct {
		Content, Author, Channel string
		DM                       bool
		Guild                    *string
		MentionsBot              bool `json:"mentions_bot"`
	}
	next("answered", &answered)
	assert.Equal(t, "<@"+e.App.BotUserID.String()+"> the harbour", answered.Content)
	assert.Equal(t, "alice", answered.Author)
	assert.Equal(t, asked.Channel, answered.Channel)
	assert.True(t, answered.DM)
	assert.Nil(t, answered.Guild)
	assert.True(t, answered.MentionsBot)
	require.NoError(t, bot.cmd.Wait(), "its log:\n%s", bot.log())
}
