package pcm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLevelDBFS(t *testing.T) {
	full := make([]int16, FrameSamples)
	for i := range full {
		if i%2 == 0 {
			full[i] = math.MaxInt16
		} else {
			full[i] = math.MinInt16 + 1
		}
	}
	half := make([]int16, FrameSamples)
	for i := range half {
		half[i] = 16384
	}
	tests := []struct {
		name    string
		samples []int16
		want    float64
	}{
		{"empty", nil, MinDBFS},
		{"silence", make([]int16, FrameSamples), MinDBFS},
		{"full scale", full, 0},
		{"half scale", half, -6.02},
		{"one LSB", []int16{1}, -90.31},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, LevelDBFS(tt.samples), 0.01)
		})
	}
}

func TestClamp16(t *testing.T) {
	assert.Equal(t, int16(math.MaxInt16), Clamp16(40000))
	assert.Equal(t, int16(math.MinInt16), Clamp16(-40000))
	assert.Equal(t, int16(-5), Clamp16(-5))
}

func TestFrameSizes(t *testing.T) {
	assert.Equal(t, 960, FrameSamples)
	assert.Equal(t, 480, PeriodSamples)
}
