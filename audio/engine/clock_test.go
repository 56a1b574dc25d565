package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testInterval = 10 * time.Millisecond

// at is a point on a test's clock, ms milliseconds after its start.
func at(ms float64) time.Time {
	return time.Unix(1000, 0).Add(time.Duration(ms * float64(time.Millisecond)))
}

func TestJustInTimeDue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		takes    uint64
		last     float64 // ms
		ahead    int
		wantTake uint64
		wantAt   float64 // ms
	}{
		// An empty ring (no lead): the next take needs the period; it is due a margin before.
		{"empty ring", 7, 100, 0, 8, 100 + 10 - 4},
		// One period beyond the lead waits in the ring: the take after next needs the new one.
		{"one ahead", 7, 100, 1, 9, 100 + 20 - 4},
		// The ring holds less than the lead: due already, for the next take.
		{"below the lead", 7, 100, -1, 8, 100 - 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJustInTime(testInterval)
			take, due := j.due(tc.takes, at(tc.last), tc.ahead)
			assert.Equal(t, tc.wantTake, take)
			assert.Equal(t, at(tc.wantAt), due)
		})
	}
}

// play runs the scheduler against a device that takes a period every interval plus early[k] (ms,
// negative: early), and an engine that writes late (ms) after each deadline. It returns the
// margin after each take and how many takes found no period written before them.
func play(j *justInTime, takes int, early func(k int) float64, late float64) (margins []time.Duration, short int) {
	last, n := at(0), uint64(1) // the first take was at 0
	for k := 2; k <= takes+1; k++ {
		take, due := j.due(n, last, 0)
		done := due.Add(time.Duration(late * float64(time.Millisecond)))
		j.wrote(take, last, due, done)
		actual := at(float64(k-1)*10 + early(k))
		if done.After(actual) {
			short++
		}
		last, n = actual, uint64(k)
		j.observe(n, last)
		margins = append(margins, j.margin)
	}
	return margins, short
}

func TestJustInTimeMarginFallsOnASteadyDevice(t *testing.T) {
	j := newJustInTime(testInterval)
	require.Equal(t, jitFirstMargin, j.margin)
	margins, short := play(&j, 3000, func(int) float64 { return 0 }, 0.2)
	assert.Zero(t, short, "no take may find its period missing")
	// Each write needed 0.2 ms: the margin comes down to the least allowed.
	assert.Less(t, margins[len(margins)-1], jitMinMargin+50*time.Microsecond)
	assert.GreaterOrEqual(t, margins[len(margins)-1], jitMinMargin)
	for i := 1; i < len(margins); i++ {
		require.LessOrEqual(t, margins[i], margins[i-1], "a steady device never raises the margin")
	}
	assert.Equal(t, uint64(3000), j.measured)
}

func TestJustInTimeMarginRisesAtOnceForAnEarlyTake(t *testing.T) {
	j := newJustInTime(testInterval)
	// Settle on a steady device first.
	play(&j, 2000, func(int) float64 { return 0 }, 0.2)
	settled := j.margin
	// Every 50th take comes 3 ms early, as a device taking in bursts does.
	margins, short := play(&j, 500, func(k int) float64 {
		if k%50 == 0 {
			return -3
		}
		return 0
	}, 0.2)
	assert.Equal(t, 1, short, "only the first early take finds its period missing")
	// The need was 3.2 ms (plus the margin it had): the margin covers it with the guard, and the
	// slow fall keeps it above 3.2 ms until the next early take.
	assert.Greater(t, margins[len(margins)-1], 3200*time.Microsecond)
	assert.Greater(t, margins[len(margins)-1], settled)
	assert.InDelta(t, 3200*time.Microsecond, j.worst, float64(time.Microsecond), "the need of a take 3 ms early")
}

func TestJustInTimeMarginStaysWithinAPeriod(t *testing.T) {
	j := newJustInTime(testInterval)
	// An engine 30 ms late every time: the margin stops at a period, the old schedule (writing
	// as the device takes the period before); the pacing's lead does the rest.
	margins, _ := play(&j, 10, func(int) float64 { return 0 }, 30)
	assert.Equal(t, testInterval, margins[len(margins)-1])
}

func TestJustInTimeMeasuresOneTimedWriteAtATime(t *testing.T) {
	j := newJustInTime(testInterval)
	// A write that catches up on a ring below its lead (due before the last take) is not measured.
	take, due := j.due(5, at(50), -1)
	j.wrote(take, at(50), due, at(51))
	j.observe(6, at(60))
	assert.Zero(t, j.measured)

	// A timed write is measured at its take, and a second one written before that take is not.
	take, due = j.due(6, at(60), 0)
	j.wrote(take, at(60), due, due.Add(200*time.Microsecond))
	take2, due2 := j.due(6, at(60), 1)
	j.wrote(take2, at(60), due2, due2)
	j.observe(6, at(60))
	assert.Zero(t, j.measured, "its take has not come yet")
	// The clock skipped past the take between two looks: the last stamp stands for it.
	j.observe(8, at(80))
	assert.Equal(t, uint64(1), j.measured)
	assert.Less(t, j.margin, jitFirstMargin, "a write done well before the take lowers the margin")
}

func TestJustInTimeUnderrunGoesToAWholePeriodFirst(t *testing.T) {
	j := newJustInTime(testInterval)
	play(&j, 2000, func(int) float64 { return 0 }, 0.2)
	require.Less(t, j.margin, 2*time.Millisecond)
	assert.True(t, j.short(), "the margin had room: it takes the underrun")
	assert.Equal(t, testInterval, j.margin)
	assert.False(t, j.short(), "at a whole period the lead must grow instead")
	// It holds a whole period for the calm spell, then falls again on a steady device.
	margins, short := play(&j, firstCalm+1000, func(int) float64 { return 0 }, 0.2)
	assert.Zero(t, short)
	for i := range firstCalm {
		require.Equal(t, testInterval, margins[i], "write %d of the calm spell", i)
	}
	assert.Less(t, margins[len(margins)-1], testInterval/2)
}

// A machine that leaves the device short again after the margin fell holds a whole period for
// twice as long each time, up to maxCalm: bursts of load stop costing an underrun each.
func TestJustInTimeHoldDoublesWithEachUnderrun(t *testing.T) {
	j := newJustInTime(testInterval)
	play(&j, 2000, func(int) float64 { return 0 }, 0.2)
	for _, hold := range []int{firstCalm, 2 * firstCalm, 4 * firstCalm, maxCalm, maxCalm} {
		require.True(t, j.short(), "the margin had fallen below a period")
		margins, short := play(&j, hold+2000, func(int) float64 { return 0 }, 0.2)
		require.Zero(t, short)
		assert.Equal(t, testInterval, margins[hold-1], "still held at the spell's last write (spell %d)", hold)
		assert.Less(t, margins[hold+1], testInterval, "falling after the spell of %d", hold)
		require.Less(t, j.margin, testInterval/2)
	}
}
