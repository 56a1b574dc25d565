// Command quiet measures what a quiet voice call costs a game: the CPU a client process uses in
// a 60 fps game loop while it sits alone in a call with nobody speaking, against the same loop
// with no SDK at all (the bare loop) and with a client that is connected but in no call.
//
// Each figure is one child process, a native game (bench/quiet_game.c): a C program linking
// libsdkpp.so whose loop sleeps to each frame's deadline with clock_nanosleep (absolute, on the
// monotonic clock) and calls Sdkpp_RunCallbacks once a frame, as a game does. It reaches the
// scenario's state through the C ABI, lets a second settle, runs the loop for -seconds and reports
// the CPU time it used (user and system, every thread of the process: the engine's, the sound
// system client's, the Go runtime's) per second of wall time. The bare loop is the same program
// built without the SDK (a process that only loads the library already runs the Go runtime's
// threads). The service runs in this parent process, which hands each child a player's token and
// a lobby secret; the sound system is a private PulseAudio with two null sinks (a real device
// path): the engine plays into one, room, and captures the monitor of the other, mic, into which
// nothing plays, so the microphone is silent and, as a real one, a device of its own. Capturing
// room's own monitor (the rig before) measured a cost of the rig, not of the engine: a monitor
// runs at the latency its sink's streams ask for, and the speaker's stream, even stopped, held
// it at 2.5 ms fragments, four wakeups of the sound system's client thread for each of the
// capture's 10 ms periods.
//
// Scenarios: bare (the loop alone), connected (a client connected, in no call), ptt (in a call
// alone, push-to-talk released), vad (in a call alone, voice activity mode, silence at the
// microphone). The machine is shared: the scenarios take turns, -turns times, and the median of
// each is printed.
//
// What a quiet call costs is mostly the sound system's client threads, which wake every period
// of a running device. With push-to-talk released and nothing playing the engine stops both
// devices; with voice activity the microphone's runs and every frame is cleaned and measured,
// and the speaker's stops once nothing has played for a second. No Go code runs on those
// threads (the data callbacks are C): a Go callback there left a P in a system call for the
// runtime's sysmon to retake every period, after which sysmon polled every 20 us, which perf
// showed as about half of the cost before. A loop of Go timers (the child was a Go program
// before) wakes sysmon the same way whenever a timer is late, a cost of the harness a native
// game does not pay.
//
// Run by bench/run.sh (make bench), which builds the two games. -cpuprofile DIR runs each child
// under perf record (call graphs) and writes its profile there: the child is C, so there is no
// pprof profile, and perf sees the C threads pprof never did; the figures of a profiled run
// include perf's sampling.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sdkpp/bench/internal/players"
	"sdkpp/internal/pulseserver"
	"sdkpp/server"
	"sdkpp/server/ratelimit"
)

// loopSettings describes the children's loop, printed beside the figures.
const loopSettings = "a C loop: clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to each 16.667 ms frame, " +
	"Sdkpp_RunCallbacks once a frame (libsdkpp.so, the library's stereo engine)"

// Bounds the issue sets, printed beside the figures.
const (
	pttBound = 2.0 // percent of a core, push-to-talk released
	vadBound = 3.0 // percent of a core, voice activity with silence at the microphone
)

var scenarios = []string{"bare", "connected", "ptt", "vad"}

func main() {
	game := flag.String("game", "", "the game linking libsdkpp.so (bench/quiet_game.c); default quiet_game beside this program")
	bare := flag.String("bare", "", "the same game built without the SDK; default quiet_bare beside this program")
	only := flag.String("scenarios", strings.Join(scenarios, ","), "the scenarios to run, comma-separated")
	seconds := flag.Float64("seconds", 6, "seconds each turn measures, after the state is reached")
	turns := flag.Int("turns", 3, "turns of every scenario")
	profileDir := flag.String("cpuprofile", "", "run each child under perf record and write its profile into this directory")
	flag.Parse()
	err := run(config{game: *game, bare: *bare, scenarios: strings.Split(*only, ","),
		seconds: *seconds, turns: *turns, profileDir: *profileDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/quiet:", err)
		os.Exit(1)
	}
}

// config is what run needs from the flags.
type config struct {
	game, bare string   // the two children's executables
	scenarios  []string // the scenarios to run (in the order of scenarios)
	seconds    float64  // measured seconds a turn
	turns      int
	profileDir string // where perf writes each child's profile, if set
}

// run starts the sound server and the service, runs every scenario's turns and prints the
// medians.
func run(cfg config) error {
	for _, sc := range cfg.scenarios {
		if !slices.Contains(scenarios, sc) {
			return fmt.Errorf("no scenario %q (there are %s)", sc, strings.Join(scenarios, ", "))
		}
	}
	if cfg.game == "" || cfg.bare == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the games beside this program: %w", err)
		}
		if cfg.game == "" {
			cfg.game = filepath.Join(filepath.Dir(self), "quiet_game")
		}
		if cfg.bare == "" {
			cfg.bare = filepath.Join(filepath.Dir(self), "quiet_bare")
		}
	}
	snd, err := pulseserver.Start("room", micSink)
	if err != nil {
		return err
	}
	defer snd.Close()
	if _, err := snd.Pactl("set-default-source", pulseserver.Monitor(micSink)); err != nil {
		return err
	}
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Dev: true,
		RateLimits: ratelimit.Config{Disabled: true},
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		return err
	}
	defer srv.Close()
	base := srv.URL()
	botToken := srv.DevCredentials().Applications[0].BotToken
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			return err
		}
	}

	shares := map[string][]float64{}
	for turn := range cfg.turns {
		for _, sc := range scenarios {
			if !slices.Contains(cfg.scenarios, sc) {
				continue
			}
			// A player of its own each turn: the service keeps a call's member a moment after it
			// leaves, and a new player starts its call alone.
			token, err := players.BotToken(base, botToken, fmt.Sprintf("quiet-%s-%d", sc, turn))
			if err != nil {
				return err
			}
			exe := cfg.game
			if sc == "bare" {
				exe = cfg.bare
			}
			args := []string{exe, sc, fmt.Sprint(cfg.seconds)}
			if cfg.profileDir != "" {
				out := filepath.Join(cfg.profileDir, fmt.Sprintf("%s-%d.perf.data", sc, turn))
				args = append([]string{"perf", "record", "-q", "-g", "-o", out, "--"}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), snd.Env()...)
			cmd.Env = append(cmd.Env,
				"SDKPP_QUIET_API_BASE="+base+server.APIVersionPath, "SDKPP_QUIET_WEB_BASE="+base,
				"SDKPP_QUIET_TOKEN="+token, fmt.Sprintf("SDKPP_QUIET_LOBBY=quiet-%d", turn))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("%s: %w", sc, err)
			}
			exited := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(exited) }()
			var rigErr error
			if sc == "vad" { // the microphone it runs must be mic's monitor, not room's
				rigErr = waitCapturing(snd, pulseserver.Monitor(micSink), exited)
			}
			<-exited
			out := stdout.Bytes()
			if waitErr != nil {
				return fmt.Errorf("%s: %w: %s", sc, waitErr, strings.TrimSpace(stderr.String()))
			}
			if rigErr != nil {
				return fmt.Errorf("%s: %w", sc, rigErr)
			}
			var r childResult
			if err := json.Unmarshal(out, &r); err != nil {
				return fmt.Errorf("%s: %w: %q", sc, err, out)
			}
			shares[sc] = append(shares[sc], r.Percent)
		}
	}
	fmt.Printf("60 fps game loop (%s), %.0f s a turn, %d turns each, medians (the machine is shared: figures are noisy)\n",
		loopSettings, cfg.seconds, cfg.turns)
	med := func(sc string) float64 { return median(shares[sc]) }
	lines := []struct{ sc, label, bound string }{
		{"bare", "bare loop, no SDK", ""},
		{"connected", "connected, in no call", ""},
		{"ptt", "alone in a call, push-to-talk released", fmt.Sprintf("; at most %.0f %%", pttBound)},
		{"vad", "alone in a call, voice activity, silent mic", fmt.Sprintf("; at most %.0f %%", vadBound)},
	}
	for _, l := range lines {
		if len(shares[l.sc]) > 0 {
			fmt.Printf("  %-43s %5.2f %% of a core  (turns %s%s)\n", l.label, med(l.sc), list(shares[l.sc]), l.bound)
		}
	}
	if len(shares["bare"]) > 0 && len(shares["ptt"]) > 0 && len(shares["vad"]) > 0 {
		fmt.Printf("the call over the bare loop: push-to-talk %+.2f points, voice activity %+.2f points\n",
			med("ptt")-med("bare"), med("vad")-med("bare"))
	}
	return nil
}

// childResult is what a child prints.
type childResult struct {
	Percent float64 `json:"percent"` // CPU time per wall time, in percent of one core
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func list(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}

// micSink is the null sink into which nothing plays: its monitor is the rig's silent microphone,
// a device of its own as a real microphone is (the package's doc says why not room's monitor).
const micSink = "mic"

// waitCapturing waits until the sound server has a capture stream and checks that it records
// from source, the rig's silent microphone: a default source that a library ignored would
// measure another device's cost. It gives up when exited closes first.
func waitCapturing(snd *pulseserver.Server, source string, exited <-chan struct{}) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		outputs, err := snd.Pactl("list", "short", "source-outputs")
		if err != nil {
			return err
		}
		if f := strings.Fields(outputs); len(f) >= 2 { // index, source's index, ...
			sources, err := snd.Pactl("list", "short", "sources")
			if err != nil {
				return err
			}
			for _, line := range strings.Split(sources, "\n") {
				if g := strings.Fields(line); len(g) >= 2 && g[0] == f[1] {
					if g[1] != source {
						return fmt.Errorf("the game captures from %s, not the rig's microphone %s", g[1], source)
					}
					return nil
				}
			}
			return fmt.Errorf("the game captures from source %s, which pactl does not list: %q", f[1], sources)
		}
		select {
		case <-exited:
			return fmt.Errorf("the game never opened its microphone")
		case <-tick.C:
		}
	}
}
