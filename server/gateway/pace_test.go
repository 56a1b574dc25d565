package gateway

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rate meter calls the hub busy above busyRate pushes a second, and not busy once pushes
// stop.
func TestRateMeter(t *testing.T) {
	m := newRateMeter()
	assert.False(t, m.isBusy(), "a new meter is busy")
	for end := time.Now().Add(3 * rateWindow); time.Now().Before(end); {
		// Far above busyRate: a tenth of a second's worth about every millisecond (a loaded
		// machine's sleeps may take ten times longer and still leave it above).
		m.add(busyRate / 10)
		time.Sleep(time.Millisecond)
	}
	assert.True(t, m.isBusy(), "not busy under load")
	time.Sleep(3 * rateWindow)
	assert.False(t, m.isBusy(), "still busy after the pushes stopped")
	for end := time.Now().Add(3 * rateWindow); time.Now().Before(end); {
		m.add(1) // a trickle
		time.Sleep(time.Millisecond)
	}
	assert.False(t, m.isBusy(), "busy under a trickle")
}

// Under a burst that makes the hub busy, writes are paced and every dispatch still arrives once,
// in order; once quiet again, a dispatch leaves at once.
func TestPacedWritesKeepOrder(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReplayLimit = 100000 })
	c := e.dial()
	c.identify("user-1")
	// Other sessions' traffic keeps the hub busy, however fast this machine dispatches (a
	// dispatch to a quiet connection is written at once, which takes a while under -race).
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				e.hub.rate.add(busyRate / 100)
			}
		}
	}()
	for !e.hub.rate.isBusy() {
		time.Sleep(time.Millisecond)
	}
	const n = 20000
	for i := range n {
		e.hub.Dispatch(1, "TEST_EVENT", i)
	}
	close(stop)
	<-stopped
	for i := range n {
		p := c.expectDispatch("TEST_EVENT", int64(i+2))
		require.Equal(t, strconv.Itoa(i), string(p.D), "dispatch %d", i)
	}
	time.Sleep(3 * rateWindow)
	start := time.Now()
	e.hub.Dispatch(1, "TEST_EVENT", -1)
	c.expectDispatch("TEST_EVENT", n+2)
	if d := time.Since(start); d >= busyPace {
		t.Logf("a quiet dispatch took %v", d) // timing on a shared machine: reported, not failed
	}
}
