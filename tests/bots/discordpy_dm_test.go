package bots

import (
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
	next := func(what string, v any) { t.Helper(); bot.step(t, what, v) }
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

	askInDM(t, e, bot, asked.Channel)
}
