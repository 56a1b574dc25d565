package netsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const frame = 20 * time.Millisecond

func sendTimes(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i) * frame
	}
	return out
}

func TestPerfectNetwork(t *testing.T) {
	s := New(Config{Delay: 30 * time.Millisecond})
	got := s.Schedule(sendTimes(5))
	require.Len(t, got, 5)
	for i, a := range got {
		assert.Equal(t, Arrival{Index: i, At: time.Duration(i)*frame + 30*time.Millisecond}, a)
	}
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Seed: 7, Loss: 0.1, Jitter: 40 * time.Millisecond, Reorder: 0.05, Duplicate: 0.02}
	a := New(cfg).Schedule(sendTimes(1000))
	b := New(cfg).Schedule(sendTimes(1000))
	assert.Equal(t, a, b)
	cfg.Seed = 8
	c := New(cfg).Schedule(sendTimes(1000))
	assert.NotEqual(t, a, c)
}

func TestJitterBoundsAndReordering(t *testing.T) {
	s := New(Config{Seed: 1, Delay: 10 * time.Millisecond, Jitter: 40 * time.Millisecond})
	got := s.Schedule(sendTimes(2000))
	require.Len(t, got, 2000)
	reordered := 0
	for i, a := range got {
		d := a.At - time.Duration(a.Index)*frame
		assert.GreaterOrEqual(t, d, 10*time.Millisecond)
		assert.LessOrEqual(t, d, 50*time.Millisecond)
		if i > 0 {
			assert.GreaterOrEqual(t, a.At, got[i-1].At, "sorted by arrival")
			if a.Index < got[i-1].Index {
				reordered++
			}
		}
	}
	assert.Greater(t, reordered, 100, "40 ms of jitter on 20 ms packets reorders")
}

func TestLossRates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want float64
	}{
		{"bernoulli 10%", Config{Seed: 3, Loss: 0.1}, 0.1},
		{"bursty 20%", Config{Seed: 3, Burst: Bursty(0.2, 3)}, 0.2},
		{"none", Config{Seed: 3}, 0},
	}
	const n = 50000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New(tt.cfg).Schedule(sendTimes(n))
			assert.InDelta(t, tt.want, 1-float64(len(got))/n, 0.01)
		})
	}
}

func TestBurstsAreLonger(t *testing.T) {
	meanRun := func(cfg Config) float64 {
		got := New(cfg).Schedule(sendTimes(50000))
		runs, lost, prev := 0, 0, -1
		for _, a := range got {
			if gap := a.Index - prev - 1; gap > 0 {
				runs++
				lost += gap
			}
			prev = a.Index
		}
		return float64(lost) / float64(runs)
	}
	independent := meanRun(Config{Seed: 5, Loss: 0.2})
	bursty := meanRun(Config{Seed: 5, Burst: Bursty(0.2, 4)})
	assert.InDelta(t, 1.25, independent, 0.1, "runs of independent 20%% loss average 1/(1-p)")
	assert.InDelta(t, 4, bursty, 0.4)
}

func TestDuplicatesAndReorderHold(t *testing.T) {
	s := New(Config{Seed: 9, Duplicate: 0.5, Reorder: 1, ReorderDelay: 100 * time.Millisecond})
	got := s.Schedule(sendTimes(1000))
	assert.InDelta(t, 1500, len(got), 60)
	for _, a := range got {
		assert.Equal(t, time.Duration(a.Index)*frame+100*time.Millisecond, a.At)
	}
	assert.Equal(t, 40*time.Millisecond, New(Config{}).cfg.ReorderDelay)
}

func TestTransmitAppendsWithoutAllocating(t *testing.T) {
	s := New(Config{Seed: 2, Loss: 0.3, Jitter: frame, Duplicate: 0.3})
	buf := make([]time.Duration, 0, 2)
	allocs := testing.AllocsPerRun(1000, func() { buf = s.Transmit(buf[:0], time.Second) })
	assert.Zero(t, allocs)
}

func TestLossPattern(t *testing.T) {
	tests := []struct {
		frames  int
		percent float64
		lost    int
	}{
		{1000, 10, 100}, {1000, 20, 200}, {333, 10, 33}, {10, 0, 0}, {10, 100, 10},
		{10, 150, 10}, {10, -5, 0}, {0, 50, 0},
	}
	for _, tt := range tests {
		p := LossPattern(tt.frames, tt.percent, 42)
		require.Len(t, p, tt.frames)
		n := 0
		for _, l := range p {
			if l {
				n++
			}
		}
		assert.Equal(t, tt.lost, n, "%d frames at %v%%", tt.frames, tt.percent)
	}
	assert.Equal(t, LossPattern(500, 10, 1), LossPattern(500, 10, 1))
	assert.NotEqual(t, LossPattern(500, 10, 1), LossPattern(500, 10, 2))
}
