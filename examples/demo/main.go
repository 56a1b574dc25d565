// Command demo is what `make demo` runs: it starts sdkpp-server on its default address in dev
// mode and a private PulseAudio, then runs a sample game for two players at once: they link their
// accounts, go online, meet in a lobby, chat, and talk in the lobby's voice call. -sample picks the
// sample: cpp (examples/cpp, the default), c (examples/c) or csharp (examples/csharp, with Mono);
// a comma-separated list gives each player theirs in turn (c,csharp: alice plays the C sample, bob
// the C# one). Each player
// has two null sinks of their own: "mic-<player>", into which the demo plays that player's recorded
// speech in a loop (the game captures its monitor as the microphone), and "ear-<player>", the
// game's speaker. It prints a readable transcript, each line marked with its player.
//
// With -cluster (make demo CLUSTER=1) it starts a three-node cluster instead of one server
// (build/scripts/cluster.sh: PostgreSQL, NATS, three nodes, HAProxy on the address) and connects
// each player to a different node, so that everything the players see of each other, their
// voice call included, crosses nodes.
//
//	go run ./examples/demo -bin build [-sample cpp|c|csharp] [-cluster]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sdkpp/internal/pulseserver"
	"sdkpp/wire"
)

// credentials is the part of the dev credentials file the demo reads.
type credentials struct {
	APIBase      string `json:"api_base"`
	WebBase      string `json:"web_base"`
	Applications []struct {
		ID   json.Number `json:"id"`
		Name string      `json:"name"`
	} `json:"applications"`
	Users []struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"users"`
}

func main() {
	bin := flag.String("bin", "build", "directory of sdkpp-server, sdkpp-browser, libsdkpp.so and the samples under demo/")
	addr := flag.String("addr", wire.DefaultAddr, "address of the service")
	speech := flag.String("speech", "audio/internal/speech/testdata", "directory of <player>.wav, each player's recorded speech")
	sample := flag.String("sample", "cpp", "the sample game: cpp, c or csharp; a comma-separated list gives each player theirs")
	cluster := flag.Bool("cluster", false, "run a three-node cluster (build/scripts/cluster.sh) and put each player on a different node")
	flag.Parse()
	samples := strings.Split(*sample, ",")
	for _, s := range samples {
		if _, ok := sampleCommands[s]; !ok {
			fmt.Fprintf(os.Stderr, "demo: unknown sample %q (want cpp, c or csharp)\n", s)
			os.Exit(2)
		}
	}
	if err := run(*bin, *addr, *speech, samples, *cluster); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// sampleCommands gives the command line of each sample game, built by the Makefile under bin/demo.
var sampleCommands = map[string]func(bin string) []string{
	"cpp": func(bin string) []string { return []string{filepath.Join(bin, "demo", "sample_game")} },
	"c":   func(bin string) []string { return []string{filepath.Join(bin, "demo", "sample_game_c")} },
	"csharp": func(bin string) []string {
		return []string{"mono", filepath.Join(bin, "demo", "csharp", "SampleGame.exe")}
	},
}

func run(bin, addr, speech string, samples []string, cluster bool) error {
	work, err := os.MkdirTemp("", "sdkpp-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	credsFile := filepath.Join(work, "credentials.json")

	var server *exec.Cmd
	if cluster {
		server, credsFile, err = startCluster(bin, addr)
	} else {
		say("starting sdkpp-server (dev mode, in-memory storage) on %s", addr)
		server = exec.Command(filepath.Join(bin, "sdkpp-server"), "-dev", "-addr", addr, "-dev-credentials", credsFile, "-log-level", "warn")
		server.Stdout, server.Stderr = os.Stdout, os.Stderr
		err = server.Start()
	}
	if err != nil {
		return fmt.Errorf("start the service: %w", err)
	}
	exited := make(chan struct{}) // closed when the service's process has ended
	go func() {                   // ends with the process, which the deferred stop below ends
		server.Wait()
		close(exited)
	}()
	defer func() {
		server.Process.Signal(syscall.SIGTERM)
		<-exited
		say("service stopped")
	}()
	ready := 30 * time.Second
	if cluster {
		ready = 3 * time.Minute // PostgreSQL, NATS and three nodes, one after the other
	}
	creds, err := waitReady(credsFile, exited, ready)
	if err != nil {
		return err
	}
	if cluster { // the nodes start one after the other, then the balancer in front of them
		if err := waitURL("http://"+addr+"/readyz", ready); err != nil {
			return err
		}
	}
	if len(creds.Applications) == 0 || len(creds.Users) < 2 {
		return errors.New("the dev credentials have no application or fewer than two users")
	}
	app := creds.Applications[0]
	if cluster {
		say("cluster ready: balancer http://%s, application %q (%s)", addr, app.Name, app.ID)
	} else {
		say("service ready: API %s, consent pages %s, application %q (%s)", creds.APIBase, creds.WebBase, app.Name, app.ID)
	}

	players := creds.Users[:2]
	var sinks []string
	for _, u := range players {
		sinks = append(sinks, "mic-"+u.Username, "ear-"+u.Username)
	}
	pulse, err := pulseserver.Start(sinks...)
	if err != nil {
		return fmt.Errorf("start the private sound server: %w", err)
	}
	defer pulse.Close()
	say("private sound server ready: sinks %s", strings.Join(sinks, ", "))
	ctx, stopSpeech := context.WithCancel(context.Background())
	var speaking sync.WaitGroup
	defer func() { stopSpeech(); speaking.Wait() }()
	for _, u := range players {
		file := filepath.Join(speech, u.Username+".wav")
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("speech for %s: %w", u.Username, err)
		}
		speaking.Add(1)
		go func(sink string) {
			defer speaking.Done()
			playLoop(ctx, pulse, sink, file)
		}("mic-" + u.Username)
	}

	fmt.Println()
	errs := make(chan error, len(players))
	var mu sync.Mutex // one transcript line at a time
	for i, u := range players {
		sample := samples[i%len(samples)]
		apiBase, webBase := creds.APIBase, creds.WebBase
		if cluster {
			if webBase, err = nodeURL(addr, i); err != nil {
				return err
			}
			apiBase = webBase + strings.TrimPrefix(creds.APIBase, strings.TrimRight(creds.WebBase, "/"))
			say("player %s starts the sample game (%s) on node %d, %s", u.Username, sample, i+1, webBase)
		} else {
			say("player %s starts the sample game (%s)", u.Username, sample)
		}
		argv := sampleCommands[sample](bin)
		game := exec.Command(argv[0], argv[1:]...)
		// The game finds its devices by the names the sound server shows (a null sink's monitor
		// is "Monitor of <sink>").
		// The C# sample's binding loads libsdkpp.so by name: from bin, as the others do by rpath.
		libPath := bin
		if p := os.Getenv("LD_LIBRARY_PATH"); p != "" {
			libPath += string(os.PathListSeparator) + p
		}
		game.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libPath, "PULSE_SERVER="+pulse.Address,
			"SDKPP_MICROPHONE=Monitor of mic-"+u.Username, "SDKPP_SPEAKER=ear-"+u.Username,
			"SDKPP_API_BASE="+apiBase, "SDKPP_WEB_BASE="+webBase, "SDKPP_APP_ID="+app.ID.String(),
			"SDKPP_PLAYER="+u.Username, "SDKPP_PASSWORD="+u.Password, fmt.Sprintf("SDKPP_PLAYERS=%d", len(players)),
			"SDKPP_BROWSER="+filepath.Join(bin, "sdkpp-browser"))
		out, err := game.StdoutPipe()
		if err != nil {
			return err
		}
		game.Stderr = os.Stderr
		if err := game.Start(); err != nil {
			return fmt.Errorf("start the sample game: %w", err)
		}
		go func(name string) {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				mu.Lock()
				fmt.Printf("  %-6s| %s\n", name, sc.Text())
				mu.Unlock()
			}
			if err := game.Wait(); err != nil {
				errs <- fmt.Errorf("the sample game for %s failed: %w", name, err)
				return
			}
			errs <- nil
		}(u.Username)
	}
	for range players {
		if err := <-errs; err != nil {
			return err
		}
	}
	fmt.Println()
	say("both players linked their accounts, became friends, saw each other's rich presence, met in a lobby, chatted and talked in its voice call")
	if cluster {
		say("each on a node of their own: everything they saw of each other crossed nodes, through PostgreSQL and NATS, and the call's one relay")
	}
	return nil
}

// clusterDir is where build/scripts/cluster.sh keeps its data, logs and dev credentials.
const clusterDir = "build/cluster"

// startCluster starts build/scripts/cluster.sh with its balancer on addr and each node naming
// itself in its URLs (so that a player stays on the node it starts on), its output shown
// marked "cluster"; it returns the command and the dev credentials file the nodes write.
func startCluster(bin, addr string) (*exec.Cmd, string, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("address %q: %w", addr, err)
	}
	creds := filepath.Join(clusterDir, "credentials.json")
	if err := os.Remove(creds); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	say("starting a three-node cluster (build/scripts/cluster.sh): PostgreSQL, NATS, three sdkpp-server nodes and HAProxy on %s; logs under %s", addr, clusterDir)
	cmd := exec.Command("bash", "build/scripts/cluster.sh", bin, port)
	cmd.Env = append(os.Environ(), "SDKPP_CLUSTER_NODE_URLS=1")
	cmd.Stdout = &clusterLines{}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	return cmd, creds, nil
}

// waitURL waits up to within until url answers 200.
func waitURL(url string, within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("%s did not answer 200 within %s", url, within)
}

// clusterLines shows the cluster script's own lines ("cluster: ..."), marked "cluster"; exec's
// copying goroutine writes it, and Wait waits for that.
type clusterLines struct{ pending []byte }

func (w *clusterLines) Write(p []byte) (int, error) {
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line, ok := strings.CutPrefix(string(w.pending[:i]), "cluster: "); ok {
			fmt.Printf("  %-6s| %s\n", "cluster", line)
		}
		w.pending = w.pending[i+1:]
	}
}

// nodeURL is the base URL of the cluster's node i+1, whose port follows the balancer's (addr).
func nodeURL(addr string, i int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", addr, err)
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(p+1+i)), nil
}

// playLoop plays file into sink again and again until ctx ends.
func playLoop(ctx context.Context, pulse *pulseserver.Server, sink, file string) {
	for ctx.Err() == nil {
		cmd := exec.CommandContext(ctx, "paplay", "--device="+sink, file)
		cmd.Env = pulse.Env()
		if out, err := cmd.CombinedOutput(); err != nil && ctx.Err() == nil {
			say("paplay into %s failed: %v %s", sink, err, strings.TrimSpace(string(out)))
			return
		}
	}
}

// waitReady waits up to within for the credentials file and a healthy service, unless the
// service's process exits (exited closes).
func waitReady(file string, exited <-chan struct{}, within time.Duration) (*credentials, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for ctx.Err() == nil {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			var c credentials
			if err := json.Unmarshal(b, &c); err == nil && c.WebBase != "" {
				if resp, err := http.Get(strings.TrimRight(c.WebBase, "/") + "/healthz"); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						return &c, nil
					}
				}
			}
		}
		select {
		case <-exited:
			return nil, errors.New("the service exited")
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("the service did not become ready within %s (is the address in use?)", within)
}

func say(format string, args ...any) {
	fmt.Printf("demo: "+format+"\n", args...)
}
