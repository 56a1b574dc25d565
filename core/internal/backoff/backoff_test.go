package backoff

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDelay(t *testing.T) {
	p := Policy{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: 0.5}
	tests := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{0, 0, 100 * time.Millisecond},
		{1, 0, 200 * time.Millisecond},
		{3, 0, 800 * time.Millisecond},
		{4, 0, time.Second}, // capped
		{40, 0, time.Second},
		{0, 0.999, 50*time.Millisecond + 50*time.Microsecond}, // at most half taken off
		{4, 0.5, 750 * time.Millisecond},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, p.Delay(tt.attempt, tt.r), "attempt %d, r %v", tt.attempt, tt.r)
	}
	assert.Equal(t, time.Second, Policy{Initial: time.Second, Max: time.Second, Jitter: -1}.Delay(0, 0.9), "negative jitter is none")
	assert.Equal(t, time.Duration(0), Policy{Initial: time.Second, Max: time.Second, Jitter: 7}.Delay(0, 1), "jitter is at most 1")
}
