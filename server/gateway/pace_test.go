package gateway

import (
	"encoding/json"
	"testing"
	"time"
)

// The rate meter calls the hub busy above busyRate pushes a second, and not busy once pushes
// stop.
func TestRateMeter(t *testing.T) {
	m := newRateMeter()
	if m.isBusy() {
		t.Fatal("a new meter is busy")
	}
	for end := time.Now().Add(3 * rateWindow); time.Now().Before(end); {
		m.add(busyRate / 100) // far above busyRate: a hundredth of a second's worth at a time
		time.Sleep(time.Millisecond)
	}
	if !m.isBusy() {
		t.Fatal("not busy under load")
	}
	time.Sleep(3 * rateWindow)
	if m.isBusy() {
		t.Fatal("still busy after the pushes stopped")
	}
	for end := time.Now().Add(3 * rateWindow); time.Now().Before(end); {
		m.add(1) // a trickle
		time.Sleep(time.Millisecond)
	}
	if m.isBusy() {
		t.Fatal("busy under a trickle")
	}
}

// Under a burst that makes the hub busy, writes are paced and every dispatch still arrives once,
// in order; once quiet again, a dispatch leaves at once.
func TestPacedWritesKeepOrder(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReplayLimit = 100000 })
	c := e.dial()
	c.identify("user-1")
	const n = 20000
	for i := range n {
		e.hub.Dispatch(1, "TEST_EVENT", i)
		if i%500 == 499 {
			time.Sleep(time.Millisecond) // spread over several windows of the rate meter
		}
	}
	if !e.hub.rate.isBusy() {
		t.Fatal("a burst of 20,000 dispatches did not make the hub busy")
	}
	for i := range n {
		p := c.expectDispatch("TEST_EVENT", int64(i+2))
		var got int
		if json.Unmarshal(p.D, &got) != nil || got != i {
			t.Fatalf("dispatch %d carried %s", i, p.D)
		}
	}
	time.Sleep(3 * rateWindow)
	start := time.Now()
	e.hub.Dispatch(1, "TEST_EVENT", -1)
	c.expectDispatch("TEST_EVENT", n+2)
	if d := time.Since(start); d >= busyPace {
		t.Logf("a quiet dispatch took %v", d) // timing on a shared machine: reported, not failed
	}
}
