// Command quiet measures what a quiet voice call costs a game: the CPU a client process uses in
// a 60 fps game loop while it sits alone in a call with nobody speaking, against the same loop
// with no SDK at all (the bare loop) and with a client that is connected but in no call.
//
// Each figure is one child process (this program again, with -child) that runs the loop for
// -seconds after the state is reached and reports the CPU time it used (user and system, every
// thread of the process: the engine's, the sound system client's, the runtime's) per second of
// wall time. The service runs in this parent process, the sound system is a private PulseAudio
// with a null sink (a real device path: the engine plays into the sink and captures its monitor,
// which is silent), and the loop calls RunCallbacks once a frame as a game does.
//
// Scenarios: bare (the loop alone), connected (a client connected, in no call), ptt (in a call
// alone, push-to-talk released), vad (in a call alone, voice activity mode, silence at the
// microphone). The machine is shared: the scenarios take turns, -turns times, and the median of
// each is printed.
//
// What a quiet call costs is mostly the sound system's client threads, which wake every 10 ms
// period of a running device. With push-to-talk released and nothing playing the engine stops the
// microphone's device, so only the speaker's runs; with voice activity both run and every frame
// is cleaned and measured. No Go code runs on those threads (the data callbacks are C): a Go
// callback there left a P in a system call for the runtime's sysmon to retake every period, after
// which sysmon polled every 20 us, which perf showed as about half of the cost before. perf, not
// pprof, sees this: it runs outside Go code.
//
// Run by bench/run.sh (make bench). -cpuprofile DIR writes each child's CPU profile there.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"sdkpp/audio/engine"
	"sdkpp/bench/internal/players"
	"sdkpp/core"
	"sdkpp/core/voice"
	"sdkpp/internal/pulseserver"
	"sdkpp/server"
	"sdkpp/server/ratelimit"
)

// frameTime is one frame of the game's 60 fps loop.
const frameTime = time.Second / 60

// Bounds the issue sets, printed beside the figures.
const (
	pttBound = 2.0 // percent of a core, push-to-talk released
	vadBound = 3.0 // percent of a core, voice activity with silence at the microphone
)

var scenarios = []string{"bare", "connected", "ptt", "vad"}

func main() {
	child := flag.String("child", "", "internal: run one scenario and print its CPU share")
	seconds := flag.Float64("seconds", 6, "seconds each turn measures, after the state is reached")
	turns := flag.Int("turns", 3, "turns of every scenario")
	profileDir := flag.String("cpuprofile", "", "write each child's CPU profile into this directory")
	only := flag.String("scenarios", strings.Join(scenarios, ","), "the scenarios to run, comma-separated")
	flag.Parse()
	var err error
	if *child != "" {
		err = runChild(*child, time.Duration(*seconds*float64(time.Second)), os.Getenv("SDKPP_QUIET_PROFILE"))
	} else {
		err = run(strings.Split(*only, ","), *seconds, *turns, *profileDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/quiet:", err)
		os.Exit(1)
	}
}

// run starts the sound server and the service, runs the turns of the scenarios named in run (in
// the order of scenarios) and prints the medians.
func run(only []string, seconds float64, turns int, profileDir string) error {
	for _, sc := range only {
		if !slices.Contains(scenarios, sc) {
			return fmt.Errorf("no scenario %q (there are %s)", sc, strings.Join(scenarios, ", "))
		}
	}
	snd, err := pulseserver.Start("room")
	if err != nil {
		return err
	}
	defer snd.Close()
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
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if profileDir != "" {
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return err
		}
	}

	shares := map[string][]float64{}
	for turn := range turns {
		for _, sc := range scenarios {
			if !slices.Contains(only, sc) {
				continue
			}
			// A player of its own each turn: the service keeps a call's member a moment after it
			// leaves, and a new player starts its call alone.
			token, err := players.BotToken(base, botToken, fmt.Sprintf("quiet-%s-%d", sc, turn))
			if err != nil {
				return err
			}
			cmd := exec.Command(self, "-child", sc, "-seconds", fmt.Sprint(seconds))
			cmd.Env = append(os.Environ(), snd.Env()...)
			cmd.Env = append(cmd.Env, "SDKPP_QUIET_BASE="+base, "SDKPP_QUIET_TOKEN="+token,
				fmt.Sprintf("SDKPP_QUIET_LOBBY=quiet-%d", turn))
			if profileDir != "" {
				cmd.Env = append(cmd.Env, "SDKPP_QUIET_PROFILE="+filepath.Join(profileDir, fmt.Sprintf("%s-%d.pprof", sc, turn)))
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("%s: %w: %s", sc, err, strings.TrimSpace(stderr.String()))
			}
			var r childResult
			if err := json.Unmarshal(out, &r); err != nil {
				return fmt.Errorf("%s: %w: %q", sc, err, out)
			}
			shares[sc] = append(shares[sc], r.Percent)
		}
	}
	med := func(sc string) float64 { return median(shares[sc]) }
	fmt.Printf("60 fps game loop, %.0f s a turn, %d turns each, medians (the machine is shared: figures are noisy)\n", seconds, turns)
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

// runChild reaches the scenario's state, then runs the game loop for d and prints its CPU share.
func runChild(sc string, d time.Duration, profile string) error {
	loop := func(until time.Time) {
		next := time.Now()
		for time.Now().Before(until) {
			if sc != "bare" {
				core.RunCallbacks()
			}
			next = next.Add(frameTime)
			time.Sleep(time.Until(next))
		}
	}
	if sc != "bare" {
		c, err := connect(sc)
		if err != nil {
			return err
		}
		defer c.Close()
		loop(time.Now().Add(time.Second)) // what follows the connection settles
	}
	var f *os.File
	if profile != "" {
		var err error
		if f, err = os.Create(profile); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	cpu0, t0 := cpuTime(), time.Now()
	loop(t0.Add(d))
	cpu1, t1 := cpuTime(), time.Now()
	if f != nil {
		pprof.StopCPUProfile()
		f.Close()
	}
	return json.NewEncoder(os.Stdout).Encode(childResult{Percent: 100 * (cpu1 - cpu0).Seconds() / t1.Sub(t0).Seconds()})
}

// connect makes the scenario's client: connected, and for ptt and vad alone in a call.
func connect(sc string) (*core.Client, error) {
	// The library's own engine factory (capi's): the platform's default sound system, which
	// PULSE_SERVER points at the private server.
	voice.SetEngineFactory(func(cfg voice.EngineConfig) (voice.Engine, error) {
		return engine.New(cfg, engine.Options{})
	})
	base := os.Getenv("SDKPP_QUIET_BASE")
	c := core.NewClientWithBases(base+server.APIVersionPath, base)
	c.UpdateToken(core.AuthorizationTokenTypeBearer, os.Getenv("SDKPP_QUIET_TOKEN"), core.Func(func(*core.ClientResult) {}))
	c.Connect()
	if !players.Pump(10*time.Second, func() bool { return c.GetStatus() == core.ClientStatusReady }) {
		c.Close()
		return nil, errors.New("the client did not connect")
	}
	if sc == "connected" {
		return c, nil
	}
	var res *core.ClientResult
	var lobby uint64
	c.CreateOrJoinLobby(os.Getenv("SDKPP_QUIET_LOBBY")+"-"+sc, core.Func(func(r *core.ClientResult, id uint64) { res, lobby = r, id }))
	if !players.Pump(10*time.Second, func() bool { return res != nil }) || !res.Successful() {
		c.Close()
		return nil, errors.New("could not join the lobby")
	}
	call := c.StartCall(lobby)
	if call == nil {
		c.Close()
		return nil, errors.New("StartCall refused")
	}
	if sc == "ptt" {
		call.SetAudioMode(core.AudioModeTypeMODE_PTT)
		call.SetPTTActive(false)
	} else {
		call.SetAudioMode(core.AudioModeTypeMODE_VAD)
	}
	if !players.Pump(20*time.Second, func() bool { return call.GetStatus() == core.CallStatusConnected }) {
		c.Close()
		return nil, errors.New("the call did not connect")
	}
	return c, nil
}

// cpuTime is the CPU time (user and system) the whole process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
