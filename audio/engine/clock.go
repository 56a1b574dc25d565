package engine

import "time"

// Just-in-time playback settings.
const (
	// jitFirstMargin is the margin a stream starts with, before its first take was measured.
	jitFirstMargin = 4 * time.Millisecond
	// jitMinMargin is the least margin: Go's timers and the thread hand-off take about this.
	jitMinMargin = time.Millisecond
	// jitGuard is added to the largest need measured.
	jitGuard = 500 * time.Microsecond
	// jitFall: a need below the margin lowers it by 1/jitFall of the difference (with 10 ms
	// periods the margin comes down with a time constant of about 5 s); a need above it raises
	// it at once.
	jitFall = 512
)

// justInTime schedules the writes of playback periods by the device's take clock
// (device.PlaybackClock), so that each period is mixed just before the device takes it rather
// than as soon as the device took the one before: a packet that arrives in between is heard a
// period sooner.
//
// A period written while the ring holds ahead whole periods beyond the lead is taken at the
// (ahead+1)-th take after the last: it is due then, less a margin. The margin learns what the
// writes need. For each timed write it measures, at the take the write was for, how much earlier
// the write would have had to be scheduled to land just at that take: the write's own lateness
// (the wake-up, the mixing) plus the take's earliness against its prediction (a device that takes
// in bursts). The margin rises at once to the largest need plus a guard, and falls slowly.
// A write that still comes too late leaves the device short (an underrun): the margin goes to a
// whole period at once, the schedule of an engine without the clock (writing as the device takes
// the period before), and holds there for a calm spell of measured writes before it falls again;
// each underrun doubles the spell, as the pacing's does for its lead. A machine too busy for the
// margin once is likely to be again: without the hold, the margin fell back within seconds and
// every burst of load left the device short anew, each time a period of silence more in the
// player's ear, and the lead never grew. Only a device left short at a whole period has the
// engine's pacing raise the lead by a period, as it does without the clock.
//
// Times are on the clock of the take stamps (time.Now's monotonic clock in the engine).
type justInTime struct {
	interval time.Duration // the device's period
	margin   time.Duration

	// The write being measured: the take it was for (0: none) and when it was done.
	take uint64
	done time.Time

	measured uint64        // writes measured so far
	worst    time.Duration // the largest need measured

	held      int // measured writes for which the margin still holds a whole period
	calmSpell int // the hold the next underrun starts
}

// newJustInTime returns a scheduler for a device that takes a period every interval.
func newJustInTime(interval time.Duration) justInTime {
	return justInTime{interval: interval, margin: min(jitFirstMargin, interval), calmSpell: firstCalm}
}

// due returns, for a period written now while the ring holds ahead whole periods beyond the lead,
// the take that will find it needed (counting takes as the clock does) and when it must be written
// by: the take's predicted time, from the last take's stamp, less the margin. A negative ahead
// means the ring already holds less than the lead: the deadline has passed.
func (j *justInTime) due(takes uint64, last time.Time, ahead int) (take uint64, at time.Time) {
	take = takes + uint64(max(ahead, 0)) + 1
	return take, last.Add(time.Duration(ahead+1)*j.interval - j.margin)
}

// wrote records that the period due at at for take was written at done. Only a write scheduled
// no earlier than the last take's stamp (last) is measured, one at a time: a write that catches
// up on a ring below its lead says nothing about the margin.
func (j *justInTime) wrote(take uint64, last, at, done time.Time) {
	if j.take != 0 || at.Before(last) {
		return
	}
	j.take, j.done = take, done
}

// observe reads the take clock (takes counted so far, the last one's stamp): once it has counted
// the take of the write being measured, the write's need adjusts the margin. When the clock went
// past that take between two looks, the last stamp stands for it (a lower bound of the need).
func (j *justInTime) observe(takes uint64, last time.Time) {
	if j.take == 0 || takes < j.take {
		return
	}
	// The write had the margin; it needed that plus how long after the take it was done (less,
	// when it was done before).
	need := j.margin + j.done.Sub(last)
	j.take = 0
	j.measured++
	j.worst = max(j.worst, need)
	target := max(need+jitGuard, jitMinMargin)
	switch {
	case target > j.margin:
		j.margin = min(target, j.interval)
	case j.held > 0:
		j.held--
	default:
		j.margin -= (j.margin - target) / jitFall
	}
}

// short takes an underrun: it reports whether the margin had room to grow, and grows it to a
// whole period for a calm spell; false means the margin was already a period and the lead must
// grow instead.
func (j *justInTime) short() bool {
	if j.margin >= j.interval {
		return false
	}
	j.margin = j.interval
	j.held = j.calmSpell
	j.calmSpell = min(2*j.calmSpell, maxCalm)
	j.take = 0 // the write being measured was scheduled with the old margin
	return true
}
