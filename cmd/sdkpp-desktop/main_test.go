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
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

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
	if !sc.Scan() {
		t.Fatalf("no more output: %v", sc.Err())
	}
	return sc.Text()
}

func TestStdinControl(t *testing.T) {
	dir := shortDir(t)
	in, out, done := start(t, "-dir", dir, "-index", "2", "-guild", "9=Nine")
	if got := line(t, out); got != "listening "+rpc.Path(dir, "", 2) {
		t.Fatalf("first line %q", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := rpc.Dial(ctx, rpc.Config{ApplicationID: 42, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan struct{}, 1)
	if _, err := c.SubscribeAuthorizeRequest(ctx, func() { got <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	if g, err := c.GetGuild(ctx, "9"); err != nil || g.Name != "Nine" {
		t.Fatalf("GetGuild = %+v, %v", g, err)
	}

	io.WriteString(in, "status\nauthorize-request\nbogus\nquit\n")
	for _, want := range []string{"connections=1 subscriptions=[AUTHORIZE_REQUEST=1]", "sent AUTHORIZE_REQUEST to 1", "error: unknown command", "bye"} {
		if l := line(t, out); !strings.HasPrefix(l, want) {
			t.Fatalf("got %q, want %q", l, want)
		}
	}
	<-got
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestHTTPControl(t *testing.T) {
	dir := shortDir(t)
	in, out, done := start(t, "-dir", dir, "-http", "127.0.0.1:0")
	line(t, out)
	url, ok := strings.CutPrefix(line(t, out), "control ")
	if !ok {
		t.Fatal("no control URL")
	}
	in.Close() // with -http, the end of standard input does not stop it

	post := func(body string, origin string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("status\nkick\n", ""); code != 200 || body != "connections=0 subscriptions=[]\ndropped 0\n" {
		t.Fatalf("POST = %d %q", code, body)
	}
	if code, _ := post("quit", "http://example.test"); code != http.StatusForbidden {
		t.Fatalf("a browser page's POST got %d", code)
	}
	post("quit", "")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("quit did not stop it")
	}
	if err := run([]string{"-http", "0.0.0.0:0", "-dir", dir}, strings.NewReader(""), io.Discard); err == nil {
		t.Fatal("accepted a non-loopback control address")
	}
}
