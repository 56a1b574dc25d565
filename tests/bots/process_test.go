package bots

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
