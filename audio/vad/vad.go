// Package vad decides, frame by frame, whether the microphone carries speech: a level threshold
// in dBFS, set by hand or tracked automatically a margin above the measured noise floor, with a
// hangover so that speech is not chopped in the short pauses between words. It also holds
// NoInput, which reports when the input stays silent for a while and when it comes back.
//
// Everything is driven by frames (pcm.FrameSamples samples, 20 ms); nothing reads a clock.
// Process allocates nothing.
package vad

import (
	"math"
	"sync/atomic"

	"sdkpp/audio/internal/window"
	"sdkpp/audio/pcm"
)

const (
	// DefaultThresholdDBFS is the manual threshold a new Detector starts with.
	DefaultThresholdDBFS = -60
	// MinThresholdDBFS and MaxThresholdDBFS bound the manual threshold; values outside are
	// clamped.
	MinThresholdDBFS = pcm.MinDBFS
	// MaxThresholdDBFS is the upper bound of the manual threshold.
	MaxThresholdDBFS = 0
	// DefaultHangoverFrames is how many frames speech is held after the level falls below the
	// threshold (8 frames, 160 ms).
	DefaultHangoverFrames = 8
	// AutoMarginDB is how far above the noise floor the automatic threshold lies.
	AutoMarginDB = 12
	// AutoMinThresholdDBFS is the lowest automatic threshold: on digital silence the floor is
	// -100 dBFS, and without this bound a single LSB of noise would count as speech.
	AutoMinThresholdDBFS = -70
	// noiseSubs and noiseSubFrames shape the noise-floor window: the floor is the quietest frame
	// of the last 2 to 2.25 seconds (8 sub-windows of 12 frames, minimum statistics).
	noiseSubs      = 8
	noiseSubFrames = 12
)

// Detector is a voice activity detector. Process runs on one goroutine (the engine's capture
// path); SetThreshold, Threshold, SetHangover, Level, Speaking and NoiseFloor may be called from
// any goroutine.
type Detector struct {
	automatic atomic.Bool
	threshold atomic.Uint32 // float32 bits of the manual threshold
	hangover  atomic.Int32
	level     atomic.Uint64 // float64 bits of the last frame's level
	floor     atomic.Uint64 // float64 bits of the noise floor estimate
	speaking  atomic.Bool

	// Owned by the goroutine that calls Process.
	noise window.Window
	hold  int // frames of hangover left
}

// New returns a detector with the manual default threshold (-60 dBFS) and the default
// hangover.
func New() *Detector {
	d := &Detector{}
	d.noise.Init(noiseSubs, noiseSubFrames, false)
	d.SetThreshold(false, DefaultThresholdDBFS)
	d.hangover.Store(DefaultHangoverFrames)
	d.level.Store(math.Float64bits(pcm.MinDBFS))
	d.floor.Store(math.Float64bits(pcm.MinDBFS))
	return d
}

// SetThreshold selects automatic or manual mode and the manual threshold in dBFS, clamped to
// [MinThresholdDBFS, MaxThresholdDBFS] (NaN counts as the default). In automatic mode dbfs is
// kept for when manual mode returns.
func (d *Detector) SetThreshold(automatic bool, dbfs float32) {
	switch {
	case dbfs != dbfs:
		dbfs = DefaultThresholdDBFS
	case dbfs < MinThresholdDBFS:
		dbfs = MinThresholdDBFS
	case dbfs > MaxThresholdDBFS:
		dbfs = MaxThresholdDBFS
	}
	d.threshold.Store(math.Float32bits(dbfs))
	d.automatic.Store(automatic)
}

// Threshold returns the mode and the manual threshold as set (after clamping).
func (d *Detector) Threshold() (automatic bool, dbfs float32) {
	return d.automatic.Load(), math.Float32frombits(d.threshold.Load())
}

// SetHangover sets how many frames speech is held after the level drops (negative counts as 0).
func (d *Detector) SetHangover(frames int) {
	d.hangover.Store(int32(max(frames, 0)))
}

// EffectiveThreshold returns the threshold the last Process call used: the manual one, or in
// automatic mode the noise floor plus AutoMarginDB (at least AutoMinThresholdDBFS).
func (d *Detector) EffectiveThreshold() float64 {
	if d.automatic.Load() {
		return max(d.NoiseFloor()+AutoMarginDB, AutoMinThresholdDBFS)
	}
	return float64(math.Float32frombits(d.threshold.Load()))
}

// Process measures one frame and returns whether it is speech, hangover included.
func (d *Detector) Process(frame []int16) (speaking bool) {
	return d.ProcessLevel(pcm.LevelDBFS(frame))
}

// ProcessLevel is Process for a frame whose level in dBFS is already known.
func (d *Detector) ProcessLevel(dbfs float64) (speaking bool) {
	d.level.Store(math.Float64bits(dbfs))
	d.noise.Add(dbfs)
	floor, _ := d.noise.Value()
	d.floor.Store(math.Float64bits(floor))
	if dbfs >= d.EffectiveThreshold() {
		d.hold = int(d.hangover.Load())
		speaking = true
	} else if d.hold > 0 {
		d.hold--
		speaking = true
	}
	d.speaking.Store(speaking)
	return speaking
}

// Level returns the last frame's level in dBFS (pcm.MinDBFS before the first frame).
func (d *Detector) Level() float64 { return math.Float64frombits(d.level.Load()) }

// Speaking returns the last decision of Process.
func (d *Detector) Speaking() bool { return d.speaking.Load() }

// NoiseFloor returns the current noise-floor estimate in dBFS: the quietest frame of the last
// two seconds or so.
func (d *Detector) NoiseFloor() float64 { return math.Float64frombits(d.floor.Load()) }
