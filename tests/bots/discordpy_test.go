package bots

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// debianPython is the interpreter of Debian's python3-discord (build/scripts/deps.sh installs
// it); another python3 on the PATH may not see that package.
const debianPython = "/usr/bin/python3"

// discordPyReady checks that Debian's python3-discord is installed; when it is not the test
// fails with SDKPP_REQUIRE_BOTS set, and is skipped otherwise.
func discordPyReady(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(debianPython); err != nil || exec.Command(debianPython, "-c", "import discord").Run() != nil {
		if os.Getenv("SDKPP_REQUIRE_BOTS") != "" {
			require.FailNow(t, "python3-discord is not installed (build/scripts/deps.sh test installs it)")
		}
		t.Skip("python3-discord is not installed; make test installs it")
	}
}

// A bot written with discord.py (another language's client library), changed in nothing but its
// base URL: it logs in with its bot token (GET /users/@me, the application, GET /gateway/bot, a
// zlib-stream gateway session), sees its guild and channel from GUILD_CREATE, answers "!ping"
// with a reply, and reads members and roles.
func TestDiscordPyBot(t *testing.T) {
	discordPyReady(t)
	e := servertest.Start(t)
	guild := botLab(t, e, "Py Lab")
	enableIntents(t, e) // the bot identifies with GUILD_MEMBERS and MESSAGE_CONTENT
	general := guild.Channels[0].ID.String()

	bot := startBot(t, []string{"SDKPP_API_BASE=" + e.APIURL, "SDKPP_BOT_TOKEN=" + e.App.BotToken, "SDKPP_BOT_LOG=20"},
		debianPython, "testdata/pingbot.py")
	botLog := bot.log
	next := func(what string) string { return string(bot.next(t, what)) }
	require.Equal(t, "READY", next("READY"), "its log:\n%s", botLog())

	alicePings(t, e, general)

	var seen struct {
		User       string   `json:"user"`
		Bot        bool     `json:"bot"`
		Guilds     []string `json:"guilds"`
		Channels   []string `json:"channels"`
		Reply      string   `json:"reply"`
		ReplyGuild string   `json:"reply_guild"`
		Members    []string `json:"members"`
		RawRoles   [][]any  `json:"roles"`
		Error      string   `json:"error"`
	}
	line := next("its report")
	require.NoError(t, json.Unmarshal([]byte(line), &seen), line)
	require.Empty(t, seen.Error, "the bot failed; its log:\n%s", botLog())
	assert.Equal(t, e.App.BotUserID.String(), seen.User)
	assert.True(t, seen.Bot)
	assert.Equal(t, []string{guild.ID.String()}, seen.Guilds)
	assert.Equal(t, []string{"general"}, seen.Channels)
	assert.Equal(t, "pong", seen.Reply)
	assert.Equal(t, guild.ID.String(), seen.ReplyGuild)
	assert.Len(t, seen.Members, 3)
	assert.Contains(t, seen.Members, "bob")
	require.Len(t, seen.RawRoles, 2, "@everyone and helper")
	var helper []any
	for _, r := range seen.RawRoles {
		if r[0] == "helper" {
			helper = r
		}
	}
	require.NotNil(t, helper, "roles: %v", seen.RawRoles)
	assert.Equal(t, []any{"helper", float64(0x3498db), float64(1 << 13)}, helper)
	assert.False(t, strings.Contains(botLog(), "Traceback"), "its log:\n%s", botLog())
}
