package pulseserver

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func start(t *testing.T, sinks ...string) *Server {
	t.Helper()
	s, err := Start(sinks...)
	if errors.Is(err, ErrMissing) && os.Getenv("SDKPP_REQUIRE_AUDIO") != "1" {
		t.Skip(err)
	}
	require.NoError(t, err)
	return s
}

func TestServerLifecycle(t *testing.T) {
	s := start(t, "mic", "ear")
	assert.Contains(t, s.Env(), "PULSE_SERVER="+s.Address)

	sinks, err := s.Pactl("list", "short", "sinks")
	require.NoError(t, err)
	assert.Contains(t, sinks, "mic")
	assert.Contains(t, sinks, "ear")
	info, err := s.Pactl("info")
	require.NoError(t, err)
	assert.Contains(t, info, "Default Sink: mic")
	assert.Contains(t, info, "Default Source: "+Monitor("mic"))

	// A program given Env reaches this server, not the user's.
	cmd := exec.Command("pactl", "list", "short", "sinks")
	cmd.Env = s.Env()
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "ear")

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close reports the first one's result")
	_, err = os.Stat(s.Dir)
	assert.True(t, os.IsNotExist(err), "Close removes the server's directory")
	_, err = s.Pactl("info")
	assert.Error(t, err, "the server is gone")
}

func TestBadModuleIsAnError(t *testing.T) {
	s := start(t)
	t.Cleanup(func() { s.Close() })
	_, err := s.Pactl("load-module", "module-that-does-not-exist")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "load-module")
	assert.Error(t, s.UnloadModule(1<<30))
}

// Play hands the samples to the sink whole: a recording of the sink's monitor holds them
// bit-exact. A sink that does not exist is pacat's error.
func TestPlayIsBitExact(t *testing.T) {
	s := start(t, "ear")
	t.Cleanup(func() { s.Close() })
	rec := exec.Command("parec", "--raw", "--format=s16le", "--rate=48000", "--channels=1", "--latency-msec=20",
		"--device="+Monitor("ear"))
	rec.Env = s.Env()
	out, err := rec.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, rec.Start())
	stop := time.AfterFunc(30*time.Second, func() { _ = rec.Process.Kill() }) // a stalled read ends in EOF
	defer func() {
		stop.Stop()
		_ = rec.Process.Kill()
		_ = rec.Wait() // killed: its error says so
	}()

	played := make([]int16, 48000/5) // 200 ms of a ramp that has no zero sample
	for i := range played {
		played[i] = int16(i%2000 - 1000)
		if played[i] == 0 {
			played[i] = 7
		}
	}
	wait, err := s.Play("ear", played, 100*time.Millisecond)
	require.NoError(t, err)

	// Read the monitor until the first sound and all that follows it for the playback's length.
	var samples []int16
	start := -1
	buf := make([]byte, 4096)
	for start < 0 || len(samples) < start+len(played) {
		n, err := io.ReadFull(out, buf)
		require.NoError(t, err, "the monitor recorded %d samples, the sound from %d on", len(samples), start)
		for b := buf[:n]; len(b) >= 2; b = b[2:] {
			samples = append(samples, int16(uint16(b[0])|uint16(b[1])<<8))
		}
		if start < 0 {
			start = slices.IndexFunc(samples, func(v int16) bool { return v != 0 })
		}
	}
	require.NoError(t, wait())
	assert.Equal(t, played, samples[start:start+len(played)])

	wait, err = s.Play("no-such-sink", played[:480], 100*time.Millisecond)
	require.NoError(t, err, "pacat starts")
	err = wait()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pacat into no-such-sink")
}
