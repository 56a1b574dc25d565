package apm

import (
	"math"

	"sdkpp/audio/pcm"
)

// The echo delay estimate. The canceller models an echo path up to its tail long and adapts to
// it over seconds; when the delay inside the sound system moves (a busy machine makes PulseAudio
// buffer more or less), the modelled path no longer fits and echo leaks through until it has
// adapted again. The estimator follows the delay between the far reference and the microphone by
// correlating their envelopes, refines it to a sample, and delays the reference by the difference,
// so that the canceller keeps seeing the same short delay (delayMargin) whatever the sound system
// does. The margin keeps the echo clear of the canceller's first block (10 ms), where an estimate
// a few milliseconds off would put the echo ahead of its reference: through a PulseAudio null
// sink a 10 ms margin removed 11.7-22.5 dB of echo, 20, 30 and 45 ms removed 29.2-29.6 dB.
const (
	envChunk         = samplesPerMs              // samples per envelope value: 1 ms
	maxDelayMs       = 300                       // longest echo delay looked for
	envWindowMs      = 500                       // microphone envelope correlated per estimate
	estimateEveryMs  = 500                       // time between estimates
	hurryEveryMs     = 100                       // time between estimates while hurried
	hurryMs          = 2000                      // how long a hurry lasts
	refineSamples    = 2400                      // full-rate window (50 ms) refining an estimate
	delayMargin      = 20 * samplesPerMs         // delay left to the canceller, in samples
	shiftTolerance   = 32                        // samples two estimates may differ by and agree
	minCorrelation   = 0.6                       // envelope correlation an estimate needs
	samplesPerMs     = pcm.SampleRate / 1000     // samples per millisecond
	delayFarSize     = 1 << 15                   // far history, samples (over 300 ms + window + frame)
	delayMicSize     = 1 << 12                   // microphone history, samples (over refineSamples)
	delayFarEnvSize  = 1 << 10                   // far envelope history (over maxDelayMs+envWindowMs)
	delayMicEnvSize  = 1 << 9                    // microphone envelope history (over envWindowMs)
	maxDelaySamples  = maxDelayMs * samplesPerMs // longest delay, in samples
	envHistoryNeeded = maxDelayMs + envWindowMs  // envelope values an estimate needs
)

// delayEstimator follows the echo delay and delays the reference to match. Only Capture's
// goroutine uses it; it allocates nothing after newDelayEstimator.
type delayEstimator struct {
	far, mic       []int16   // full-rate histories, rings
	farEnv, micEnv []float32 // 1 ms envelopes (mean absolute value), rings
	n              uint64    // samples pushed (far and microphone alike)
	envN           uint64    // envelope values pushed
	accFar, accMic float32
	accN           int
	sinceEstimate  int    // envelope values since the last estimate
	hurryUntil     uint64 // envN up to which estimates come every hurryEveryMs
	shift          int    // samples the reference is delayed by
	pending        int    // the last estimate's wanted shift, awaiting a second that agrees; -1: none
	// target is the delay the canceller is kept at: delayMargin, or the echo delay first found
	// when that is shorter (the canceller converged on it); -1 until the first estimate is applied.
	target int
	out    []int16

	// The delay the caller knows about (its own buffering, SetKnownDelay): its moves shift the
	// reference at once, between estimates. base is the shift the last applied estimate
	// wanted, at the known delay knownAt.
	known, knownAt int
	base           int
	haveKnown      bool
}

func newDelayEstimator(frame int) *delayEstimator {
	return &delayEstimator{
		far:     make([]int16, delayFarSize),
		mic:     make([]int16, delayMicSize),
		farEnv:  make([]float32, delayFarEnvSize),
		micEnv:  make([]float32, delayMicEnvSize),
		pending: -1,
		target:  -1,
		out:     make([]int16, frame),
	}
}

// reset forgets the history and the shift (the canceller restarts after a pause).
func (d *delayEstimator) reset() {
	clear(d.far)
	clear(d.mic)
	clear(d.farEnv)
	clear(d.micEnv)
	d.n, d.envN, d.accFar, d.accMic, d.accN, d.sinceEstimate = 0, 0, 0, 0, 0, 0
	d.shift, d.pending, d.target = 0, -1, -1
	d.known, d.knownAt, d.base, d.haveKnown = 0, 0, 0, false
}

// hurry makes the estimates come every hurryEveryMs for the next hurryMs: the echo path may
// just have moved (the speaker lacked audio, and PulseAudio raises its latency then).
func (d *delayEstimator) hurry() {
	d.hurryUntil = d.envN + hurryMs
	d.pending = -1
}

// setKnown records the delay the caller's own buffering adds now, in samples.
func (d *delayEstimator) setKnown(samples int) {
	if !d.haveKnown {
		d.knownAt, d.haveKnown = samples, true
	}
	d.known = samples
	d.shift = max(0, min(maxDelaySamples, d.base+d.known-d.knownAt))
}

// push records one block of the far reference and the microphone (the same length), estimates
// the delay when it is time, and returns the reference block for the canceller: far delayed by
// the current shift.
func (d *delayEstimator) push(far, mic []int16) []int16 {
	for i := range far {
		f, m := far[i], mic[i]
		d.far[(d.n+uint64(i))&(delayFarSize-1)] = f
		d.mic[(d.n+uint64(i))&(delayMicSize-1)] = m
		d.accFar += float32(abs16(f))
		d.accMic += float32(abs16(m))
		if d.accN++; d.accN == envChunk {
			d.farEnv[d.envN&(delayFarEnvSize-1)] = d.accFar
			d.micEnv[d.envN&(delayMicEnvSize-1)] = d.accMic
			d.envN++
			d.accFar, d.accMic, d.accN = 0, 0, 0
			d.sinceEstimate++
		}
	}
	d.n += uint64(len(far))
	every := estimateEveryMs
	if d.envN < d.hurryUntil {
		every = hurryEveryMs
	}
	if d.sinceEstimate >= every && d.envN >= envHistoryNeeded {
		d.sinceEstimate = 0
		d.estimate()
	}
	if d.shift == 0 {
		return far
	}
	start := d.n - uint64(len(far)) - uint64(d.shift) // d.n > shift once shift is set
	for i := range d.out {
		d.out[i] = d.far[(start+uint64(i))&(delayFarSize-1)]
	}
	return d.out
}

func abs16(v int16) int32 {
	if v < 0 {
		return -int32(v)
	}
	return int32(v)
}

// estimate finds the echo delay and, when two estimates in a row agree on a shift other than
// the current one, applies it. The first estimate applied sets the delay the canceller is kept
// at: delayMargin, or the echo delay itself when it is shorter, so that a later move is followed
// from where the canceller converged rather than from the margin.
func (d *delayEstimator) estimate() {
	lag, ok := d.envelopeLag()
	if !ok {
		d.pending = -1
		return
	}
	if d.target >= 0 && math.Abs(float64(lag*envChunk-(d.shift+d.target))) <= 2*envChunk {
		d.pending = -1 // the canceller sees the delay it should
		return
	}
	found := d.refine(lag * envChunk)
	target := d.target
	if target < 0 {
		target = min(found, delayMargin)
	}
	want := max(0, found-target)
	if d.pending >= 0 && abs(want-d.pending) <= shiftTolerance {
		d.shift, d.base, d.knownAt, d.pending, d.target = want, want, d.known, -1, target
		return
	}
	d.pending = want
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// envelopeLag returns the lag, in envelope values (ms), at which the far envelope best matches
// the last envWindowMs of the microphone's, and whether the match is good enough to trust.
func (d *delayEstimator) envelopeLag() (int, bool) {
	const w = envWindowMs
	end := d.envN // one past the newest value
	var sm, smm float64
	for i := end - w; i < end; i++ {
		v := float64(d.micEnv[i&(delayMicEnvSize-1)])
		sm += v
		smm += v * v
	}
	varM := smm - sm*sm/w
	if varM <= 0 {
		return 0, false
	}
	best, bestCorr := 0, -1.0
	for lag := 0; lag <= maxDelayMs; lag++ {
		var sf, sff, smf float64
		for i := end - w; i < end; i++ {
			f := float64(d.farEnv[(i-uint64(lag))&(delayFarEnvSize-1)])
			m := float64(d.micEnv[i&(delayMicEnvSize-1)])
			sf += f
			sff += f * f
			smf += m * f
		}
		varF := sff - sf*sf/w
		if varF <= 0 {
			continue
		}
		if c := (smf - sm*sf/w) / math.Sqrt(varM*varF); c > bestCorr {
			best, bestCorr = lag, c
		}
	}
	return best, bestCorr >= minCorrelation
}

// refine returns the delay, in samples, within a millisecond of around at which the far signal
// best matches the microphone's last refineSamples.
func (d *delayEstimator) refine(around int) int {
	lo, hi := max(0, around-envChunk), min(maxDelaySamples, around+envChunk)
	best, bestScore := around, math.Inf(-1)
	for lag := lo; lag <= hi; lag++ {
		var mf, ff float64
		for i := d.n - refineSamples; i < d.n; i++ {
			f := float64(d.far[(i-uint64(lag))&(delayFarSize-1)])
			mf += float64(d.mic[i&(delayMicSize-1)]) * f
			ff += f * f
		}
		if ff == 0 {
			continue
		}
		if s := mf / math.Sqrt(ff); s > bestScore {
			best, bestScore = lag, s
		}
	}
	return best
}
