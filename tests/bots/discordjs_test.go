package bots

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
)

// discordjsModules is where the Makefile installs discord.js, at the version that
// testdata/package-lock.json pins (relative to this package's directory).
const discordjsModules = "../../build/bots/discordjs/node_modules"

// discordjsReady finds node and the installed discord.js; when they are missing the test fails
// with SDKPP_REQUIRE_BOTS set, and is skipped otherwise.
func discordjsReady(t *testing.T) (node, modules string) {
	t.Helper()
	modules, err := filepath.Abs(discordjsModules)
	require.NoError(t, err)
	node, err = exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(modules, "discord.js", "package.json"))
	}
	if err != nil {
		if os.Getenv("SDKPP_REQUIRE_BOTS") != "" {
			require.FailNow(t, "discord.js is not installed (make test-go installs it: make bots)", "%v", err)
		}
		t.Skipf("discord.js is not installed (make bots installs it): %v", err)
	}
	return node, modules
}

// A bot written with discord.js (another language's client library), changed in nothing but
// its REST base URL: it logs in with its bot token (GET /gateway/bot gives it the gateway),
// receives READY and GUILD_CREATE, answers "!ping" with a reply in the guild's text channel,
// fetches the members (Request Guild Members) and the roles, and meets a 429 on a member's
// route, which it waits out and retries as discord.js does.
func TestDiscordjsBot(t *testing.T) {
	node, modules := discordjsReady(t)
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		// One request per second in the bucket of one guild's members.
		c.RateLimits.Routes = map[string]ratelimit.Rule{memberRoute: {Limit: 1, Window: memberWindow}}
	}))
	alice, bob := e.User("alice"), e.User("bob")
	guild := botLab(t, e, "JS Lab")
	enableIntents(t, e) // the bot identifies with GUILD_MEMBERS and MESSAGE_CONTENT
	general := guild.Channels[0].ID.String()

	bot := startBot(t, []string{"NODE_PATH=" + modules, "SDKPP_API_BASE=" + e.URL + "/api", "SDKPP_BOT_TOKEN=" + e.App.BotToken},
		node, "testdata/pingbot.js")
	botLog := bot.log
	next := func(step string, v any) { t.Helper(); bot.step(t, step, v) }

	var ready struct {
		Step       string   `json:"step"`
		User       string   `json:"user"`
		Username   string   `json:"username"`
		Bot        bool     `json:"bot"`
		Dispatches []string `json:"dispatches"`
		Guilds     []string `json:"guilds"`
		Channels   []string `json:"channels"`
	}
	next("ready", &ready)
	assert.Equal(t, "ready", ready.Step)
	assert.Equal(t, e.App.BotUserID.String(), ready.User)
	assert.True(t, ready.Bot)
	assert.Equal(t, []string{"READY", "GUILD_CREATE"}, ready.Dispatches)
	assert.Equal(t, []string{guild.ID.String()}, ready.Guilds)
	assert.Equal(t, []string{"general"}, ready.Channels)

	// alice writes "!ping" in the guild's text channel; the bot answers, then reads the guild.
	alicePings(t, e, general)
	var answered struct {
		Reply      string   `json:"reply"`
		ReplyGuild string   `json:"reply_guild"`
		Members    []string `json:"members"`
		Roles      [][]any  `json:"roles"`
	}
	next("answered", &answered)
	assert.Equal(t, "pong", answered.Reply)
	assert.Equal(t, guild.ID.String(), answered.ReplyGuild)
	assert.Equal(t, []string{"alice", "bob", ready.Username}, answered.Members)
	assert.Equal(t, [][]any{{"@everyone", float64(0), everyonePermissions(t, e, guild.ID.String())},
		{"helper", float64(0x3498db), strconv.Itoa(1 << 13)}}, answered.Roles)

	// Another process of the same bot has just used the one request per window of the members
	// bucket: discord.js's request there meets the service's 429, waits as the answer says, and
	// retries.
	raw, err := http.NewRequest(http.MethodGet, e.APIURL+"/guilds/"+guild.ID.String()+"/members/"+alice.ID.String(), nil)
	require.NoError(t, err)
	raw.Header.Set("Authorization", "Bot "+e.App.BotToken)
	res, err := http.DefaultClient.Do(raw)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	_, err = fmt.Fprintln(bot.in, bob.ID.String())
	require.NoError(t, err)
	var limited struct {
		Member  string `json:"member"`
		Guild   string `json:"guild"`
		Answers []struct {
			Status     int     `json:"status"`
			At         int64   `json:"at"` // Unix milliseconds
			RetryAfter *string `json:"retry_after"`
			ResetAfter *string `json:"reset_after"`
		} `json:"answers"`
	}
	next("limited", &limited)
	assert.Equal(t, "bob", limited.Member)
	assert.Equal(t, guild.ID.String(), limited.Guild)
	require.Len(t, limited.Answers, 2, "a 429, then the retry: %+v", limited.Answers)
	first, retry := limited.Answers[0], limited.Answers[1]
	assert.Equal(t, http.StatusTooManyRequests, first.Status)
	assert.Equal(t, http.StatusOK, retry.Status)
	require.NotNil(t, first.RetryAfter, "the 429 says when to retry")
	require.NotNil(t, first.ResetAfter, "and when the bucket resets")
	reset, err := strconv.ParseFloat(*first.ResetAfter, 64)
	require.NoError(t, err)
	// discord.js waits until the bucket resets (at least X-RateLimit-Reset-After, which is at
	// most Retry-After) before it retries.
	assert.GreaterOrEqual(t, time.Duration(retry.At-first.At)*time.Millisecond, time.Duration(reset*float64(time.Second)),
		"it waited for the bucket's reset")
	require.NoError(t, bot.cmd.Wait(), "its log:\n%s", botLog())
}

// everyonePermissions reads the @everyone role's permissions as the service serializes them.
func everyonePermissions(t *testing.T, e *servertest.Env, guildID string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.APIURL+"/guilds/"+guildID+"/roles", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+e.App.BotToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var roles []struct {
		Name        string `json:"name"`
		Permissions string `json:"permissions"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&roles))
	for _, r := range roles {
		if r.Name == "@everyone" {
			return r.Permissions
		}
	}
	require.FailNow(t, "no @everyone role")
	return ""
}
