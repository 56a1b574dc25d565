package vad

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sdkpp/audio/pcm"
)

func TestNoInputEdges(t *testing.T) {
	n := NewNoInput(-70, 100*time.Millisecond) // 5 frames
	silence := make([]int16, pcm.FrameSamples)
	voice := tone(-40)

	for i := range 4 {
		assert.Equal(t, EventNone, n.Process(silence), "frame %d", i)
	}
	assert.False(t, n.Silent())
	assert.Equal(t, EventNoInput, n.Process(silence))
	assert.True(t, n.Silent())
	for range 20 {
		assert.Equal(t, EventNone, n.Process(silence), "the edge is reported once")
	}
	assert.Equal(t, EventInputRecovered, n.Process(voice))
	assert.False(t, n.Silent())
	assert.Equal(t, EventNone, n.Process(voice))

	// A short dip does not trigger.
	for range 4 {
		assert.Equal(t, EventNone, n.Process(silence))
	}
	assert.Equal(t, EventNone, n.Process(voice))
	for range 4 {
		assert.Equal(t, EventNone, n.Process(silence))
	}
	assert.Equal(t, EventNoInput, n.Process(silence))
}

func TestNoInputConfigure(t *testing.T) {
	tests := []struct {
		name     string
		duration time.Duration
		frames   int64
	}{
		{"exact", time.Second, 50},
		{"rounded up", 21 * time.Millisecond, 2},
		{"zero", 0, 1},
		{"negative", -time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNoInput(-60, tt.duration)
			assert.Equal(t, tt.frames, n.frames.Load())
		})
	}
	ten := NewNoInput(-60, time.Second)
	ten.SetFrame(10 * time.Millisecond)
	assert.EqualValues(t, 100, ten.frames.Load(), "10 ms frames: twice as many")
	ten.Configure(-60, 21*time.Millisecond)
	assert.EqualValues(t, 3, ten.frames.Load(), "the frame is kept across Configure")

	n := NewNoInput(-300, time.Second)
	assert.Equal(t, EventNone, n.ProcessLevel(pcm.MinDBFS), "a threshold clamped to -100 passes silence")
	n.Configure(-40, 20*time.Millisecond)
	assert.Equal(t, EventNoInput, n.ProcessLevel(-41))
	assert.Equal(t, EventInputRecovered, n.ProcessLevel(-40), "at the threshold is input")
}

func TestEventString(t *testing.T) {
	assert.Equal(t, "no input", EventNoInput.String())
	assert.Equal(t, "input recovered", EventInputRecovered.String())
	assert.Equal(t, "none", EventNone.String())
	assert.Equal(t, "unknown", Event(9).String())
}
