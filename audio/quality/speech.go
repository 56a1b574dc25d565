package quality

import (
	"math"
	"math/rand/v2"
)

// SpeechLike returns n samples at sampleRate of a deterministic, speech-like test signal for
// seed: voiced syllables of 120-320 ms (a harmonic series on a gliding 90-240 Hz pitch with a
// falling spectrum, breath noise 40 dB below it and a smooth envelope), some with a noisy onset
// like a fricative, separated by 40-200 ms pauses, all over a room-noise floor at about -66 dBFS.
// It peaks around -6 dBFS. It is no substitute for recorded speech but, like it, leaves no part
// of the spectrum empty, and exercises codecs, buffers and metrics in unit tests.
func SpeechLike(n, sampleRate int, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 0x73706565636821))
	out := make([]int16, n)
	fs := float64(sampleRate)
	room := make([]float64, n)
	for i := range room {
		room[i] = r.NormFloat64() * 0.0005
	}
	for pos := 0; pos < n; {
		pos += int((0.04 + 0.16*r.Float64()) * fs) // pause
		length := int((0.12 + 0.2*r.Float64()) * fs)
		f0, f1 := 90+150*r.Float64(), 90+150*r.Float64()
		amp := 0.15 + 0.35*r.Float64()
		fricative := r.Float64() < 0.3
		bright := 0.6 + 0.3*r.Float64() // harmonic roll-off
		phase := 0.0
		var hiss float64
		for i := 0; i < length && pos+i < n; i++ {
			t := float64(i) / float64(length)
			env := math.Sin(math.Pi * t)
			f := f0 + (f1-f0)*t
			phase += 2 * math.Pi * f / fs
			var v, g float64
			g = 1
			for h := 1; float64(h)*f < 7000; h++ {
				v += g * math.Sin(float64(h)*phase)
				g *= bright
			}
			v = (v*0.5 + r.NormFloat64()*0.01) * amp * env
			if fricative && t < 0.25 {
				// High-passed noise: the difference of successive white samples.
				w := r.NormFloat64() * 0.05
				v += (w - hiss) * (1 - 4*t)
				hiss = w
			}
			room[pos+i] += v
		}
		pos += length
	}
	for i, v := range room {
		out[i] = int16(math.Max(-32767, math.Min(32767, v*32767)))
	}
	return out
}
