package device

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
)

func TestMemoryMovesPeriodsThroughTheRings(t *testing.T) {
	m, err := NewMemory(Config{Capture: true, Playback: true})
	require.NoError(t, err)
	in := make([]int16, pcm.PeriodSamples)
	for i := range in {
		in[i] = int16(i)
	}
	out := make([]int16, pcm.PeriodSamples)

	assert.False(t, m.Period(in, out), "a stopped device runs no period")
	assert.Zero(t, m.Capture().Len())

	require.NoError(t, m.Start())
	require.True(t, m.Period(in, out))
	assert.Equal(t, make([]int16, pcm.PeriodSamples), out, "nothing to play yet: silence")

	// The engine loops capture back to playback.
	frame := make([]int16, pcm.PeriodSamples)
	require.Equal(t, pcm.PeriodSamples, m.Capture().Read(frame))
	require.Equal(t, pcm.PeriodSamples, m.Playback().Write(frame))
	require.True(t, m.Period(nil, out))
	assert.Equal(t, in, out)

	st := m.Stats()
	assert.Equal(t, uint64(1), st.CapturePeriods)
	assert.Equal(t, uint64(pcm.PeriodSamples), st.CaptureSamples)
	assert.Equal(t, uint64(2), st.PlaybackPeriods)
	assert.Equal(t, uint64(1), st.Playback.Underruns)

	require.NoError(t, m.Stop())
	assert.False(t, m.Period(in, out))
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	assert.ErrorIs(t, m.Start(), ErrClosed)
}

func TestMemoryInfoAndSides(t *testing.T) {
	m, err := NewMemory(Config{Capture: true})
	require.NoError(t, err)
	assert.NotNil(t, m.Capture())
	assert.Nil(t, m.Playback())
	info := m.Info()
	assert.Equal(t, MemoryCaptureID, info.Capture.ID)
	assert.Empty(t, info.Playback.ID)
	assert.Equal(t, pcm.SampleRate, info.SampleRate)
	assert.Equal(t, pcm.PeriodSamples, info.PeriodSamples)

	_, err = NewMemory(Config{})
	assert.ErrorIs(t, err, ErrNothingToOpen)
}
