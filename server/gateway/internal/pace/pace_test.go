package pace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rate meter calls the hub busy above BusyRate pushes a second, and not busy once pushes
// stop.
func TestRateMeter(t *testing.T) {
	var now time.Duration // the meter's clock, moved by the test
	m := &Meter{elapsed: func() time.Duration { return now }}
	require.False(t, m.Busy(), "a new meter is busy")
	for range 3 * Window / time.Millisecond {
		m.Add(BusyRate / 100) // far above BusyRate: a hundredth of a second's worth each millisecond
		now += time.Millisecond
	}
	assert.True(t, m.Busy(), "not busy under load")
	now += 3 * Window
	assert.False(t, m.Busy(), "still busy after the pushes stopped")
	for range 3 * Window / time.Millisecond {
		m.Add(1) // a trickle
		now += time.Millisecond
	}
	assert.False(t, m.Busy(), "busy under a trickle")
}
