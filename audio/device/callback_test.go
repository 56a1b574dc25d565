package device

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
)

// TestDataCallbacksDoNotAllocate calls the data callbacks the way miniaudio does through malgo,
// with a device buffer of one period as bytes, and counts allocations per call.
func TestDataCallbacksDoNotAllocate(t *testing.T) {
	r := newRings(Config{Capture: true, Playback: true})
	in := make([]byte, 2*pcm.PeriodSamples)
	out := make([]byte, 2*pcm.PeriodSamples)
	engineSide := make([]int16, pcm.PeriodSamples)

	captureAllocs := testing.AllocsPerRun(1000, func() {
		r.captureData(nil, in, pcm.PeriodSamples)
		r.capture.Read(engineSide) // keep the ring from filling: overruns must not allocate either
	})
	playbackAllocs := testing.AllocsPerRun(1000, func() {
		r.playback.Write(engineSide)
		r.playbackData(out, nil, pcm.PeriodSamples)
	})
	underrunAllocs := testing.AllocsPerRun(1000, func() {
		r.playbackData(out, nil, pcm.PeriodSamples)
	})
	overrunAllocs := testing.AllocsPerRun(1000, func() {
		r.captureData(nil, in, pcm.PeriodSamples)
	})
	assert.Zero(t, captureAllocs, "capture callback")
	assert.Zero(t, playbackAllocs, "playback callback")
	assert.Zero(t, underrunAllocs, "playback callback on an empty ring")
	assert.Zero(t, overrunAllocs, "capture callback on a full ring")
	require.NotZero(t, r.stats().Playback.Underruns)
	require.NotZero(t, r.stats().Capture.Overruns)
}

// TestDataCallbacksWakeAWaitingEngine checks that the capture callback wakes an engine waiting for
// a period and the playback callback wakes one waiting for room.
func TestDataCallbacksWakeAWaitingEngine(t *testing.T) {
	r := newRings(Config{Capture: true, Playback: true, RingSamples: pcm.PeriodSamples})
	woke := make(chan bool)
	go func() { woke <- r.capture.WaitData(pcm.PeriodSamples, nil) }()
	r.captureData(nil, make([]byte, 2*pcm.PeriodSamples), pcm.PeriodSamples)
	assert.True(t, <-woke)

	r.playback.Write(make([]int16, pcm.PeriodSamples)) // full
	go func() { woke <- r.playback.WaitSpace(pcm.PeriodSamples, nil) }()
	r.playbackData(make([]byte, 2*pcm.PeriodSamples), nil, pcm.PeriodSamples)
	assert.True(t, <-woke)
}

func TestSamplesViewsBytesInPlace(t *testing.T) {
	b := make([]byte, 8)
	s := samples(b)
	require.Len(t, s, 4)
	s[1] = -2
	assert.Equal(t, int16(-2), samples(b)[1])
	assert.Nil(t, samples(nil))
}
