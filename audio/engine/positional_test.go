package engine

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/codec"
	"sdkpp/audio/internal/testsignal"
	"sdkpp/audio/pcm"
	"sdkpp/audio/spatial"
	"sdkpp/core/voice"
)

// Positional voice through the whole playback path (jitter buffers, Opus, the stereo mix), with a
// tone per speaker measured per ear over the last second: a speaker on the listener's right is at
// least 10 dB louder in the right ear; one at the conversational distance is at its unattenuated
// level within 1 dB (as is a non-positional one, centred); one at half the audible distance
// follows the inverse model within 1 dB; one beyond the audible distance is silent, and its
// frames are counted as not decoded.
func TestPositionalVoice(t *testing.T) {
	const peak, frames, measured = 8000, 150, 50
	clock := &fakeClock{}
	e, err := New(voice.EngineConfig{}, Options{Now: clock.now, Stereo: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	props := spatial.Properties{AudibleDistance: 40, ConversationalDistance: 2, FadeIntensity: 1, Model: spatial.FadeInverse}
	require.NoError(t, e.SetSpatialProperties(voice.SpatialProperties{AudibleDistance: 40, ConversationalDistance: 2,
		FadeIntensity: 1, Model: voice.FadeInverse}))
	require.Error(t, e.SetSpatialProperties(voice.SpatialProperties{}), "invalid properties are refused")
	e.SetListener(voice.Listener{Position: voice.Vec3{X: 3, Y: 1}, Forward: voice.Vec3{Z: -1}, Up: voice.Vec3{Y: 1}})
	e.SetPositional(true)
	at := func(x, z float32) voice.Vec3 { return voice.Vec3{X: 3 + x, Y: 1, Z: z} }

	speakers := []struct {
		id   uint64
		freq float64 // 20 ms frames hold whole periods of each
		pos  voice.Vec3
	}{
		{1, 300, at(1.5, -0.5)}, // on the right
		{2, 500, at(0, -2)},     // at the conversational distance, ahead
		{3, 700, at(0, 20)},     // half the audible distance, behind
		{4, 900, at(-30, 0)},    // a team radio far on the left: non-positional
		{5, 1100, at(0, -40.5)}, // beyond the audible distance
	}
	encs := map[uint64]*codec.Encoder{}
	for _, s := range speakers {
		e.SetSenderPosition(s.id, s.pos)
		encs[s.id], err = codec.NewEncoder()
		require.NoError(t, err)
	}
	e.SetSenderPositional(4, false)

	mic := make([]int16, pcm.FrameSamples)
	var heard []int16
	buf := make([]byte, codec.MaxPacketBytes)
	for f := range frames {
		for _, s := range speakers {
			n, err := encs[s.id].Encode(testsignal.Tone(s.freq, peak, f*pcm.FrameSamples, pcm.FrameSamples), buf)
			require.NoError(t, err)
			e.ReceiveAt(s.id, voice.Packet{Seq: uint16(f), Timestamp: uint32(f * pcm.FrameSamples), Payload: buf[:n]}, clock.now())
		}
		clock.advance(20 * time.Millisecond)
		clear(mic)
		out := e.step(mic)
		require.Len(t, out, 2*pcm.FrameSamples, "interleaved stereo")
		if f >= frames-measured {
			heard = append(heard, out...)
		}
	}

	level := func(freq float64, ear int) float64 { return testsignal.ToneDB(heard, ear, 2, freq) }
	unattenuated := 20 * math.Log10(peak/32768.0)
	const left, right = 0, 1
	assert.GreaterOrEqual(t, level(300, right)-level(300, left), 10.0, "on the right")
	half, _ := props.Attenuation(20)
	for ear := range 2 {
		assert.InDelta(t, unattenuated, level(500, ear), 1, "conversational distance, ear %d", ear)
		assert.InDelta(t, unattenuated+20*math.Log10(half), level(700, ear), 1, "half the audible distance, ear %d", ear)
		assert.InDelta(t, unattenuated, level(900, ear), 1, "non-positional, ear %d", ear)
		assert.Less(t, level(1100, ear), -80.0, "beyond the audible distance, ear %d", ear)
	}
	assert.InDelta(t, level(900, left), level(900, right), 0.1, "non-positional: centred")
	assert.InDelta(t, frames, e.CulledFrames(), 2, "the distant speaker's frames went undecoded (the jitter buffer's first ticks may wait or stretch)")

	// Back in range, it is heard again (and decoded).
	e.SetSenderPosition(5, at(0, -2))
	culled := e.CulledFrames()
	heard = heard[:0]
	for f := frames; f < frames+measured; f++ {
		n, err := encs[5].Encode(testsignal.Tone(1100, peak, f*pcm.FrameSamples, pcm.FrameSamples), buf)
		require.NoError(t, err)
		e.ReceiveAt(5, voice.Packet{Seq: uint16(f), Timestamp: uint32(f * pcm.FrameSamples), Payload: buf[:n]}, clock.now())
		clock.advance(20 * time.Millisecond)
		heard = append(heard, e.step(mic)...)
	}
	assert.Equal(t, culled, e.CulledFrames())
	assert.InDelta(t, unattenuated, level(1100, left), 1.5, "in range again")
}
