// Package pulsetest starts a private PulseAudio server (internal/pulseserver) for a test, points
// the test process at it with PULSE_SERVER, and stops it when the test ends.
//
// Without a pulseaudio binary the test is skipped, or fails when SDKPP_REQUIRE_AUDIO=1 (as
// `make test` sets it), so that a machine missing the package cannot pass silently.
package pulsetest

import (
	"errors"
	"os"
	"testing"
	"time"

	"sdkpp/internal/pulseserver"
)

// RequireEnv is the environment variable that turns a missing PulseAudio from a skip into a
// failure.
const RequireEnv = "SDKPP_REQUIRE_AUDIO"

// DefaultSink is the sink Start creates when it is given no names.
const DefaultSink = pulseserver.DefaultSink

// Server is a running private PulseAudio server whose helpers fail the test on error.
type Server struct {
	*pulseserver.Server
}

// Start runs a private PulseAudio with a null sink for each name (DefaultSink when none is given),
// sets PULSE_SERVER for the rest of the test, and stops the server in t.Cleanup. Each sink's
// description, the device name clients see, is the sink's name. Start uses t.Setenv, so the test
// cannot be parallel.
func Start(t testing.TB, sinks ...string) *Server {
	t.Helper()
	s, err := pulseserver.Start(sinks...)
	if errors.Is(err, pulseserver.ErrMissing) {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("pulsetest: %v; %s=1 requires it", err, RequireEnv)
		}
		t.Skipf("pulsetest: %v", err)
	}
	if err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Logf("pulsetest: %v", err)
		}
	})
	t.Setenv("PULSE_SERVER", s.Address)
	return &Server{s}
}

// Monitor returns the name of the source that captures what is played into sink.
func Monitor(sink string) string { return pulseserver.Monitor(sink) }

// LoadNullSink adds a null sink like the ones Start makes while the server runs, and returns the
// module index that UnloadModule takes to remove it again.
func (s *Server) LoadNullSink(t testing.TB, name string) int {
	t.Helper()
	idx, err := s.Server.LoadNullSink(name)
	if err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	return idx
}

// UnloadModule removes a module, such as a sink LoadNullSink added.
func (s *Server) UnloadModule(t testing.TB, index int) {
	t.Helper()
	if err := s.Server.UnloadModule(index); err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
}

// Pactl runs pactl against the server and returns its standard output.
func (s *Server) Pactl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := s.Server.Pactl(args...)
	if err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	return out
}

// Play plays samples into sink through pacat (see pulseserver.Server.Play) and returns a function
// that waits until they are played, failing the test if pacat fails.
func (s *Server) Play(t testing.TB, sink string, samples []int16, latency time.Duration) (wait func()) {
	t.Helper()
	w, err := s.Server.Play(sink, samples, latency)
	if err != nil {
		t.Fatalf("pulsetest: %v", err)
	}
	return func() {
		t.Helper()
		if err := w(); err != nil {
			t.Errorf("pulsetest: %v", err)
		}
	}
}
