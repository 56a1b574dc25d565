package vad

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
)

// tone returns a 440 Hz frame whose RMS level is dbfs.
func tone(dbfs float64) []int16 {
	amp := 32768 * math.Pow(10, dbfs/20) * math.Sqrt2
	f := make([]int16, pcm.FrameSamples)
	for i := range f {
		f[i] = int16(amp * math.Sin(2*math.Pi*440*float64(i)/pcm.SampleRate))
	}
	return f
}

// noise returns a frame of seeded white noise whose RMS level is about dbfs.
func noise(r *rand.Rand, dbfs float64) []int16 {
	sigma := 32768 * math.Pow(10, dbfs/20)
	f := make([]int16, pcm.FrameSamples)
	for i := range f {
		f[i] = pcm.Clamp16(int32(r.NormFloat64() * sigma))
	}
	return f
}

func TestSetThresholdClamps(t *testing.T) {
	tests := []struct {
		in, want float32
	}{
		{-60, -60}, {-100, -100}, {0, 0}, {-150, -100}, {12, 0}, {float32(math.NaN()), -60},
	}
	d := New()
	for _, tt := range tests {
		d.SetThreshold(false, tt.in)
		auto, got := d.Threshold()
		assert.False(t, auto)
		assert.Equal(t, tt.want, got, "input %v", tt.in)
	}
	d.SetThreshold(true, -40)
	auto, got := d.Threshold()
	assert.True(t, auto)
	assert.Equal(t, float32(-40), got, "the manual value is kept in automatic mode")
}

func TestDefaults(t *testing.T) {
	d := New()
	auto, th := d.Threshold()
	assert.False(t, auto)
	assert.Equal(t, float32(DefaultThresholdDBFS), th)
	assert.Equal(t, pcm.MinDBFS, d.Level())
	assert.False(t, d.Speaking())
}

func TestManualThresholdAndHangover(t *testing.T) {
	d := New()
	d.SetThreshold(false, -40)
	quiet, loud := tone(-50), tone(-30)
	assert.False(t, d.Process(quiet))
	assert.InDelta(t, -50, d.Level(), 0.1)
	assert.True(t, d.Process(loud))
	for i := range DefaultHangoverFrames {
		assert.True(t, d.Process(quiet), "hangover frame %d", i)
	}
	assert.False(t, d.Process(quiet), "speech ends after the hangover")

	d.SetHangover(0)
	assert.True(t, d.Process(loud))
	assert.False(t, d.Process(quiet), "no hangover")
	d.SetHangover(-3)
	assert.True(t, d.Process(loud))
	assert.False(t, d.Process(quiet), "a negative hangover counts as none")
}

func TestThresholdBoundary(t *testing.T) {
	d := New()
	d.SetHangover(0)
	d.SetThreshold(false, -100)
	assert.True(t, d.Process(make([]int16, pcm.FrameSamples)), "-100 passes even digital silence")
	d.SetThreshold(false, 0)
	assert.False(t, d.Process(tone(-0.5)))
}

func TestAutomaticFollowsNoiseFloor(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := New()
	d.SetHangover(0)
	d.SetThreshold(true, -60)

	// Steady noise at -50 dBFS: never speech, although the manual threshold would say so.
	for i := range 150 {
		assert.False(t, d.Process(noise(r, -50)), "noise frame %d", i)
	}
	assert.InDelta(t, -50, d.NoiseFloor(), 1.5)
	assert.InDelta(t, -38, d.EffectiveThreshold(), 1.5)

	// Speech 20 dB above the noise is speech.
	for range 10 {
		assert.True(t, d.Process(tone(-30)))
	}

	// The noise rises by 15 dB: within 2.5 s the floor follows and the noise is no longer
	// speech.
	for range 125 {
		d.Process(noise(r, -35))
	}
	for i := range 50 {
		assert.False(t, d.Process(noise(r, -35)), "louder noise frame %d", i)
	}
	assert.InDelta(t, -35, d.NoiseFloor(), 1.5)

	// The noise falls again: the floor follows at once.
	d.Process(noise(r, -65))
	assert.InDelta(t, -65, d.NoiseFloor(), 1.5)
	assert.True(t, d.Process(tone(-45)))
}

func TestAutomaticOnDigitalSilence(t *testing.T) {
	d := New()
	d.SetHangover(0)
	d.SetThreshold(true, 0)
	silence := make([]int16, pcm.FrameSamples)
	for range 50 {
		assert.False(t, d.Process(silence))
	}
	assert.Equal(t, float64(AutoMinThresholdDBFS), d.EffectiveThreshold())
	one := make([]int16, pcm.FrameSamples)
	one[0] = 1
	assert.False(t, d.Process(one), "a single LSB is not speech")
	assert.True(t, d.Process(tone(-60)))
}

func TestProcessDoesNotAllocate(t *testing.T) {
	d := New()
	d.SetThreshold(true, -60)
	f := tone(-30)
	assert.Zero(t, testing.AllocsPerRun(500, func() { d.Process(f) }))
	n := NewNoInput(-80, time.Second)
	assert.Zero(t, testing.AllocsPerRun(500, func() { n.Process(f) }))
}

func TestConcurrentSettings(t *testing.T) {
	d := New()
	f := tone(-40)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 1000 {
			d.SetThreshold(i%2 == 0, float32(-i%100))
			d.SetHangover(i % 10)
			_, _ = d.Threshold()
		}
	})
	for range 1000 {
		d.Process(f)
		_ = d.Level()
	}
	wg.Wait()
	require.InDelta(t, -40, d.Level(), 0.1)
}
