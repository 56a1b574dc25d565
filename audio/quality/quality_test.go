package quality

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
)

const rate = pcm.SampleRate

func TestFFTMatchesDFT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 8, 64} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(r.NormFloat64(), r.NormFloat64())
		}
		want := make([]complex128, n)
		for k := range n {
			for j := range n {
				want[k] += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
		}
		got := append([]complex128(nil), x...)
		fft(got, false)
		for k := range n {
			require.InDelta(t, 0, cmplx.Abs(got[k]-want[k]), 1e-9, "n=%d k=%d", n, k)
		}
		fft(got, true)
		for k := range n {
			require.InDelta(t, 0, cmplx.Abs(got[k]/complex(float64(n), 0)-x[k]), 1e-9)
		}
	}
	assert.Equal(t, 1, nextPow2(0))
	assert.Equal(t, 1024, nextPow2(960))
	assert.Equal(t, 1024, nextPow2(1024))
}

// delayed returns x delayed by lag samples (negative: advanced), keeping its length.
func delayed(x []int16, lag int) []int16 {
	out := make([]int16, len(x))
	for i := range out {
		if j := i - lag; j >= 0 && j < len(x) {
			out[i] = x[j]
		}
	}
	return out
}

// withNoise returns x plus seeded white noise at dbfs.
func withNoise(x []int16, dbfs float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 2))
	sigma := 32768 * math.Pow(10, dbfs/20)
	out := make([]int16, len(x))
	for i, s := range x {
		out[i] = pcm.Clamp16(int32(float64(s) + r.NormFloat64()*sigma))
	}
	return out
}

func TestAlign(t *testing.T) {
	ref := SpeechLike(3*rate/2, rate, 1)
	for _, lag := range []int{0, 1, 480, 12345, rate / 2, -700, -rate / 2} {
		assert.Equal(t, lag, Align(ref, delayed(ref, lag)), "lag %d", lag)
	}
	assert.Equal(t, 4321, Align(ref, withNoise(delayed(ref, 4321), -30, 3)), "noisy")
	assert.Equal(t, 0, Align(nil, ref))
	// A longer degraded signal (the capture ran on) aligns too.
	long := append(delayed(ref, 2000), make([]int16, rate)...)
	assert.Equal(t, 2000, Align(ref, long))
	assert.Equal(t, 100, AlignWithin(ref, delayed(ref, 100), 200))
}

func TestAlignTenSecondsHalfASecondLate(t *testing.T) {
	ref := SpeechLike(10*rate, rate, 2)
	deg := delayed(ref, rate/2)
	start := time.Now()
	lag := Align(ref, deg)
	took := time.Since(start)
	assert.Equal(t, rate/2, lag)
	t.Logf("aligned 10 s at 48 kHz in %v", took)
}

func TestLogSpectralDistance(t *testing.T) {
	ref := SpeechLike(4*rate, rate, 5)
	assert.InDelta(t, 0, LogSpectralDistance(ref, ref, rate), 1e-9, "identical")
	assert.InDelta(t, 0, LogSpectralDistance(ref, delayed(ref, 3333), rate), 1e-9, "a delayed copy")

	half := make([]int16, len(ref))
	for i, s := range ref {
		half[i] = s / 2
	}
	assert.InDelta(t, 6.02, LogSpectralDistance(ref, half, rate), 0.1, "half amplitude")

	prev := 0.0
	for _, db := range []float64{-70, -60, -50, -40, -30, -20} {
		d := LogSpectralDistance(ref, withNoise(ref, db, 9), rate)
		assert.Greater(t, d, prev, "noise at %v dBFS", db)
		t.Logf("noise at %v dBFS: LSD %.2f dB", db, d)
		prev = d
	}
	assert.True(t, math.IsNaN(LogSpectralDistance(make([]int16, rate), make([]int16, rate), rate)))
}

// stretched returns x delayed by lag with a frame of zeros inserted at at: what a jitter buffer
// that stretches its delay once plays.
func stretched(x []int16, lag, at, frame int) []int16 {
	out := make([]int16, lag, len(x)+lag+frame)
	out = append(out, x[:at]...)
	out = append(out, make([]int16, frame)...)
	return append(out, x[at:]...)
}

func TestLogSpectralDistanceSegmented(t *testing.T) {
	ref := SpeechLike(6*rate, rate, 7)
	const segment, shift, frame = rate / 2, rate / 10, pcm.FrameSamples
	assert.InDelta(t, 0, LogSpectralDistanceSegmented(ref, ref, rate, segment, shift), 1e-9, "identical")
	assert.InDelta(t, 0, LogSpectralDistanceSegmented(ref, delayed(ref, 4444), rate, segment, shift), 1e-9, "a delayed copy")

	// A frame inserted a third of the way in: one alignment scores the part it does not fit as
	// noise; aligned segment by segment only the segment around the insertion costs anything.
	warped := stretched(ref, 2000, 2*rate+rate/3, frame)
	once := LogSpectralDistance(ref, warped, rate)
	each := LogSpectralDistanceSegmented(ref, warped, rate, segment, shift)
	t.Logf("one frame inserted: %.2f dB aligned once, %.2f dB segment by segment", once, each)
	assert.Greater(t, once, 3.0, "aligned once") // speechscore's margin is 2 dB
	assert.Less(t, each, 1.0, "segment by segment")

	// Noise still counts, and a shift beyond maxShift is not followed.
	noisy := LogSpectralDistanceSegmented(ref, withNoise(ref, -30, 9), rate, segment, shift)
	assert.InDelta(t, LogSpectralDistance(ref, withNoise(ref, -30, 9), rate), noisy, 0.3, "noise")
	far := stretched(ref, 0, 3*rate, rate/5) // 200 ms inserted: beyond 100 ms of shift
	assert.Greater(t, LogSpectralDistanceSegmented(ref, far, rate, segment, shift), 3.0, "a shift beyond maxShift")
	assert.True(t, math.IsNaN(LogSpectralDistanceSegmented(make([]int16, rate), make([]int16, rate), rate, segment, shift)))
}

func TestSegmentalSNR(t *testing.T) {
	ref := SpeechLike(4*rate, rate, 6)
	assert.Equal(t, MaxSegmentSNR, SegmentalSNR(ref, ref, rate))
	assert.Equal(t, MaxSegmentSNR, SegmentalSNR(ref, delayed(ref, -800), rate))
	prev := math.Inf(1)
	for _, db := range []float64{-60, -50, -40, -30, -20, -10} {
		s := SegmentalSNR(ref, withNoise(ref, db, 4), rate)
		assert.Less(t, s, prev, "noise at %v dBFS", db)
		t.Logf("noise at %v dBFS: segmental SNR %.2f dB", db, s)
		prev = s
	}
	assert.GreaterOrEqual(t, prev, MinSegmentSNR)
	assert.True(t, math.IsNaN(SegmentalSNR(nil, nil, rate)))
}

func TestSpeechLike(t *testing.T) {
	a := SpeechLike(2*rate, rate, 1)
	assert.Equal(t, a, SpeechLike(2*rate, rate, 1), "deterministic")
	assert.NotEqual(t, a, SpeechLike(2*rate, rate, 2))
	// Loud syllables and quiet pauses.
	var loud, quiet int
	for s := 0; s+pcm.FrameSamples <= len(a); s += pcm.FrameSamples {
		switch l := pcm.LevelDBFS(a[s : s+pcm.FrameSamples]); {
		case l > -30:
			loud++
		case l < -60:
			quiet++
		}
	}
	assert.Greater(t, loud, 20)
	assert.Greater(t, quiet, 5)
}

func BenchmarkAlignFiveSeconds(b *testing.B) {
	ref := SpeechLike(5*rate, rate, 1)
	deg := delayed(ref, rate/2)
	for b.Loop() {
		Align(ref, deg)
	}
}
