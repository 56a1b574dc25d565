package voice

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callIn is a call of lobbyID that never started: enough for the registry, which only reads its
// lobby.
func callIn(lobbyID uint64) *Call { return &Call{cfg: Config{LobbyID: lobbyID}} }

func TestRegistry(t *testing.T) {
	var r Registry[string]
	require.Equal(t, DefaultSettings(), r.Settings(), "a new registry has the default settings")

	start := func(lobbyID uint64, hooks string) (*Entry[string], error) {
		return r.Start(lobbyID, func(s Settings) (*Entry[string], error) {
			return &Entry[string]{Call: callIn(lobbyID), Hooks: hooks}, nil
		})
	}
	for _, id := range []uint64{3, 1, 2} {
		_, err := start(id, "hooks")
		require.NoError(t, err)
	}
	_, err := start(2, "again")
	require.ErrorIs(t, err, ErrInCall, "a second call of one lobby")
	boom := errors.New("boom")
	_, err = r.Start(9, func(Settings) (*Entry[string], error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	require.Nil(t, r.Get(9), "a call that failed to start is not kept")

	var order []uint64
	r.Set(func(s *Settings) { s.SelfMute = true }, func(c *Call) { order = append(order, c.LobbyID()) })
	assert.Equal(t, []uint64{1, 2, 3}, order, "a setting reaches every call, in lobby order")
	assert.True(t, r.Settings().SelfMute, "and holds for calls to come")
	var seen Settings
	_, err = r.Start(4, func(s Settings) (*Entry[string], error) { seen = s; return &Entry[string]{Call: callIn(4)}, nil })
	require.NoError(t, err)
	assert.True(t, seen.SelfMute, "a new call starts with the settings")

	require.NotNil(t, r.Take(2))
	assert.Nil(t, r.Take(2), "a call is taken once")
	var left []uint64
	for _, e := range r.TakeAll() {
		left = append(left, e.Call.LobbyID())
	}
	assert.Equal(t, []uint64{1, 3, 4}, left)
	assert.Empty(t, r.Calls())
}

// The settings of every call are kept in range, and the factory a test sets makes the temporary
// engines of device lists and selection.
func TestRegistrySettingsAndFactory(t *testing.T) {
	var r Registry[string]
	for _, tc := range []struct {
		set      func(float32)
		get      func(Settings) float32
		in, want float32
		name     string
	}{
		{r.SetInputVolume, func(s Settings) float32 { return s.InputVolume }, 150, 100, "input volume above 100"},
		{r.SetInputVolume, func(s Settings) float32 { return s.InputVolume }, -1, 0, "input volume below 0"},
		{r.SetOutputVolume, func(s Settings) float32 { return s.OutputVolume }, 250, 200, "output volume above 200"},
		{r.SetOutputVolume, func(s Settings) float32 { return s.OutputVolume }, 150, 150, "output volume in range"},
		{r.SetNoInputThreshold, func(s Settings) float32 { return s.NoInputThreshold }, -55, -55, "threshold"},
	} {
		tc.set(tc.in)
		assert.Equal(t, tc.want, tc.get(r.Settings()), tc.name)
	}

	boom := errors.New("no audio here")
	made := 0
	r.SetFactory(func(EngineConfig) (Engine, error) { made++; return nil, boom }, nil)
	assert.ErrorIs(t, r.WithEngine(func(Engine) error { return nil }), boom, "the factory's engine")
	assert.ErrorIs(t, r.SetDevice(true, "mic-2"), boom, "selection tries the factory's engine")
	assert.Equal(t, 2, made)
	assert.Empty(t, r.Settings().InputDevice, "a refused device is not recorded")
	newEngine, tune := r.Factory()
	assert.NotNil(t, newEngine)
	assert.Nil(t, tune)
}
