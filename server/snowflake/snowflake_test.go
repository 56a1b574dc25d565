package snowflake

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
)

func TestIDsIncreaseWhenTheClockStandsStill(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g := New(clock.NewFake(at), 0)
	a, b := g.Next(), g.Next()
	require.Greater(t, b, a, "ids not increasing: %d then %d", a, b)
	require.True(t, Time(a).Equal(at), "Time(%d) = %v, want %v", a, Time(a), at)
	// After a restart with an older clock, ids continue above the stored floor.
	g2 := New(clock.NewFake(at.Add(-time.Hour)), b)
	c := g2.Next()
	require.Greater(t, c, b, "id %d not above floor %d", c, b)
}
