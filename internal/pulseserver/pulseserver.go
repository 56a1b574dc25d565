// Package pulseserver runs a private PulseAudio server: its socket, cookie and state in a
// directory of its own, one or more null sinks at 48 kHz mono with rewinds off (miniaudio stalls
// on a null sink that rewinds), so that tests and the demo play and capture real audio without
// touching the user's sound server.
package pulseserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultSink is the sink Start creates when it is given no names.
const DefaultSink = "vsink"

// startTimeout bounds how long Start waits for the server to answer.
const startTimeout = 15 * time.Second

// ErrMissing reports that a program the server needs (pulseaudio or pactl) is not installed.
var ErrMissing = errors.New("pulseserver: program not found; install Debian packages pulseaudio and pulseaudio-utils (build/scripts/deps.sh test)")

// Server is a running private PulseAudio server. Close stops it and removes its directory.
type Server struct {
	// Dir is the server's private directory (socket, runtime and config files).
	Dir string
	// Address is the value PULSE_SERVER has for this server ("unix:<socket>").
	Address string
	// Sinks are the null sinks made at start, the first one the default sink.
	Sinks []string

	cmd    *exec.Cmd
	env    []string
	exited chan error
	log    *lockedBuffer
	close  sync.Once
	err    error // what Close reports
}

// Start runs a private PulseAudio with a null sink for each name (DefaultSink when none is given),
// the first sink the default sink and its monitor the default source. Each sink's description,
// the device name clients see, is the sink's name. Programs reach it through Env or Address.
func Start(sinks ...string) (*Server, error) {
	bin, err := exec.LookPath("pulseaudio")
	if err != nil {
		return nil, fmt.Errorf("%w: pulseaudio", ErrMissing)
	}
	if _, err := exec.LookPath("pactl"); err != nil {
		return nil, fmt.Errorf("%w: pactl", ErrMissing)
	}
	if len(sinks) == 0 {
		sinks = []string{DefaultSink}
	}
	// A unix socket path is limited to about 100 bytes; the temp dir keeps it short.
	dir, err := os.MkdirTemp("", "sdkpp-pulse-")
	if err != nil {
		return nil, fmt.Errorf("pulseserver: temp dir: %w", err)
	}
	sock := filepath.Join(dir, "pulse.sock")
	s := &Server{Dir: dir, Address: "unix:" + sock, Sinks: sinks, exited: make(chan error, 1), log: &lockedBuffer{}}
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
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = s.env
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pulseserver: start pulseaudio: %w", err)
	}
	s.cmd = cmd
	go func() { s.exited <- cmd.Wait() }()
	if err := s.waitReady(); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := s.Pactl("set-default-sink", sinks[0]); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := s.Pactl("set-default-source", Monitor(sinks[0])); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// waitReady polls the server with pactl until it answers, it exits, or startTimeout passes.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	for {
		if _, err := s.Pactl("info"); err == nil {
			return nil
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("pulseserver: pulseaudio exited at start: %v\n%s", err, s.log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pulseserver: pulseaudio did not answer within %v\n%s", startTimeout, s.log.String())
		}
	}
}

// Env returns the environment for a program that should use this server (the process's own
// environment with PULSE_SERVER and a private HOME and runtime directories).
func (s *Server) Env() []string { return append([]string(nil), s.env...) }

// Monitor returns the name of the source that captures what is played into sink.
func Monitor(sink string) string { return sink + ".monitor" }

// LoadNullSink adds a null sink like the ones Start makes while the server runs, and returns the
// module index that UnloadModule takes to remove it again.
func (s *Server) LoadNullSink(name string) (int, error) {
	out, err := s.Pactl(append([]string{"load-module"}, strings.Fields(nullSinkArgs(name))...)...)
	if err != nil {
		return 0, err
	}
	idx, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("pulseserver: load-module printed %q: %w", out, err)
	}
	return idx, nil
}

// UnloadModule removes a module, such as a sink LoadNullSink added.
func (s *Server) UnloadModule(index int) error {
	_, err := s.Pactl("unload-module", strconv.Itoa(index))
	return err
}

// Pactl runs pactl against the server and returns its standard output.
func (s *Server) Pactl(args ...string) (string, error) {
	cmd := exec.Command("pactl", args...)
	cmd.Env = s.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pulseserver: pactl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Play plays samples (48 kHz mono, 16-bit) into sink with pacat, asking the server to hold
// latency of them ahead of the sink, and returns at once; wait returns when pacat has played
// them all (it drains the stream before it exits) or failed. A buffer of a few hundred ms keeps
// the sound played whole when this process is not scheduled for a while, as a test's reference
// playback must be; a low-latency stream would underrun and leave a gap.
func (s *Server) Play(sink string, samples []int16, latency time.Duration) (wait func() error, err error) {
	raw := make([]byte, 2*len(samples))
	for i, v := range samples {
		raw[2*i], raw[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	cmd := exec.Command("pacat", "--playback", "--raw", "--format=s16le", "--rate=48000", "--channels=1",
		"--device="+sink, "--latency-msec="+strconv.Itoa(int(latency/time.Millisecond)))
	cmd.Env = s.env
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pulseserver: start pacat: %w", err)
	}
	return func() error {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("pulseserver: pacat into %s: %w: %s", sink, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}, nil
}

// Log returns what the server has printed so far.
func (s *Server) Log() string { return s.log.String() }

// Close stops the server (SIGTERM, then SIGKILL if it lingers for 5 s) and removes its directory.
// It reports a server that had to be killed. Later calls return the first call's result.
func (s *Server) Close() error {
	s.close.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.err = fmt.Errorf("pulseserver: pulseaudio ignored SIGTERM and was killed\n%s", s.log.String())
		}
		_ = os.RemoveAll(s.Dir)
	})
	return s.err
}

// nullSinkArgs is the module-null-sink line for a sink named name: 48 kHz mono, no rewinds, its
// description the name itself.
func nullSinkArgs(name string) string {
	return "module-null-sink sink_name=" + name + " rate=48000 channels=1 norewinds=1 sink_properties=device.description=" + name
}

// lockedBuffer is the server's output, written by exec's copying goroutines and read by Log.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
