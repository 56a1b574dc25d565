package snowflake

import (
	"testing"
	"time"

	"sdkpp/server/clock"
)

func TestIDsIncreaseWhenTheClockStandsStill(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g := New(clock.NewFake(at), 0)
	a, b := g.Next(), g.Next()
	if b <= a {
		t.Fatalf("ids not increasing: %d then %d", a, b)
	}
	if !Time(a).Equal(at) {
		t.Fatalf("Time(%d) = %v, want %v", a, Time(a), at)
	}
	// After a restart with an older clock, ids continue above the stored floor.
	g2 := New(clock.NewFake(at.Add(-time.Hour)), b)
	if c := g2.Next(); c <= b {
		t.Fatalf("id %d not above floor %d", c, b)
	}
}
