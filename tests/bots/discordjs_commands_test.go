package bots

import (
	"testing"

	"sdkpp/server/servertest"
)

// A discord.js bot registers /game (guild.commands.set) and answers it through discord.js's
// interaction API: respond (autocomplete), reply, an ephemeral reply, deferReply then followUp
// (playGame).
func TestDiscordjsCommands(t *testing.T) {
	node, modules := discordjsReady(t)
	e := servertest.Start(t)
	guild := botLab(t, e, "JS Command Lab")
	bot := startBot(t, []string{"NODE_PATH=" + modules, "SDKPP_API_BASE=" + e.URL + "/api", "SDKPP_BOT_TOKEN=" + e.App.BotToken},
		node, "testdata/gamebot.js")
	playGame(t, e, guild, bot)
}
