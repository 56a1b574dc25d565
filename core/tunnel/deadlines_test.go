package tunnel

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rest"
	"sdkpp/internal/clock"
)

// onFakeClock returns an enabled Tunnel on a fake clock.
func onFakeClock(start time.Time) (*Tunnel, *clock.Fake) {
	tn := new(Tunnel)
	tn.Enable(true)
	clk := clock.NewFake(start)
	tn.Clock = clk
	return tn, clk
}

// outcomes records each call's outcomes, by call.
type outcomes map[*Call][]error

// then calls c.Then, recording its outcomes in o.
func (o outcomes) then(c *Call) {
	c.Then(nil, func(err error) { o[c] = append(o[c], err) })
}

// sent sends a request over tn and requires it written.
func sent(t *testing.T, tn *Tunnel) *Call {
	t.Helper()
	c := tn.Send(context.Background(), &sender{}, rest.Request{Method: "POST", Path: "/x"})
	require.True(t, c.Sent())
	return c
}

// answerOf is the service's answer to c: 204.
func answerOf(c *Call) json.RawMessage { return result(strconv.FormatUint(c.id, 10), 204, `null`) }

// countingClock is the real clock, counting the timers armed with AfterFunc.
type countingClock struct {
	clock.Real
	armed atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.armed.Add(1)
	return c.Real.AfterFunc(d, f)
}

// Each call waits Wait from its Then, on the Tunnel's Clock: it is given up exactly at its deadline
// with ErrLost, not a nanosecond before, and once; an answered call is not given up; and one timer
// serves the calls, not one per call.
func TestDeadlines(t *testing.T) {
	tn, clk := onFakeClock(time.Unix(0, 0))
	got := outcomes{}
	a := sent(t, tn)
	got.then(a) // deadline Wait
	clk.Advance(500 * time.Millisecond)
	b := sent(t, tn)
	got.then(b) // Wait+500ms
	clk.Advance(500 * time.Millisecond)
	c := sent(t, tn)
	got.then(c) // Wait+1s
	assert.EqualValues(t, 1, clk.Armed(), "one timer for the three")

	clk.Advance(Wait - time.Second - time.Nanosecond)
	assert.Empty(t, got, "no deadline has passed")
	clk.Advance(time.Nanosecond)
	assert.Equal(t, outcomes{a: {ErrLost}}, got, "a at its deadline, and only a")

	tn.Answer(answerOf(b))
	assert.Equal(t, []error{nil}, got[b], "b answered")
	clk.Advance(500 * time.Millisecond) // b's deadline: the timer may fire, and gives b up no more
	assert.Equal(t, []error{nil}, got[b])
	assert.Empty(t, got[c])
	clk.Advance(500*time.Millisecond - time.Nanosecond)
	assert.Empty(t, got[c], "c waits until its own deadline")
	clk.Advance(time.Nanosecond)
	assert.Equal(t, outcomes{a: {ErrLost}, b: {nil}, c: {ErrLost}}, got)

	clk.Advance(10 * Wait)
	assert.Equal(t, outcomes{a: {ErrLost}, b: {nil}, c: {ErrLost}}, got, "nothing is delivered twice")
	assert.Zero(t, clk.Pending(), "no timer armed once nothing waits")
	assert.Empty(t, tn.pending)
	assert.Nil(t, tn.waiting.first)
	assert.Nil(t, tn.waiting.last)
}

// A call whose deadline is earlier than those listed (the clock was set back) is listed before
// them, and the timer is armed again for it: it is given up at its own deadline, not theirs.
func TestDeadlineEarlierThanListed(t *testing.T) {
	start := time.Unix(1000, 0)
	tn, clk := onFakeClock(start)
	got := outcomes{}
	late := sent(t, tn)
	got.then(late) // start+Wait
	clk.Set(start.Add(-5 * time.Second))
	early := sent(t, tn)
	got.then(early) // start+Wait-5s
	assert.Same(t, early, tn.waiting.first)
	assert.Same(t, late, tn.waiting.last)

	clk.Set(start.Add(Wait - 5*time.Second - time.Nanosecond))
	assert.Empty(t, got)
	clk.Advance(time.Nanosecond)
	assert.Equal(t, outcomes{early: {ErrLost}}, got)
	clk.Advance(5*time.Second - time.Nanosecond)
	assert.Equal(t, outcomes{early: {ErrLost}}, got)
	clk.Advance(time.Nanosecond)
	assert.Equal(t, outcomes{early: {ErrLost}, late: {ErrLost}}, got)
	assert.Zero(t, clk.Pending())
}

// Lost delivers ErrLost to every waiting call and stops the timer: nothing fires after it, and
// the calls listed leave the list.
func TestLostStopsTheTimer(t *testing.T) {
	tn, clk := onFakeClock(time.Unix(0, 0))
	got := outcomes{}
	a, b := sent(t, tn), sent(t, tn)
	got.then(a)
	got.then(b)
	require.Equal(t, 1, clk.Pending())
	tn.Lost()
	assert.Equal(t, outcomes{a: {ErrLost}, b: {ErrLost}}, got)
	assert.Zero(t, clk.Pending(), "the timer is stopped")
	assert.Nil(t, tn.waiting.first)
	assert.False(t, a.listed || b.listed)
	clk.Advance(2 * Wait)
	assert.Equal(t, outcomes{a: {ErrLost}, b: {ErrLost}}, got)
}

// A timer that fires after it was stopped or armed again (its callback was already on its way)
// does nothing: only the timer armed last acts, once.
func TestStaleTimerDoesNothing(t *testing.T) {
	tn, clk := onFakeClock(time.Unix(0, 0))
	got := outcomes{}
	got.then(sent(t, tn))
	stale := tn.waiting.armed
	tn.Lost()
	c := sent(t, tn)
	got.then(c)
	armed := clk.Armed()
	tn.expire(stale)
	assert.Equal(t, armed, clk.Armed(), "the stale timer arms none")
	assert.Equal(t, 1, clk.Pending(), "and leaves the one armed for c")
	clk.Advance(Wait)
	assert.Equal(t, []error{ErrLost}, got[c])
}

// On the real clock (in a bubble), a request nobody answers makes Do fail with ErrLost exactly
// Wait after it was sent, and leaves no goroutine or timer behind: the bubble ends.
func TestDoTimesOutAtWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tn Tunnel
		tn.Enable(true)
		start := time.Now()
		err := tn.Do(context.Background(), &sender{}, rest.Request{Method: "POST", Path: "/x"}, nil)
		assert.ErrorIs(t, err, ErrLost)
		assert.Equal(t, Wait, time.Since(start))
		assert.Empty(t, tn.pending)
	})
}

// Under a steady flow of answered requests the timer fires about once per Wait, not once per
// request, and gives up none of them.
func TestDeadlinesSteadyFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tn Tunnel
		tn.Enable(true)
		clk := &countingClock{}
		tn.Clock = clk
		got := outcomes{}
		for range 1000 {
			c := sent(t, &tn)
			got.then(c)
			time.Sleep(100 * time.Millisecond) // 100 s in all: 6-7 Waits
			tn.Answer(answerOf(c))
			require.Equal(t, []error{nil}, got[c])
		}
		assert.Len(t, got, 1000)
		assert.LessOrEqual(t, clk.armed.Load(), int64(100*time.Second/Wait)+1, "about one timer per Wait")
		assert.Empty(t, tn.pending)
		assert.Nil(t, tn.waiting.first)
		tn.Lost() // stops the timer, so that the bubble ends
	})
}
