package device

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
	"sdkpp/audio/ring"
)

func newTestRings(t *testing.T, cfg Config) *rings {
	t.Helper()
	r, err := newRings(cfg)
	require.NoError(t, err)
	t.Cleanup(r.close)
	return r
}

// TestDataCallbacksDoNotAllocate runs the C data callbacks' work the way a device does, one
// period at a time, and counts allocations per call.
func TestDataCallbacksDoNotAllocate(t *testing.T) {
	r := newTestRings(t, Config{Capture: true, Playback: true})
	in := make([]int16, pcm.PeriodSamples)
	out := make([]int16, pcm.PeriodSamples)
	engineSide := make([]int16, pcm.PeriodSamples)

	captureAllocs := testing.AllocsPerRun(1000, func() {
		r.captured(in)
		r.capture.Read(engineSide) // keep the ring from filling: overruns must not allocate either
	})
	playbackAllocs := testing.AllocsPerRun(1000, func() {
		r.playback.Write(engineSide)
		r.play(out)
	})
	underrunAllocs := testing.AllocsPerRun(1000, func() { r.play(out) })
	overrunAllocs := testing.AllocsPerRun(1000, func() { r.captured(in) })
	assert.Zero(t, captureAllocs, "capture callback")
	assert.Zero(t, playbackAllocs, "playback callback")
	assert.Zero(t, underrunAllocs, "playback callback on an empty ring")
	assert.Zero(t, overrunAllocs, "capture callback on a full ring")
	require.NotZero(t, r.stats().Playback.Underruns)
	require.NotZero(t, r.stats().Capture.Overruns)
}

// TestDataCallbacksWakeAWaitingEngine checks that the capture callback wakes an engine waiting for
// a period and the playback callback wakes one waiting for room, through the notifier and the
// pump.
func TestDataCallbacksWakeAWaitingEngine(t *testing.T) {
	r := newTestRings(t, Config{Capture: true, Playback: true, RingSamples: pcm.PeriodSamples})
	woke := make(chan bool)
	go func() { woke <- r.capture.WaitData(pcm.PeriodSamples, nil) }()
	r.captured(make([]int16, pcm.PeriodSamples))
	assert.True(t, <-woke)

	r.playback.Write(make([]int16, pcm.PeriodSamples)) // full
	go func() { woke <- r.playback.WaitSpace(pcm.PeriodSamples, nil) }()
	r.play(make([]int16, pcm.PeriodSamples))
	assert.True(t, <-woke)

	// A signal armed for a fill: the first half period does not reach it, the second does.
	r.capture.Discard(r.capture.Len())
	sig := r.capture.DataSignalAt(pcm.PeriodSamples)
	r.captured(make([]int16, pcm.PeriodSamples/2))
	assert.Len(t, sig, 0, "woken before the fill it waits for")
	r.captured(make([]int16, pcm.PeriodSamples/2))
	<-sig
}

// TestCSidesShareTheRingsLayout moves samples between the C sides and the Go rings in both
// directions, across the end of the buffer, and checks every field of the shared state the two
// use: the fill counters, the overrun and underrun counts, and the period counts.
func TestCSidesShareTheRingsLayout(t *testing.T) {
	r := newTestRings(t, Config{Capture: true, Playback: true, PlaybackChannels: 2, RingSamples: 8})
	next, want := int16(1), int16(1)
	got := make([]int16, 5)
	for range 6 { // chunks of 5 in 8: the copy wraps every other time
		in := []int16{next, next + 1, next + 2, next + 3, next + 4}
		next += 5
		r.captured(in)
		require.Equal(t, 5, r.capture.Len())
		require.Equal(t, 5, r.capture.Read(got))
		for _, s := range got {
			require.Equal(t, want, s)
			want++
		}
	}
	r.captured(make([]int16, 6))
	r.captured(make([]int16, 4)) // 2 fit, 2 dropped
	r.captured(make([]int16, 1)) // 1 dropped

	out := make([]int16, 6) // three stereo frames
	for i := range 3 {
		pair := []int16{int16(10 * i), int16(10*i + 1)}
		require.Equal(t, 2, r.playback.Write(pair))
	}
	r.play(out)
	assert.Equal(t, []int16{0, 1, 10, 11, 20, 21}, out)
	r.playback.Write([]int16{7, 8})
	r.play(out) // one frame there, two missing: silence, counted
	assert.Equal(t, []int16{7, 8, 0, 0, 0, 0}, out)

	s := r.stats()
	assert.Equal(t, Stats{
		CapturePeriods: 9, CaptureSamples: 41,
		PlaybackPeriods: 2, PlaybackSamples: 12,
		Capture:  ring.Stats{Overruns: 2, OverrunSamples: 3},
		Playback: ring.Stats{Underruns: 1, UnderrunSamples: 4},
	}, s)
	r.close()
	assert.Equal(t, s, r.stats(), "the counts stay readable after close")
}

// TestCSidesConcurrentWithTheEngine runs each C side on its own goroutine (a cgo call runs on its
// own thread, as a device callback does) against a Go side that waits as the engine does, many
// periods through a ring of four: every sample arrives once and in order, nothing is lost or made
// up. Run with -race.
func TestCSidesConcurrentWithTheEngine(t *testing.T) {
	const periods = 1000
	const n = pcm.PeriodSamples
	r := newTestRings(t, Config{Capture: true, Playback: true, RingSamples: 4 * n})
	done := make(chan struct{})
	defer close(done)

	// Capture: the device delivers a counting signal once there is room (so nothing is
	// dropped); the engine waits for each period.
	go func() {
		in := make([]int16, n)
		v := int16(0)
		for range periods {
			v = counting(in, v)
			if !r.capture.WaitSpace(n, done) {
				return
			}
			r.captured(in)
		}
	}()
	// Playback: the engine writes a counting signal as room comes; the device takes it.
	go func() {
		out := make([]int16, n)
		v := int16(0)
		for range periods {
			v = counting(out, v)
			if !r.playback.WaitSpace(n, done) {
				return
			}
			r.playback.Write(out)
		}
	}()
	played := make(chan []int16)
	go func() {
		out := make([]int16, n)
		var errs []int16
		v := int16(0)
		for k := 0; k < periods; {
			if !r.playback.WaitData(n, done) {
				return
			}
			r.play(out)
			k++
			for _, s := range out {
				if s != v {
					errs = append(errs, s)
				}
				v++
			}
		}
		played <- errs
	}()

	block := make([]int16, n)
	v := int16(0)
	for range periods {
		require.True(t, r.capture.WaitData(n, nil))
		require.Equal(t, n, r.capture.Read(block))
		for i, s := range block {
			require.Equal(t, v, s, "capture sample %d", i)
			v++
		}
	}
	assert.Empty(t, <-played, "playback samples out of order")
	s := r.stats()
	assert.Equal(t, uint64(periods), s.CapturePeriods)
	assert.Equal(t, uint64(periods), s.PlaybackPeriods)
	assert.Zero(t, s.Capture.Overruns)
	assert.Zero(t, s.Playback.Underruns)
}

// counting fills p with v, v+1, ... and returns the value after the last.
func counting(p []int16, v int16) int16 {
	for i := range p {
		p[i] = v
		v++
	}
	return v
}

func TestSamplesViewsBytesInPlace(t *testing.T) {
	b := make([]byte, 8)
	s := samples(b)
	require.Len(t, s, 4)
	s[1] = -2
	assert.Equal(t, int16(-2), samples(b)[1])
	assert.Nil(t, samples(nil))
}

// TestPlaybackTakeClockStampsEachTake runs the playback callback's work and reads the take clock
// as the engine does: a count of the takes and the last one's time on time.Now's clock, read
// after the take moved the ring (a take the clock shows has left its fill).
func TestPlaybackTakeClockStampsEachTake(t *testing.T) {
	r := newTestRings(t, Config{Capture: true, Playback: true})
	n, last := r.playbackTakes()
	assert.Zero(t, n)
	assert.True(t, last.IsZero(), "no take yet")

	out := make([]int16, pcm.PeriodSamples)
	r.playback.Write(make([]int16, 3*pcm.PeriodSamples))
	for i := 1; i <= 3; i++ {
		before := time.Now()
		r.play(out)
		after := time.Now()
		n, last = r.playbackTakes()
		assert.Equal(t, uint64(i), n)
		// The two clocks are paired to within the few hundred nanoseconds of a cgo call.
		assert.False(t, last.Before(before.Add(-time.Millisecond)), "take %d stamped %v before it ran", i, before.Sub(last))
		assert.False(t, last.After(after.Add(time.Millisecond)), "take %d stamped %v after it ran", i, last.Sub(after))
		assert.Equal(t, (3-i)*pcm.PeriodSamples, r.playback.Len())
	}
	// Capture periods are no takes.
	r.captured(out)
	n, _ = r.playbackTakes()
	assert.Equal(t, uint64(3), n)

	r.close()
	n, last = r.playbackTakes()
	assert.Zero(t, n, "a closed stream's clock reads zero")
	assert.True(t, last.IsZero())
}

func TestPlaybackTakeClockWithoutAPlaybackSide(t *testing.T) {
	r := newTestRings(t, Config{Capture: true})
	n, last := r.playbackTakes()
	assert.Zero(t, n)
	assert.True(t, last.IsZero())
}
