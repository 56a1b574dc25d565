package clock

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fired reports whether ch holds a value now, without waiting.
func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case got := <-ch:
		return got, true
	default:
		return time.Time{}, false
	}
}

// A frozen clock has no timer of its own: its waiters are woken inside Advance and Set, so
// looking at the channel right after a move is enough, and nothing needs to wait.
func TestFakeWakesWaitersOnlyWhenMoved(t *testing.T) {
	c := NewFake(time.Date(2026, 2, 22, 23, 59, 0, 0, time.UTC))
	ch, stop := c.At(c.Now().Add(time.Minute))
	defer stop()
	_, woke := fired(ch)
	require.False(t, woke, "woke before the clock moved")
	c.Advance(59 * time.Second)
	_, woke = fired(ch)
	require.False(t, woke, "woke early")
	c.Advance(time.Second)
	got, woke := fired(ch)
	require.True(t, woke, "did not wake")
	assert.True(t, got.Equal(time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC)), "woke with %v", got)
	// A waiter for the past fires at once.
	past, stop2 := c.At(c.Now().Add(-time.Hour))
	defer stop2()
	_, woke = fired(past)
	assert.True(t, woke, "a waiter for the past did not fire at once")
}

// The offset clock runs on the machine's time; in a synctest bubble that time is the bubble's,
// so the test jumps and waits without waiting for real.
func TestOffsetRunsAndJumps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewOffset(0)
		defer c.Stop()
		before := c.Now()
		ch, stop := c.At(before.Add(time.Hour))
		defer stop()
		c.Advance(2 * time.Hour)
		_, woke := fired(ch)
		require.True(t, woke, "jump did not wake the waiter")
		require.GreaterOrEqual(t, c.Now().Sub(before), 2*time.Hour, "jump not visible in Now")
		// Real time passing also wakes a waiter, and not before it is due.
		soon, stop2 := c.At(c.Now().Add(10 * time.Millisecond))
		defer stop2()
		time.Sleep(9 * time.Millisecond)
		synctest.Wait()
		_, woke = fired(soon)
		require.False(t, woke, "woke before its time")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		_, woke = fired(soon)
		require.True(t, woke, "real time did not wake the waiter")
		c.Set(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		assert.Equal(t, 2030, c.Now().Year(), "Set: %v", c.Now())
	})
}

func TestParse(t *testing.T) {
	c, stop, err := Parse("fixed:2026-03-01T00:00:00Z")
	require.NoError(t, err)
	defer stop()
	assert.True(t, c.Now().Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), "fixed: %v", c.Now())
	c2, stop2, err := Parse("offset:-48h")
	require.NoError(t, err)
	defer stop2()
	assert.InDelta(t, 48*time.Hour, time.Since(c2.Now()), float64(time.Hour), "offset")
	assert.Implements(t, (*Controllable)(nil), c2, "offset clock not controllable")
	for _, bad := range []string{"bogus", "offset:x", "fixed:yesterday", "real:1"} {
		_, _, err := Parse(bad)
		assert.Error(t, err, "Parse(%q) accepted", bad)
	}
	r, _, _ := Parse("")
	assert.Equal(t, Real{}, r, "empty spec is not the real clock")
}
