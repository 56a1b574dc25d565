// Package testsignal makes deterministic synthetic signals for the audio packages' tests and
// benchmarks (speech-like voiced sound, stationary noise) and measures them (energy ratios).
package testsignal

import (
	"math"
	"math/rand/v2"

	"sdkpp/audio/pcm"
)

// Voiced returns n samples of a speech-like voiced signal at 48 kHz: syllables of 120-300 ms
// whose pitch glides between 90 and 240 Hz, with 20 harmonics falling off at 6 dB per octave,
// a raised-cosine loudness envelope peaking near peak (a fraction of full scale) and short
// pauses between syllables. The same seed gives the same signal.
func Voiced(seed uint64, n int, peak float64) []int16 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]int16, n)
	phase := 0.0
	for i := 0; i < n; {
		syl := int((0.12 + 0.18*rng.Float64()) * pcm.SampleRate)
		gap := int((0.03 + 0.07*rng.Float64()) * pcm.SampleRate)
		f0a := 90 + 150*rng.Float64()
		f0b := 90 + 150*rng.Float64()
		amp := peak * (0.5 + 0.5*rng.Float64())
		for j := 0; j < syl && i < n; j, i = j+1, i+1 {
			t := float64(j) / float64(syl)
			f0 := f0a + (f0b-f0a)*t
			phase += 2 * math.Pi * f0 / pcm.SampleRate
			env := 0.5 - 0.5*math.Cos(2*math.Pi*t)
			v := 0.0
			for k := 1; k <= 20; k++ {
				v += math.Sin(float64(k)*phase) / float64(k)
			}
			out[i] = pcm.Clamp16(int32(amp * env * v / 2 * 32767))
		}
		i += gap
	}
	return out
}

// Noise returns n samples of white Gaussian noise with the given RMS level in dBFS.
func Noise(seed uint64, n int, dbfs float64) []int16 {
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	rms := math.Pow(10, dbfs/20) * 32768
	out := make([]int16, n)
	for i := range out {
		out[i] = pcm.Clamp16(int32(math.Round(rng.NormFloat64() * rms)))
	}
	return out
}

// Energy returns the sum of squared samples.
func Energy(s []int16) float64 {
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	return e
}

// SNR returns the signal-to-noise ratio in dB of got against the reference want (same length):
// the energy of want over the energy of their difference. Identical signals give +Inf.
func SNR(want, got []int16) float64 {
	var sig, noise float64
	for i := range want {
		w := float64(want[i])
		d := float64(got[i]) - w
		sig += w * w
		noise += d * d
	}
	return 10 * math.Log10(sig/noise)
}

// Delay returns the lag in 0..maxLag at which got best matches want (got[i+lag] ≈ want[i]), by
// normalised cross-correlation.
func Delay(want, got []int16, maxLag int) int {
	best, bestLag := math.Inf(-1), 0
	for lag := 0; lag <= maxLag; lag++ {
		var xy, yy float64
		for i := 0; i+lag < len(got) && i < len(want); i++ {
			x, y := float64(want[i]), float64(got[i+lag])
			xy += x * y
			yy += y * y
		}
		if yy == 0 {
			continue
		}
		if c := xy / math.Sqrt(yy); c > best {
			best, bestLag = c, lag
		}
	}
	return bestLag
}

// Tone returns n samples of a sine of freq Hz at the given peak (in samples), starting at sample
// offset from (so that consecutive calls continue one tone).
func Tone(freq, peak float64, from, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(math.Round(peak * math.Sin(2*math.Pi*freq*float64(from+i)/pcm.SampleRate)))
	}
	return out
}

// ToneDB measures the level, in dB relative to full scale (of the tone's peak), of the sine of
// freq Hz in one channel of an interleaved signal of channels channels, by correlation. For tones
// that fit whole periods into the signal, the other tones do not leak into the figure.
func ToneDB(s []int16, channel, channels int, freq float64) float64 {
	var re, im float64
	n := len(s) / channels
	for k := range n {
		v := float64(s[k*channels+channel])
		ph := 2 * math.Pi * freq * float64(k) / pcm.SampleRate
		re += v * math.Cos(ph)
		im += v * math.Sin(ph)
	}
	amp := 2 * math.Hypot(re, im) / float64(n)
	return 20 * math.Log10(amp/32768+1e-12)
}
