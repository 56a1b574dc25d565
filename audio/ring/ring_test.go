package ring

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRoundsCapacityUpToPowerOfTwo(t *testing.T) {
	for _, tc := range []struct{ ask, want int }{
		{0, 2}, {1, 2}, {2, 2}, {3, 4}, {480, 512}, {1024, 1024}, {1025, 2048},
	} {
		assert.Equal(t, tc.want, New(tc.ask).Cap(), "New(%d)", tc.ask)
	}
}

func TestWriteReadWrapsAround(t *testing.T) {
	r := New(8)
	out := make([]int16, 8)
	next := int16(0)
	want := int16(0)
	// Chunks of 5 against a capacity of 8 cross the end of the buffer at every other step.
	for range 10 {
		in := []int16{next, next + 1, next + 2, next + 3, next + 4}
		next += 5
		require.Equal(t, 5, r.Write(in))
		require.Equal(t, 5, r.Len())
		require.Equal(t, 3, r.Free())
		require.Equal(t, 5, r.Read(out[:5]))
		for _, s := range out[:5] {
			assert.Equal(t, want, s)
			want++
		}
	}
	assert.Equal(t, Stats{}, r.Stats())
}

func TestOverrunDropsWhatDoesNotFit(t *testing.T) {
	r := New(4)
	assert.Equal(t, 3, r.Write([]int16{1, 2, 3}))
	assert.Equal(t, 1, r.Write([]int16{4, 5, 6}))
	assert.Equal(t, 0, r.Write([]int16{7}))
	out := make([]int16, 4)
	require.Equal(t, 4, r.Read(out))
	assert.Equal(t, []int16{1, 2, 3, 4}, out)
	assert.Equal(t, Stats{Overruns: 2, OverrunSamples: 3}, r.Stats())
}

func TestUnderrunReadsWhatIsThere(t *testing.T) {
	r := New(8)
	r.Write([]int16{1, 2})
	out := []int16{9, 9, 9, 9}
	assert.Equal(t, 2, r.Read(out))
	assert.Equal(t, []int16{1, 2, 9, 9}, out, "the short part of p is left alone")
	assert.Equal(t, 0, r.Read(out[:0]), "an empty read is not an underrun")
	assert.Equal(t, Stats{Underruns: 1, UnderrunSamples: 2}, r.Stats())
}

func TestDiscard(t *testing.T) {
	r := New(8)
	r.Write([]int16{1, 2, 3, 4, 5})
	assert.Equal(t, 3, r.Discard(3))
	assert.Equal(t, 2, r.Discard(10))
	assert.Equal(t, 0, r.Discard(-1))
	assert.Equal(t, 0, r.Len())
	assert.Equal(t, Stats{}, r.Stats())
}

func TestWaitReturnsAtOnceWhenReadyAndFalseWhenDone(t *testing.T) {
	r := New(8)
	done := make(chan struct{})
	r.Write([]int16{1, 2, 3})
	assert.True(t, r.WaitData(3, done))
	assert.True(t, r.WaitSpace(5, done))

	close(done)
	assert.False(t, r.WaitData(4, done), "four samples never arrive")
	assert.False(t, r.WaitSpace(6, done), "room for six never appears")
}

// An armed signal receives at the other side's next move, once; an unarmed side sends nothing.
func TestSignalsWakeAtTheOtherSidesNextMove(t *testing.T) {
	r := New(8)
	r.Write([]int16{1})
	data := r.DataSignal()
	assert.Empty(t, data, "armed, nothing written since")
	r.Write([]int16{2})
	assert.Len(t, data, 1, "the next Write signals")
	<-data
	r.Write([]int16{3})
	assert.Empty(t, data, "disarmed by the signal: a second Write sends nothing")

	space := r.SpaceSignal()
	var out [1]int16
	r.Read(out[:])
	assert.Len(t, space, 1, "the next Read signals")
	<-space
	space = r.SpaceSignal()
	r.Discard(1)
	assert.Len(t, space, 1, "so does Discard")
}

// A consumer armed for n samples sleeps through the writes that leave fewer in the ring, and is
// woken by the one that reaches n; a plain DataSignal after it wakes at any write again.
func TestDataSignalAtWakesOnceTheFillIsThere(t *testing.T) {
	r := New(16)
	data := r.DataSignalAt(6)
	r.Write([]int16{1, 2})
	r.Write([]int16{3, 4})
	assert.Empty(t, data, "4 of 6 samples: no wake-up")
	r.Write([]int16{5, 6})
	assert.Len(t, data, 1, "the write that reaches 6 signals")
	<-data
	data = r.DataSignal()
	r.Write([]int16{7})
	assert.Len(t, data, 1, "a plain signal wakes at the next write")
	<-data
	data = r.DataSignalAt(100)
	r.Write(make([]int16, 9))
	assert.Len(t, data, 1, "a need beyond Cap is capped at Cap")
}

func TestWaitDataCappedAtCap(t *testing.T) {
	r := New(4)
	r.Write([]int16{1, 2, 3, 4})
	assert.True(t, r.WaitData(1000, nil))
}

// TestConcurrentProducerConsumer runs a producer and a consumer on their own goroutines, each
// moving seeded random chunk sizes and waiting on the other, and checks that every sample arrives
// once and in order. The outcome does not depend on the interleaving; run it with -race. A write
// and a read together never need more than the capacity, so one of the two can always proceed.
func TestConcurrentProducerConsumer(t *testing.T) {
	const total = 100_000
	r := New(64)
	rng := rand.New(rand.NewPCG(1, 2))
	writeSizes := make([]int, 0, total)
	readSizes := make([]int, 0, total)
	for range total {
		writeSizes = append(writeSizes, 1+rng.IntN(32))
		readSizes = append(readSizes, 1+rng.IntN(32))
	}

	// A deadlock fails the test instead of hanging it.
	stuck := make(chan struct{})
	timer := time.AfterFunc(time.Minute, func() { close(stuck) })
	defer timer.Stop()

	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]int16, 64)
		next := 0
		for i := 0; next < total; i++ {
			n := min(writeSizes[i], total-next)
			if !assert.True(t, r.WaitSpace(n, stuck), "producer stuck") {
				return
			}
			for j := range n {
				buf[j] = int16(next + j)
			}
			if !assert.Equal(t, n, r.Write(buf[:n])) {
				return
			}
			next += n
		}
	})
	buf := make([]int16, 64)
	got := 0
	for i := 0; got < total; i++ {
		n := min(readSizes[i], total-got)
		require.True(t, r.WaitData(n, stuck), "consumer stuck")
		require.Equal(t, n, r.Read(buf[:n]))
		for j := range n {
			if buf[j] != int16(got+j) {
				require.Equal(t, int16(got+j), buf[j], "sample %d", got+j)
			}
		}
		got += n
	}
	wg.Wait()
	assert.Equal(t, Stats{}, r.Stats(), "waiting for data and space never over- or underruns")
}

func TestWriteAndReadDoNotAllocate(t *testing.T) {
	r := New(1024)
	in := make([]int16, 480)
	out := make([]int16, 480)
	allocs := testing.AllocsPerRun(1000, func() {
		r.Write(in)
		r.Read(out)
	})
	assert.Zero(t, allocs)
}

func BenchmarkWriteRead480(b *testing.B) {
	r := New(2048)
	in := make([]int16, 480)
	out := make([]int16, 480)
	b.ReportAllocs()
	for b.Loop() {
		r.Write(in)
		r.Read(out)
	}
}
