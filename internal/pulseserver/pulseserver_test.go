package pulseserver

import (
	"errors"
	"os"
	"os/exec"
	"testing"

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
