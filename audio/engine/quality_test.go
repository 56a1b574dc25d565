package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/internal/speech"
	"sdkpp/audio/pcm"
	"sdkpp/audio/quality"
	"sdkpp/core/voice"
)

// TestCapturePathQuality runs a speech fixture through one engine's capture path (processing off,
// gate open, Opus) and a second engine's playback path (jitter buffer, decoder, mixer) on a
// simulated clock, without devices: the clean log-spectral distance stays within issue 13's bound.
func TestCapturePathQuality(t *testing.T) {
	ref := speech.MustLoad(speech.Alice)
	var rec recorder
	e, err := New(voice.EngineConfig{OnPacket: rec.onPacket}, Options{})
	require.NoError(t, err)
	defer e.Close()
	e.SetEchoCancellation(false)
	e.SetNoiseSuppression(false)
	e.SetAutoGain(false)
	e.SetMode(voice.ModePushToTalk)
	e.SetPTTActive(true)
	frame := make([]int16, pcm.FrameSamples)
	for i := 0; i+pcm.FrameSamples <= len(ref); i += pcm.FrameSamples {
		copy(frame, ref[i:])
		e.step(frame)
	}
	lsd := quality.LogSpectralDistance(ref, playThrough(t, rec.take(), 0, 1), pcm.SampleRate)
	t.Logf("LSD through two engines without devices: %.2f dB", lsd)
	assert.LessOrEqual(t, lsd, 7.5)
}
