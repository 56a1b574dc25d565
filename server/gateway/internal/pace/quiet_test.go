package pace

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// flusher counts its FlushPaced calls.
type flusher struct{ flushed atomic.Int32 }

func (f *flusher) FlushPaced() { f.flushed.Add(1) }

// pushes pushes on m every gap, n times.
func pushes(m *Meter, n int, gap time.Duration) {
	for range n {
		m.Add(1)
		time.Sleep(gap)
	}
}

// The paced writes due are made once the pushes pause, not while they go on; a write made
// meanwhile (Done) is not made again, and a write due while the pushes are paused is made
// within a few ticks.
func TestQuietFlushesOncePushesPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMeter()
		q := NewQuiet(m)
		defer q.Stop()
		a, b := &flusher{}, &flusher{}
		q.Due(a)
		q.Due(b)
		pushes(m, 100, QuietAfter/2) // never a pause
		synctest.Wait()
		assert.Zero(t, a.flushed.Load(), "flushed while the pushes go on")
		q.Done(b) // b wrote at its pace
		time.Sleep(5 * QuietAfter)
		synctest.Wait()
		assert.Equal(t, int32(1), a.flushed.Load(), "a pause: its write made at once")
		assert.Zero(t, b.flushed.Load(), "written already")

		time.Sleep(50 * QuietAfter)
		synctest.Wait()
		assert.Equal(t, int32(1), a.flushed.Load(), "once")
		q.Due(b) // a new paced write, the pushes still paused
		time.Sleep(5 * QuietAfter)
		synctest.Wait()
		assert.Equal(t, int32(1), b.flushed.Load())
	})
}

// A stream whose pushes come in groups with pauses between them (a node of a cluster reading
// the bus) is not written at each pause once Quiet has seen it go on after one: only at a longer
// pause, its end.
func TestQuietLearnsTheStreamsPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMeter()
		q := NewQuiet(m)
		defer q.Stop()
		group := func() { pushes(m, 4, QuietAfter/4) } // a group's pushes, then a pause of 4 ticks
		a := &flusher{}
		q.Due(a)
		group()
		time.Sleep(4 * QuietAfter)
		synctest.Wait()
		assert.Equal(t, int32(1), a.flushed.Load(), "the first pause, not yet known")
		for range 30 {
			group()
			q.Due(a) // paced again by the group
			time.Sleep(4 * QuietAfter)
		}
		synctest.Wait()
		assert.Equal(t, int32(1), a.flushed.Load(), "written at a pause the stream went on after")
		time.Sleep(10 * QuietAfter)
		synctest.Wait()
		assert.Equal(t, int32(2), a.flushed.Load(), "the stream's end: written")
	})
}

// One stall in a stream (a collection, a busy core) that went on after it does not hold the
// end of every burst after it as long: the pause learnt is the one nine in ten pauses were not
// longer than, not the longest.
func TestQuietLearnsPastAStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMeter()
		q := NewQuiet(m)
		defer q.Stop()
		a := &flusher{}
		group := func() { // a group's pushes, then a pause of a tick or two
			q.Due(a)
			pushes(m, 4, QuietAfter/4)
			time.Sleep(2 * QuietAfter)
		}
		for range 30 {
			group()
		}
		q.Due(a)
		time.Sleep(8 * QuietAfter) // the stall
		for range 30 {
			group()
		}
		synctest.Wait()
		before := a.flushed.Load()
		q.Due(a)
		pushes(m, 4, QuietAfter/4) // the burst's last group
		time.Sleep(4 * QuietAfter)
		synctest.Wait()
		assert.Equal(t, before+1, a.flushed.Load(), "the burst's end written within 4 ticks, not after the stall's 8")
	})
}

// After Stop, nothing is flushed, and Due is ignored.
func TestQuietStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQuiet(NewMeter())
		a := &flusher{}
		q.Due(a)
		q.Stop()
		q.Due(a)
		time.Sleep(10 * QuietAfter)
		synctest.Wait()
		assert.Zero(t, a.flushed.Load())
	})
}
