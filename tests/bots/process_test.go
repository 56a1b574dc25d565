package bots

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// botProcess is a bot's program running: the lines of its stdout, its stdin, and its log
// (stderr, in a file), which a test reads only to explain a failure.
type botProcess struct {
	cmd     *exec.Cmd
	lines   *bufio.Scanner
	in      io.WriteCloser
	logPath string
}

// startBot runs name with args and the environment plus env, for at most 90 s; the test's end
// kills it if it still runs.
func startBot(t *testing.T, env []string, name string, args ...string) *botProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	p := &botProcess{cmd: exec.CommandContext(ctx, name, args...), logPath: filepath.Join(t.TempDir(), "bot.log")}
	p.cmd.Env = append(os.Environ(), env...)
	logFile, err := os.Create(p.logPath)
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	p.cmd.Stderr = logFile
	out, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	p.in, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	p.lines = bufio.NewScanner(out)
	return p
}

// log returns what the bot has logged so far.
func (p *botProcess) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// next returns the bot's next line of stdout; the test fails when there is none.
func (p *botProcess) next(t *testing.T, what string) []byte {
	t.Helper()
	require.True(t, p.lines.Scan(), "no %s from the bot; its log:\n%s", what, p.log())
	return p.lines.Bytes()
}

// step reads the bot's next line, a JSON object, into v; the test fails when the bot reported an
// error ({"error": ...}) instead.
func (p *botProcess) step(t *testing.T, what string, v any) {
	t.Helper()
	line := p.next(t, what+" line")
	var failed struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(line, &failed), "%s", line)
	require.Empty(t, failed.Error, "the bot failed; its log:\n%s", p.log())
	require.NoError(t, json.Unmarshal(line, v), "%s", line)
}

// dmAnswer is what a bot's message event gave it of a user's answer in a DM.
type dmAnswer struct {
	Content, Author, Channel string
	DM                       bool
	Guild                    *string
	MentionsBot              bool `json:"mentions_bot"`
}

// askInDM has the bot of p, which printed the DM channel it asked in, get alice's answer there
// ("<@bot> the harbour") through its library's message event.
func askInDM(t *testing.T, e *servertest.Env, p *botProcess, channel string) {
	t.Helper()
	aliceSays(t, e, channel, "<@"+e.App.BotUserID.String()+"> the harbour")
	var got dmAnswer
	p.step(t, "the answer", &got)
	assert.Equal(t, dmAnswer{Content: "<@" + e.App.BotUserID.String() + "> the harbour", Author: "alice", Channel: channel,
		DM: true, MentionsBot: true}, got)
	require.NoError(t, p.cmd.Wait(), "its log:\n%s", p.log())
	checkDMReply(t, e, channel)
}

// checkDMReply checks the DM channel's history as alice reads it: the bot's question, her
// answer, and the bot's reply to it ("noted", type 19, answering her message).
func checkDMReply(t *testing.T, e *servertest.Env, channel string) {
	t.Helper()
	token := e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	var history []wire.Message
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, e.APIURL+"/channels/"+channel+"/messages", nil, guildtest.Bearer(token)), &history)
	require.Len(t, history, 3)
	reply, answer := history[0], history[1]
	assert.Equal(t, "noted", reply.Content)
	assert.Equal(t, wire.MessageTypeReply, reply.Type)
	require.NotNil(t, reply.MessageReference)
	assert.Equal(t, answer.ID, reply.MessageReference.MessageID)
	require.NotNil(t, reply.ReferencedMessage.Message)
	assert.Equal(t, "alice", reply.ReferencedMessage.Message.Author.Username)
}
