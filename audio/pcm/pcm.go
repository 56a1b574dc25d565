// Package pcm defines the one audio format sdkpp's voice engine works in (48 kHz mono signed
// 16-bit samples, 20 ms frames, 10 ms device periods) and small sample helpers shared by the
// engine's packages.
package pcm

import "math"

const (
	// SampleRate is the engine's sample rate in Hz, for devices, codec and mixing alike.
	SampleRate = 48000
	// Channels is the engine's channel count: voice is mono.
	Channels = 1
	// FrameSamples is the number of samples in one codec frame (20 ms).
	FrameSamples = SampleRate / 50
	// PeriodSamples is the number of samples in one device period (10 ms, the LowLatency profile).
	PeriodSamples = SampleRate / 100
	// FrameDurationMs is the length of one codec frame in milliseconds.
	FrameDurationMs = 20
)

// MinDBFS is the level reported for digital silence, the floor of every dBFS value here.
const MinDBFS = -100.0

// LevelDBFS returns the RMS level of samples in dB relative to full scale, clamped to
// [MinDBFS, 0]. An empty slice is silence.
func LevelDBFS(samples []int16) float64 {
	if len(samples) == 0 {
		return MinDBFS
	}
	var sum float64
	for _, s := range samples {
		v := float64(s)
		sum += v * v
	}
	rms := math.Sqrt(sum/float64(len(samples))) / 32768
	if rms <= 0 {
		return MinDBFS
	}
	db := 20 * math.Log10(rms)
	if db < MinDBFS {
		return MinDBFS
	}
	if db > 0 {
		return 0
	}
	return db
}

// Clamp16 converts a wider sample to int16, saturating at the int16 range.
func Clamp16(v int32) int16 {
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return int16(v)
}
