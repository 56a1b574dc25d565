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

func TestFakeDueTimersWaitForAnAdvance(t *testing.T) {
	f := NewFake(epoch)
	ran := 0
	f.AfterFunc(-time.Second, func() { ran++ })
	f.AfterFunc(0, func() { ran++ })
	assert.Equal(t, 0, ran)
	f.Advance(-time.Minute) // taken as 0: fires what is due, does not go back
	assert.Equal(t, 2, ran)
	assert.Equal(t, epoch, f.Now())
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
		fired := make(chan time.Time, 1)
		Real{}.AfterFunc(time.Minute, func() { fired <- time.Now() })
		stopped := Real{}.AfterFunc(time.Minute, func() { assert.Fail(t, "a stopped timer fired") })
		assert.True(t, stopped.Stop())
		start := time.Now()
		assert.Equal(t, start.Add(time.Minute), <-fired)
		assert.Nil(t, Real{}.AfterFunc(time.Second, func() {}).C())
	})
}
