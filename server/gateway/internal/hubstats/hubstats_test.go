package hubstats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Counters count dispatches by event with their deliveries, and closes by code; the copies
// they give do not change with later counts.
func TestCounters(t *testing.T) {
	var c Counters
	assert.Nil(t, c.Closes(), "no close yet")
	c.Dispatched("A", 3)
	c.Dispatched("A", 2)
	c.Dispatched("B", 0)
	c.Closed(4004)
	c.Closed(4004)
	c.Closed(0)
	got := map[string][2]uint64{}
	c.Events(func(event string, dispatches, deliveries uint64) { got[event] = [2]uint64{dispatches, deliveries} })
	assert.Equal(t, map[string][2]uint64{"A": {2, 5}, "B": {1, 0}}, got)
	closes := c.Closes()
	assert.Equal(t, map[int]uint64{4004: 2, 0: 1}, closes)
	c.Closed(0)
	assert.Equal(t, uint64(1), closes[0], "a copy")
}
