package bots

import (
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
	next := func(what string, v any) { t.Helper(); bot.step(t, what, v) }
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

	askInDM(t, e, bot, asked.Channel)
}
