package clock

import (
	"testing"
	"time"
)

func TestFakeWakesWaitersOnlyWhenMoved(t *testing.T) {
	c := NewFake(time.Date(2026, 2, 22, 23, 59, 0, 0, time.UTC))
	ch, stop := c.At(c.Now().Add(time.Minute))
	defer stop()
	select {
	case <-ch:
		t.Fatal("woke before the clock moved")
	case <-time.After(20 * time.Millisecond):
	}
	c.Advance(59 * time.Second)
	select {
	case <-ch:
		t.Fatal("woke early")
	default:
	}
	c.Advance(time.Second)
	select {
	case got := <-ch:
		if !got.Equal(time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("woke with %v", got)
		}
	case <-time.After(time.Second):
		t.Fatal("did not wake")
	}
	// A waiter for the past fires at once.
	past, stop2 := c.At(c.Now().Add(-time.Hour))
	defer stop2()
	<-past
}

func TestOffsetRunsAndJumps(t *testing.T) {
	c := NewOffset(0)
	defer c.Stop()
	before := c.Now()
	ch, stop := c.At(before.Add(time.Hour))
	defer stop()
	c.Advance(2 * time.Hour)
	select {
	case <-ch:
	case <-time.After(time.Second):
		t.Fatal("jump did not wake the waiter")
	}
	if c.Now().Sub(before) < 2*time.Hour {
		t.Fatal("jump not visible in Now")
	}
	// Real time passing also wakes a waiter.
	soon, stop2 := c.At(c.Now().Add(10 * time.Millisecond))
	defer stop2()
	select {
	case <-soon:
	case <-time.After(2 * time.Second):
		t.Fatal("real time did not wake the waiter")
	}
	c.Set(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if c.Now().Year() != 2030 {
		t.Fatalf("Set: %v", c.Now())
	}
}

func TestParse(t *testing.T) {
	c, stop, err := Parse("fixed:2026-03-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !c.Now().Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("fixed: %v", c.Now())
	}
	c2, stop2, err := Parse("offset:-48h")
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	if d := time.Since(c2.Now()); d < 47*time.Hour || d > 49*time.Hour {
		t.Fatalf("offset: %v", d)
	}
	if _, ok := c2.(Controllable); !ok {
		t.Fatal("offset clock not controllable")
	}
	for _, bad := range []string{"bogus", "offset:x", "fixed:yesterday", "real:1"} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if r, _, _ := Parse(""); r != (Real{}) {
		t.Fatal("empty spec is not the real clock")
	}
}
