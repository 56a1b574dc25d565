// Package netsim is a deterministic network simulator for the voice engine's tests: given the
// send time of each packet it returns when the packet arrives, or that it was lost, applying
// seeded loss (independent or bursty Gilbert-Elliott), a fixed delay plus jitter, extra holding
// that reorders packets, and duplication. The same seed and configuration always give the same
// arrivals. LossPattern builds a pattern with an exact share of lost frames.
package netsim

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// GilbertElliott is a two-state bursty loss model: in the good state packets are lost with
// LossGood, in the bad state with LossBad, and before each packet the state changes with
// GoodToBad or BadToGood.
type GilbertElliott struct {
	// GoodToBad is the probability per packet of moving from the good to the bad state.
	GoodToBad float64
	// BadToGood is the probability per packet of moving from the bad to the good state.
	BadToGood float64
	// LossGood is the loss probability in the good state (usually 0).
	LossGood float64
	// LossBad is the loss probability in the bad state (usually 1).
	LossBad float64
}

// Bursty returns a Gilbert-Elliott model that loses every packet in the bad state and none in
// the good one, with a long-run loss rate of loss (0..1) and bursts of meanBurst packets on
// average (at least 1).
func Bursty(loss, meanBurst float64) *GilbertElliott {
	loss = math.Max(0, math.Min(loss, 0.99))
	meanBurst = math.Max(meanBurst, 1)
	toGood := 1 / meanBurst
	return &GilbertElliott{
		GoodToBad: loss * toGood / (1 - loss),
		BadToGood: toGood,
		LossBad:   1,
	}
}

// Config describes the simulated path. The zero value is a perfect, instant network.
type Config struct {
	// Seed seeds the simulator's random source.
	Seed uint64
	// Loss is the probability (0..1) that a packet is lost, independently of the others.
	// Ignored when Burst is set.
	Loss float64
	// Burst, when set, replaces Loss with a bursty loss model.
	Burst *GilbertElliott
	// Delay is the fixed one-way delay.
	Delay time.Duration
	// Jitter is the span of the extra delay, drawn uniformly from [0, Jitter] per packet.
	// Jitter beyond the packet interval already reorders packets.
	Jitter time.Duration
	// Reorder is the probability (0..1) that a packet is held back an extra ReorderDelay.
	Reorder float64
	// ReorderDelay is the extra holding of a reordered packet (40 ms when zero).
	ReorderDelay time.Duration
	// Duplicate is the probability (0..1) that a delivered packet arrives a second time, with
	// its own draw of jitter.
	Duplicate float64
}

// Sim is one simulated path. It is not safe for concurrent use.
type Sim struct {
	cfg Config
	rng *rand.Rand
	bad bool // the Gilbert-Elliott state
}

// New returns a simulator for cfg.
func New(cfg Config) *Sim {
	if cfg.ReorderDelay == 0 {
		cfg.ReorderDelay = 40 * time.Millisecond
	}
	return &Sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6e657473696d))}
}

// Transmit sends one packet at send and appends its arrival times to dst: none when it is lost,
// two when it is duplicated. Packets must be transmitted in send order for the loss model.
func (s *Sim) Transmit(dst []time.Duration, send time.Duration) []time.Duration {
	if s.lost() {
		return dst
	}
	dst = append(dst, send+s.delay())
	if s.cfg.Duplicate > 0 && s.rng.Float64() < s.cfg.Duplicate {
		dst = append(dst, send+s.delay())
	}
	return dst
}

func (s *Sim) lost() bool {
	if b := s.cfg.Burst; b != nil {
		if s.bad {
			s.bad = s.rng.Float64() >= b.BadToGood
		} else {
			s.bad = s.rng.Float64() < b.GoodToBad
		}
		p := b.LossGood
		if s.bad {
			p = b.LossBad
		}
		return s.rng.Float64() < p
	}
	return s.cfg.Loss > 0 && s.rng.Float64() < s.cfg.Loss
}

func (s *Sim) delay() time.Duration {
	d := s.cfg.Delay
	if s.cfg.Jitter > 0 {
		d += time.Duration(s.rng.Int64N(int64(s.cfg.Jitter) + 1))
	}
	if s.cfg.Reorder > 0 && s.rng.Float64() < s.cfg.Reorder {
		d += s.cfg.ReorderDelay
	}
	return d
}

// Arrival is one packet arriving: Index is its position in the slice given to Schedule.
type Arrival struct {
	Index int
	At    time.Duration
}

// Schedule transmits packets sent at sendTimes (in send order) and returns every arrival sorted
// by arrival time (ties keep send order); lost packets are absent, duplicates appear twice.
func (s *Sim) Schedule(sendTimes []time.Duration) []Arrival {
	out := make([]Arrival, 0, len(sendTimes))
	var at []time.Duration
	for i, t := range sendTimes {
		at = s.Transmit(at[:0], t)
		for _, a := range at {
			out = append(out, Arrival{Index: i, At: a})
		}
	}
	slices.SortStableFunc(out, func(a, b Arrival) int { return int(a.At - b.At) })
	return out
}

// LossPattern returns which of frames frames are lost so that exactly round(frames*percent/100)
// of them are (percent clamped to 0..100), chosen uniformly at random with seed.
func LossPattern(frames int, percent float64, seed uint64) []bool {
	frames = max(frames, 0)
	percent = math.Max(0, math.Min(100, percent))
	n := int(math.Round(float64(frames) * percent / 100))
	lost := make([]bool, frames)
	idx := make([]int, frames)
	for i := range idx {
		idx[i] = i
	}
	r := rand.New(rand.NewPCG(seed, 0x6c6f7373))
	// A partial Fisher-Yates shuffle picks n distinct frames.
	for i := range n {
		j := i + r.IntN(frames-i)
		idx[i], idx[j] = idx[j], idx[i]
		lost[idx[i]] = true
	}
	return lost
}
