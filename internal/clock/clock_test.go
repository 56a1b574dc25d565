package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// fired reports whether ch holds a value now, without waiting.
func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case got := <-ch:
		return got, true
	default:
		return time.Time{}, false
	}
}

func TestFakeStandsStillUntilAdvanced(t *testing.T) {
	f := NewFake(epoch)
	timer := f.NewTimer(time.Second)
	assert.Equal(t, epoch, f.Now())
	require.Empty(t, timer.C(), "the timer fired before the clock moved")
	f.Advance(999 * time.Millisecond)
	assert.Len(t, timer.C(), 0, "fired early")
	f.Advance(time.Millisecond)
	require.Len(t, timer.C(), 1)
	assert.Equal(t, epoch.Add(time.Second), <-timer.C())
	assert.False(t, timer.Stop(), "Stop after firing")
	assert.Equal(t, 0, f.Pending())
}

func TestFakeFiresInDueOrder(t *testing.T) {
	f := NewFake(epoch)
	var order []string
	var seen []time.Time
	note := func(name string) func() {
		return func() { order = append(order, name); seen = append(seen, f.Now()) }
	}
	f.AfterFunc(3*time.Second, note("c"))
	f.AfterFunc(time.Second, note("a"))
	f.AfterFunc(time.Second, note("a2")) // same instant: creation order
	stopped := f.AfterFunc(2*time.Second, note("stopped"))
	f.AfterFunc(2*time.Second, func() {
		note("b")()
		f.AfterFunc(500*time.Millisecond, note("armed by b")) // due within the advance
		f.AfterFunc(time.Hour, note("later"))
	})
	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop(), "a second Stop")

	f.Advance(3 * time.Second)
	assert.Equal(t, []string{"a", "a2", "b", "armed by b", "c"}, order)
	assert.Equal(t, []time.Time{epoch.Add(time.Second), epoch.Add(time.Second), epoch.Add(2 * time.Second),
		epoch.Add(2500 * time.Millisecond), epoch.Add(3 * time.Second)}, seen)
	assert.Equal(t, epoch.Add(3*time.Second), f.Now())
	assert.Equal(t, 1, f.Pending(), "the timer an hour away")
}

// A function timer already due waits for the next move: it never runs on the goroutine that
// arms it, which may hold locks. A channel timer already due fires at once, as a real one does.
func TestFakeDueTimers(t *testing.T) {
	f := NewFake(epoch)
	ran := 0
	f.AfterFunc(-time.Second, func() { ran++ })
	f.AfterFunc(0, func() { ran++ })
	assert.Equal(t, 0, ran)
	f.Advance(-time.Minute) // taken as 0: fires what is due, does not go back
	assert.Equal(t, 2, ran)
	assert.Equal(t, epoch, f.Now())

	past := Until(f, epoch.Add(-time.Hour))
	got, ok := fired(past.C())
	require.True(t, ok, "a timer for the past did not fire at once")
	assert.Equal(t, epoch, got)
	assert.False(t, past.Stop())
}

// Set moves forward as Advance does; back, it changes only what Now shows.
func TestFakeSet(t *testing.T) {
	f := NewFake(epoch)
	due := Until(f, epoch.Add(time.Hour))
	f.Set(epoch.Add(-time.Hour))
	assert.Equal(t, epoch.Add(-time.Hour), f.Now())
	_, ok := fired(due.C())
	assert.False(t, ok, "going back fired a timer")
	f.Set(epoch.Add(time.Hour))
	got, ok := fired(due.C())
	require.True(t, ok)
	assert.Equal(t, epoch.Add(time.Hour), got)
}

func TestFakeWaitArmed(t *testing.T) {
	f := NewFake(epoch)
	f.AfterFunc(time.Hour, func() {}).Stop()
	require.Equal(t, uint64(1), f.Armed(), "a stopped timer was armed all the same")
	done := make(chan error, 1)
	go func() { done <- Sleep(context.Background(), f, time.Minute) }()
	require.NoError(t, f.WaitArmed(context.Background(), 2))
	assert.Equal(t, 1, f.Pending())
	f.Advance(time.Minute)
	assert.NoError(t, <-done)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, f.WaitArmed(ctx, 3), context.Canceled)
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		require.NoError(t, Sleep(context.Background(), Real{}, time.Hour))
		assert.Equal(t, time.Hour, time.Since(start))

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, Sleep(ctx, Real{}, time.Hour), context.Canceled)
		assert.Equal(t, time.Hour, time.Since(start), "a cancelled Sleep returns at once")
	})
}

func TestRealAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan time.Time, 1)
		Real{}.AfterFunc(time.Minute, func() { got <- time.Now() })
		stopped := Real{}.AfterFunc(time.Minute, func() { assert.Fail(t, "a stopped timer fired") })
		assert.True(t, stopped.Stop())
		start := time.Now()
		assert.Equal(t, start.Add(time.Minute), <-got)
		assert.Nil(t, Real{}.AfterFunc(time.Second, func() {}).C())
	})
}

// The offset clock runs on the machine's time; in a synctest bubble that time is the bubble's,
// so the test jumps and waits without waiting for real.
func TestOffsetRunsAndJumps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewOffset(0)
		defer c.Stop()
		before := c.Now()
		jumped := c.NewTimer(time.Hour)
		ran := make(chan struct{})
		c.AfterFunc(time.Hour, func() { close(ran) })
		c.Advance(2 * time.Hour)
		_, woke := fired(jumped.C())
		require.True(t, woke, "a jump did not fire the timer")
		synctest.Wait()
		select {
		case <-ran:
		default:
			require.Fail(t, "a jump did not run the function")
		}
		require.GreaterOrEqual(t, c.Now().Sub(before), 2*time.Hour, "jump not visible in Now")

		// Real time passing also fires a timer, and not before it is due.
		soon := c.NewTimer(10 * time.Millisecond)
		stopped := c.NewTimer(10 * time.Millisecond)
		assert.True(t, stopped.Stop())
		time.Sleep(9 * time.Millisecond)
		synctest.Wait()
		_, woke = fired(soon.C())
		require.False(t, woke, "fired before its time")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		_, woke = fired(soon.C())
		require.True(t, woke, "real time did not fire the timer")
		_, woke = fired(stopped.C())
		assert.False(t, woke, "a stopped timer fired")
		c.Set(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		assert.Equal(t, 2030, c.Now().Year(), "Set: %v", c.Now())
	})
}

func TestParse(t *testing.T) {
	c, stop, err := Parse("fixed:2026-03-01T00:00:00Z")
	require.NoError(t, err)
	defer stop()
	assert.True(t, c.Now().Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), "fixed: %v", c.Now())
	assert.Implements(t, (*Controllable)(nil), c, "fixed clock not controllable")
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

func TestWithTimeout(t *testing.T) {
	f := NewFake(epoch)
	ctx, cancel := WithTimeout(context.Background(), f, time.Minute)
	defer cancel()
	f.Advance(59 * time.Second)
	require.NoError(t, ctx.Err(), "cancelled early")
	f.Advance(time.Second)
	require.Error(t, ctx.Err())
	assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)

	ctx2, cancel2 := WithTimeout(context.Background(), f, time.Minute)
	cancel2()
	assert.ErrorIs(t, context.Cause(ctx2), context.Canceled)
	assert.Equal(t, 0, f.Pending(), "cancel stops the timer")
}

func TestChore(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var c Chore
	var got []bool
	for _, at := range []time.Duration{0, time.Second, 59 * time.Second, time.Minute, time.Minute + time.Second, -time.Hour} {
		got = append(got, c.Due(t0.Add(at), time.Minute))
	}
	assert.Equal(t, []bool{true, false, false, true, false, true}, got, "first, within, within, after, within, back in time")
}
