package engine

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/internal/wav"
	"sdkpp/audio/pcm"
	"sdkpp/core/voice"
)

// The AEC dump writes the near, far and output signals of every step as 48 kHz mono WAV files,
// one frame per step, the near file holding exactly what the microphone captured.
func TestAecDumpWritesThreeWavFilesOfEveryFrame(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "call")
	r := startRunning(t, voice.EngineConfig{AecDump: prefix, Logf: t.Logf})
	const frames = 40 // fewer than the ring holds: none can be dropped
	r.run(frames)
	require.NoError(t, r.e.Close())

	for _, name := range []string{"-near.wav", "-far.wav", "-out.wav"} {
		a, err := wav.ReadFile(prefix + name)
		require.NoError(t, err, name)
		assert.Equal(t, pcm.SampleRate, a.SampleRate, name)
		assert.Equal(t, 1, a.Channels, name)
		assert.Len(t, a.Samples, frames*pcm.FrameSamples, name)
		if name == "-near.wav" {
			assert.Equal(t, r.speech[:frames*pcm.FrameSamples], a.Samples, "near is the captured speech")
		}
	}
}

// A dump prefix that cannot be created costs the diagnostics, not the call.
func TestAecDumpBadPathStillStarts(t *testing.T) {
	var logged []string
	r := startRunning(t, voice.EngineConfig{AecDump: filepath.Join(t.TempDir(), "missing", "call"),
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	r.run(3)
	require.NoError(t, r.e.Close())
	require.NotEmpty(t, logged)
	assert.Contains(t, logged[0], "aec dump", "the failed dump is logged: %q", logged)
	assert.Contains(t, logged[len(logged)-1], "engine: started", "and the engine starts: %q", logged)
}
