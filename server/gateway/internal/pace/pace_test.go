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

// A connection waits until BusyPace after its last write when the hub is busy or it has a
// backlog, and not otherwise, nor when it never wrote.
func TestWait(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name          string
		busy, backlog bool
		last          time.Time
		want          time.Duration
	}{
		{"quiet", false, false, now.Add(-time.Millisecond), 0},
		{"busy", true, false, now.Add(-time.Millisecond), BusyPace - time.Millisecond},
		{"backlog", false, true, now.Add(-time.Millisecond), BusyPace - time.Millisecond},
		{"busy, never wrote", true, true, time.Time{}, 0},
		{"backlog, wrote long ago", false, true, now.Add(-2 * BusyPace), 0},
	} {
		assert.Equal(t, c.want, Wait(c.busy, c.backlog, c.last, now, BusyPace), c.name)
	}
}
