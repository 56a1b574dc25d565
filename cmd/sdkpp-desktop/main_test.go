package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/core/rpc"
)

func shortDir(t *testing.T) string {
	if runtime.GOOS == "windows" {
		// Named pipes have no directory. (And under Wine 8, Go 1.26's os.RemoveAll cannot
		// delete what t.TempDir holds: "unlinkat ...: Invalid function".)
		return ""
	}
	d := t.TempDir()
	if len(rpc.Path(d, "", 9)) < 100 {
		return d
	}
	d, err := os.MkdirTemp("", "ipc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// hang is how long a test waits for what takes milliseconds before it fails as hung.
const hang = 30 * time.Second

// start runs the program with args and returns its standard input and output lines.
func start(t *testing.T, args ...string) (io.WriteCloser, *bufio.Scanner, chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(args, inR, outW)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return inW, bufio.NewScanner(outR), done
}

func line(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	require.True(t, sc.Scan(), "no more output: %v", sc.Err())
	return sc.Text()
}

func TestStdinControl(t *testing.T) {
	dir := shortDir(t)
	in, out, done := start(t, "-dir", dir, "-index", "2", "-guild", "9=Nine")
	require.Equal(t, "listening "+rpc.Path(dir, "", 2), line(t, out), "first line")

	// Only a guard against a hang: the dial and the commands below share it, under Wine too
	// (make test-windows).
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	c, err := rpc.Dial(ctx, rpc.Config{ApplicationID: 42, Dir: dir})
	require.NoError(t, err)
	defer c.Close()
	got := make(chan struct{}, 1)
	_, err = c.SubscribeAuthorizeRequest(ctx, func() { got <- struct{}{} })
	require.NoError(t, err)
	g, err := c.GetGuild(ctx, "9")
	require.NoError(t, err, "GetGuild = %+v", g)
	require.Equal(t, "Nine", g.Name, "GetGuild = %+v", g)

	io.WriteString(in, "status\nauthorize-request\nbogus\nquit\n")
	for _, want := range []string{"connections=1 subscriptions=[AUTHORIZE_REQUEST=1]", "sent AUTHORIZE_REQUEST to 1", "error: unknown command", "bye"} {
		l := line(t, out)
		require.True(t, strings.HasPrefix(l, want), "got %q, want it to start with %q", l, want)
	}
	<-got
	require.NoError(t, <-done)
}

func TestHTTPControl(t *testing.T) {
	dir := shortDir(t)
	in, out, done := start(t, "-dir", dir, "-http", "127.0.0.1:0")
	line(t, out)
	url, ok := strings.CutPrefix(line(t, out), "control ")
	require.True(t, ok, "no control URL")
	in.Close() // with -http, the end of standard input does not stop it

	post := func(body string, origin string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("status\nkick\n", "")
	require.Equal(t, 200, code, "POST = %d %q", code, body)
	require.Equal(t, "connections=0 subscriptions=[]\ndropped 0\n", body, "POST = %d %q", code, body)
	code, _ = post("quit", "http://example.test")
	require.Equal(t, http.StatusForbidden, code, "a browser page's POST got %d", code)
	post("quit", "")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(hang):
		require.FailNow(t, "quit did not stop it")
	}
	require.Error(t, run([]string{"-http", "0.0.0.0:0", "-dir", dir}, strings.NewReader(""), io.Discard), "accepted a non-loopback control address")
}
