// Command sdkpp-desktop is a stand-in for the platform's desktop client: the IPC peer of the
// SDK's local RPC transport, for tests and the demo. It listens on the endpoint the SDK looks
// for (a unix socket, or a named pipe on Windows), answers the handshake with READY, answers
// SUBSCRIBE, UNSUBSCRIBE, GET_GUILD and GET_VOICE_SETTINGS (its voice settings change with the
// "voice" command), and sends events when told to.
//
// It is driven by line commands (run "help" for the list) read from standard input and, with
// -http, posted to http://ADDR/control (one command a line in the body; loopback addresses only;
// requests carrying an Origin header, as a web page's would, are refused). It prints
// "listening PATH" once ready, then "control URL" with -http, then each command's reply (one
// line, "error: ..." on failure; help's is a list). It stops at "quit", SIGINT or SIGTERM, and
// at the end of standard input unless -http is given.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"sdkpp/core/rpc"
	"sdkpp/core/rpc/peer"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sdkpp-desktop:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("sdkpp-desktop", flag.ContinueOnError)
	var cfg peer.Config
	fs.StringVar(&cfg.Dir, "dir", "", "socket directory (default $XDG_RUNTIME_DIR, else $TMPDIR, else /tmp; ignored on Windows)")
	fs.StringVar(&cfg.Prefix, "prefix", rpc.DefaultPrefix, "endpoint name before its index")
	fs.IntVar(&cfg.Index, "index", 0, "endpoint index 0..9, or -1 for the first free one")
	user := peer.DefaultUser
	fs.StringVar(&user.ID, "user-id", user.ID, "id of the user announced in READY")
	fs.StringVar(&user.Username, "username", user.Username, "username announced in READY")
	fs.StringVar(&user.GlobalName, "global-name", user.GlobalName, "display name announced in READY")
	fs.StringVar(&cfg.ServerConfig.APIEndpoint, "api-endpoint", "//127.0.0.1:7710/api", "api_endpoint announced in READY")
	fs.StringVar(&cfg.ServerConfig.Environment, "environment", "development", "environment announced in READY")
	fs.Func("guild", "a known guild as ID=NAME (repeatable)", func(v string) error {
		id, name, ok := strings.Cut(v, "=")
		if !ok || id == "" {
			return errors.New("want ID=NAME")
		}
		cfg.Guilds = append(cfg.Guilds, rpc.Guild{ID: id, Name: name})
		return nil
	})
	httpAddr := fs.String("http", "", "also take commands at http://ADDR/control (a loopback address, e.g. 127.0.0.1:0)")
	verbose := fs.Bool("v", false, "log connections and protocol errors to standard error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	cfg.User = user
	if *verbose {
		l := log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds)
		cfg.Logf = l.Printf
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	p, err := peer.Listen(cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	out := &lockedWriter{w: stdout}
	out.println("listening " + p.Path())

	quit := make(chan struct{})
	var quitOnce sync.Once
	// exec runs one line and returns its reply; after "quit", stop is to be called once the
	// reply is out.
	exec := func(line string) (reply string, stop func()) {
		reply, err := p.Exec(line)
		if errors.Is(err, peer.ErrQuit) {
			return reply, func() { quitOnce.Do(func() { close(quit) }) }
		}
		if err != nil {
			reply = "error: " + err.Error()
		}
		return reply, func() {}
	}

	if *httpAddr != "" {
		srv, url, err := serveHTTP(*httpAddr, exec)
		if err != nil {
			return err
		}
		defer func() {
			// Let the request that said quit have its answer.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			srv.Shutdown(ctx)
		}()
		out.println("control " + url)
	}

	stdinDone := make(chan struct{})
	go func() {
		defer close(stdinDone)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			reply, stop := exec(sc.Text())
			out.println(reply)
			stop()
		}
	}()
	stdinEnd := stdinDone
	if *httpAddr != "" {
		stdinEnd = nil // the HTTP control keeps it running
	}
	select {
	case <-ctx.Done():
	case <-quit:
	case <-stdinEnd:
	}
	return nil
}

// serveHTTP serves POST /control on a loopback address.
func serveHTTP(addr string, exec func(string) (string, func())) (*http.Server, string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, "", fmt.Errorf("-http %s: only loopback addresses", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /control", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "not from a browser page", http.StatusForbidden)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, line := range strings.Split(string(body), "\n") {
			if strings.TrimSpace(line) != "" {
				reply, stop := exec(line)
				fmt.Fprintln(w, reply)
				defer stop()
			}
		}
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String() + "/control", nil
}

// lockedWriter serialises lines from the stdin loop and the HTTP handlers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) println(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
}
