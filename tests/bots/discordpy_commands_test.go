package bots

import (
	"testing"

	"sdkpp/server/servertest"
)

// A discord.py bot registers /game (app_commands, CommandTree.sync) and answers it through
// discord.py's interaction API: autocomplete, send_message, an ephemeral send_message, defer then
// followup.send (playGame).
func TestDiscordPyCommands(t *testing.T) {
	discordPyReady(t)
	e := servertest.Start(t)
	guild := botLab(t, e, "Py Command Lab")
	bot := startBot(t, []string{"SDKPP_API_BASE=" + e.APIURL, "SDKPP_BOT_TOKEN=" + e.App.BotToken}, debianPython, "testdata/gamebot.py")
	playGame(t, e, guild, bot)
}
