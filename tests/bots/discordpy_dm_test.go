package bots

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// A discord.py bot opens a DM with a user of its guild (Member.create_dm), asks there, and
// receives the user's answer through on_message, as a DM message that mentions it.
func TestDiscordPyDM(t *testing.T) {
	discordPyReady(t)
	e := servertest.Start(t)
	botLab(t, e, "Py DM Lab")
	alice := e.User("alice")
	bot := startBot(t, []string{"SDKPP_API_BASE=" + e.APIURL, "SDKPP_BOT_TOKEN=" + e.App.BotToken}, debianPython, "testdata/dmbot.py")
	next := func(what string, v any) {
		t.Helper()
		line := bot.next(t, what)
		var failed struct{ Error string }
		require.NoError(t, json.Unmarshal(line, &failed), "%s", line)
		require.Empty(t, failed.Error, "the bot failed; its log:\n%s", bot.log())
		require.NoError(t, json.Unmarshal(line, v), "%s", line)
	}
	require.Equal(t, "READY", string(bot.next(t, "READY")), "its log:\n%s", bot.log())
	_, err := fmt.Fprintln(bot.in, alice.ID.String())
	require.NoError(t, err)
	var asked struct {
		Channel, Recipient string
		Type               int
	}
	next("the DM", &asked)
	assert.Equal(t, 1, asked.Type)
	assert.Equal(t, alice.ID.String(), asked.Recipient)

	aliceSays(t, e, asked.Channel, "<@"+e.App.BotUserID.String()+"> the harbour")
	var answered struct {
		Content, Author, Channel string
		DM                       bool
		Guild                    *string
		MentionsBot              bool `json:"mentions_bot"`
	}
	next("the answer", &answered)
	assert.Equal(t, "<@"+e.App.BotUserID.String()+"> the harbour", answered.Content)
	assert.Equal(t, "alice", answered.Author)
	assert.Equal(t, asked.Channel, answered.Channel)
	assert.True(t, answered.DM)
	assert.Nil(t, answered.Guild)
	assert.True(t, answered.MentionsBot)
	require.NoError(t, bot.cmd.Wait(), "its log:\n%s", bot.log())
}
