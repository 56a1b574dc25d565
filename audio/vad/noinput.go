package vad

import (
	"math"
	"sync/atomic"
	"time"

	"sdkpp/audio/pcm"
)

// Event is an edge reported by NoInput.
type Event uint8

const (
	// EventNone means nothing changed with this frame.
	EventNone Event = iota
	// EventNoInput means the input has just stayed below the threshold for the whole duration.
	EventNoInput
	// EventInputRecovered means a frame reached the threshold again after EventNoInput.
	EventInputRecovered
)

// String names the event.
func (e Event) String() string {
	switch e {
	case EventNone:
		return "none"
	case EventNoInput:
		return "no input"
	case EventInputRecovered:
		return "input recovered"
	}
	return "unknown"
}

// NoInput detects a microphone that delivers nothing usable: it reports EventNoInput once when
// the level has stayed below a dBFS threshold for a given duration, and EventInputRecovered once
// when a frame reaches the threshold again. Process runs on one goroutine; Configure and Silent
// may be called from any goroutine.
type NoInput struct {
	threshold atomic.Uint64 // float64 bits
	frames    atomic.Int64  // frames below the threshold that make "no input"
	frame     atomic.Int64  // a frame's duration (0: pcm.FrameDurationMs)
	duration  atomic.Int64  // the configured duration
	silent    atomic.Bool

	below int64 // consecutive frames below the threshold, owned by Process
}

// NewNoInput returns a detector for the threshold in dBFS (clamped to [pcm.MinDBFS, 0]) and the
// duration, rounded up to whole frames (at least one).
func NewNoInput(thresholdDBFS float64, duration time.Duration) *NoInput {
	n := &NoInput{}
	n.Configure(thresholdDBFS, duration)
	return n
}

// Configure changes the threshold and the duration; the frames already counted below the
// threshold still count.
func (n *NoInput) Configure(thresholdDBFS float64, duration time.Duration) {
	thresholdDBFS = math.Max(pcm.MinDBFS, math.Min(0, thresholdDBFS))
	n.threshold.Store(math.Float64bits(thresholdDBFS))
	n.duration.Store(int64(duration))
	n.count()
}

// SetFrame sets how long each frame Process measures lasts (pcm.FrameDurationMs until set), so
// that the duration keeps its length; the frames already counted still count.
func (n *NoInput) SetFrame(frame time.Duration) {
	n.frame.Store(int64(max(frame, time.Millisecond)))
	n.count()
}

// count sets the number of frames below the threshold that make "no input".
func (n *NoInput) count() {
	frame := time.Duration(n.frame.Load())
	if frame == 0 {
		frame = pcm.FrameDurationMs * time.Millisecond
	}
	duration := time.Duration(n.duration.Load())
	n.frames.Store(max(int64((duration+frame-1)/frame), 1))
}

// Process measures one frame and returns the edge it causes, if any.
func (n *NoInput) Process(frame []int16) Event { return n.ProcessLevel(pcm.LevelDBFS(frame)) }

// ProcessLevel is Process for a frame whose level in dBFS is already known (Detector.Level).
// A frame exactly at the threshold counts as input.
func (n *NoInput) ProcessLevel(dbfs float64) Event {
	if dbfs >= math.Float64frombits(n.threshold.Load()) {
		n.below = 0
		if n.silent.Load() {
			n.silent.Store(false)
			return EventInputRecovered
		}
		return EventNone
	}
	n.below++
	if !n.silent.Load() && n.below >= n.frames.Load() {
		n.silent.Store(true)
		return EventNoInput
	}
	return EventNone
}

// Silent reports whether the detector is in the no-input state.
func (n *NoInput) Silent() bool { return n.silent.Load() }
