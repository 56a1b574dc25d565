// Package pulsetest starts a private PulseAudio server for a test: its socket in a temporary
// directory, one or more null sinks at 48 kHz mono with rewinds off (miniaudio stalls on a null
// sink that rewinds), and PULSE_SERVER pointing the test process at it. The server stops when the
// test ends.
//
// Without a pulseaudio binary the test is skipped, or fails when SDKPP_REQUIRE_AUDIO=1 (as
// `make test` sets it), so that a machine missing the package cannot pass silently.
package pulsetest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing PulseAudio from a skip into a
// failure.
const RequireEnv = "SDKPP_REQUIRE_AUDIO"

// DefaultSink is the sink Start creates when it is given no names.
const DefaultSink = "vsink"

// startTimeout bounds how long Start waits for the server to answer.
const startTimeout = 15 * time.Second

// Server is a running private PulseAudio server.
type Server struct {
	// Dir is the server's private directory (socket, runtime and config files).
	Dir string
	// Address is the value PULSE_SERVER has for this server ("unix:<socket>").
	Address string
	// Sinks are the null sinks made at start, the first one the default sink.
	Sinks []string

	cmd *exec.Cmd
	env []string
}

// Start runs a private PulseAudio with a null sink for each name (DefaultSink when none is given),
// sets PULSE_SERVER for the rest of the test, and stops the server in t.Cleanup. Each sink's
// description, the device name clients see, is the sink's name. Start uses t.Setenv, so the test
// cannot be parallel.
func Start(t testing.TB, sinks ...string) *Server {
	t.Helper()
	bin := need(t, "pulseaudio")
	need(t, "pactl")
	if len(sinks) == 0 {
		sinks = []string{DefaultSink}
	}

	dir, err := os.MkdirTemp("", "sdkpp-pulse-")
	if err != nil {
		t.Fatalf("pulsetest: temp dir: %v", err)
	}
	// A unix socket path is limited to about 100 bytes; the temp dir keeps it short.
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "pulse.sock")
	s := &Server{Dir: dir, Address: "unix:" + sock, Sinks: sinks}
	// The server and pactl keep their cookie, pid file and state in dir, not in the user's home,
	// so that servers of concurrent tests never meet.
	s.env = append(os.Environ(),
		"HOME="+dir, "XDG_RUNTIME_DIR="+dir, "XDG_CONFIG_HOME="+dir, "XDG_STATE_HOME="+dir,
		"PULSE_SERVER="+s.Address)

	args := []string{
		"-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
		"--log-target=stderr",
		"-L", "module-native-protocol-unix auth-anonymous=1 socket=" + sock,
	}
	for _, name := range sinks {
		args = append(args, "-L", nullSinkArgs(name))
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = s.env
	cmd.Stdout = &log
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("pulsetest: start pulseaudio: %v", err)
	}
	s.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { s.stop(t, exited, &log) })

	deadline := time.Now().Add(startTimeout)
	for {
		if _, err := s.pactl("info"); err == nil {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("pulsetest: pulseaudio exited at start: %v\n%s", err, log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pulsetest: pulseaudio did not answer within %v\n%s", startTimeout, log.String())
		}
	}
	if _, err := s.pactl("set-default-sink", sinks[0]); err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	if _, err := s.pactl("set-default-source", Monitor(sinks[0])); err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	t.Setenv("PULSE_SERVER", s.Address)
	return s
}

// Monitor returns the name of the source that captures what is played into sink.
func Monitor(sink string) string { return sink + ".monitor" }

// LoadNullSink adds a null sink like the ones Start makes while the server runs, and returns the
// module index that UnloadModule takes to remove it again.
func (s *Server) LoadNullSink(t testing.TB, name string) int {
	t.Helper()
	out, err := s.pactl(append([]string{"load-module"}, strings.Fields(nullSinkArgs(name))...)...)
	if err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	idx, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("pulsetest: load-module printed %q: %v", out, err)
	}
	return idx
}

// UnloadModule removes a module, such as a sink LoadNullSink added.
func (s *Server) UnloadModule(t testing.TB, index int) {
	t.Helper()
	if _, err := s.pactl("unload-module", strconv.Itoa(index)); err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
}

// Pactl runs pactl against the server and returns its standard output.
func (s *Server) Pactl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := s.pactl(args...)
	if err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	return out
}

func (s *Server) pactl(args ...string) (string, error) {
	cmd := exec.Command("pactl", args...)
	cmd.Env = s.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pactl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// stop ends the server: SIGTERM, then SIGKILL if it lingers.
func (s *Server) stop(t testing.TB, exited chan error, log *bytes.Buffer) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-exited
		t.Logf("pulsetest: pulseaudio ignored SIGTERM and was killed\n%s", log.String())
	}
}

// nullSinkArgs is the module-null-sink line for a sink named name: 48 kHz mono, no rewinds, its
// description the name itself.
func nullSinkArgs(name string) string {
	return "module-null-sink sink_name=" + name + " rate=48000 channels=1 norewinds=1 sink_properties=device.description=" + name
}

// need returns the path of a program, skipping the test without it (failing under RequireEnv).
func need(t testing.TB, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("pulsetest: %s not found (%v); install Debian package pulseaudio (build/scripts/deps.sh test)", program, errors.Unwrap(err))
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + "; " + RequireEnv + "=1 requires it")
	}
	t.Skip(msg)
	return ""
}
