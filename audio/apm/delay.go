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
// does. Between those estimates, every 20 ms, a look around the echo's expected place (track)
// follows small moves at once. The margin keeps the echo clear of the canceller's first block
// (10 ms), where an estimate a few milliseconds off would put the echo ahead of its reference:
// through a PulseAudio null sink a 10 ms margin removed 11.7-22.5 dB of echo, 20, 30 and 45 ms
// removed 29.2-29.6 dB.
const (
	envChunk         = samplesPerMs              // samples per envelope value: 1 ms
	maxDelayMs       = 300                       // longest echo delay looked for
	envWindowMs      = 500                       // microphone envelope correlated per estimate
	estimateEveryMs  = 500                       // time between estimates
	hurryEveryMs     = 100                       // time between estimates while hurried
	hurryMs          = 2000                      // how long a hurry lasts
	refineSamples    = 2400                      // full-rate window (50 ms) refining an estimate
	trackEveryMs     = 20                        // time between looks around the echo's place
	trackRange       = 12 * samplesPerMs         // how far either side of it a look goes
	trackSamples     = 1200                      // full-rate window (25 ms) of a look
	decimation       = 4                         // a look searches at 12 kHz, then refines
	delayFarDecSize  = 1 << 12                   // decimated far history (over 300 ms + window)
	delayMicDecSize  = 1 << 9                    // decimated microphone history (over a window)
	trackTolerance   = samplesPerMs / 2          // a move smaller than this is left alone
	trackCorrelation = 0.5                       // normalized correlation a look needs
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
	// The signals decimated for a look's coarse search: sums of decimation samples, rings
	// indexed by sample count / decimation.
	farDec, micDec []float32
	decFar, decMic float32
	accN           int
	sinceEstimate  int    // envelope values since the last estimate
	sinceTrack     int    // envelope values since the last look around the echo's place
	trackPending   int    // where the last look found the echo away from its place; -1: none
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
		far:          make([]int16, delayFarSize),
		mic:          make([]int16, delayMicSize),
		farDec:       make([]float32, delayFarDecSize),
		micDec:       make([]float32, delayMicDecSize),
		farEnv:       make([]float32, delayFarEnvSize),
		micEnv:       make([]float32, delayMicEnvSize),
		pending:      -1,
		trackPending: -1,
		target:       -1,
		out:          make([]int16, frame),
	}
}

// reset forgets the history and the shift (the canceller restarts after a pause).
func (d *delayEstimator) reset() {
	clear(d.far)
	clear(d.mic)
	clear(d.farEnv)
	clear(d.micEnv)
	clear(d.farDec)
	clear(d.micDec)
	d.decFar, d.decMic = 0, 0
	d.n, d.envN, d.accFar, d.accMic, d.accN, d.sinceEstimate, d.sinceTrack = 0, 0, 0, 0, 0, 0, 0
	d.shift, d.pending, d.trackPending, d.target = 0, -1, -1, -1
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
		d.decFar += float32(f)
		d.decMic += float32(m)
		if k := d.n + uint64(i) + 1; k%decimation == 0 {
			d.farDec[(k/decimation-1)&(delayFarDecSize-1)] = d.decFar
			d.micDec[(k/decimation-1)&(delayMicDecSize-1)] = d.decMic
			d.decFar, d.decMic = 0, 0
		}
		if d.accN++; d.accN == envChunk {
			d.farEnv[d.envN&(delayFarEnvSize-1)] = d.accFar
			d.micEnv[d.envN&(delayMicEnvSize-1)] = d.accMic
			d.envN++
			d.accFar, d.accMic, d.accN = 0, 0, 0
			d.sinceEstimate++
			d.sinceTrack++
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
	if d.sinceTrack >= trackEveryMs && d.target >= 0 {
		d.sinceTrack = 0
		d.track()
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
	if d.target >= 0 && abs(lag*envChunk-(d.shift+d.target)) <= trackRange {
		// The canceller sees the delay it should, or near enough for track to follow: its
		// looks are sharper and newer than this half second's envelope, which straddles a
		// move for half a second after it and would take a move track made back.
		d.pending = -1
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
	if best, _ := d.correlate(around-envChunk, around+envChunk, refineSamples); best >= 0 {
		return best
	}
	return around
}

// track follows the echo at sample precision between the envelope estimates. Through a
// PulseAudio null sink the echo's delay crept by 2.5 ms steps, up and down, every second or two
// in some runs (the sound server resizing its buffers); the envelope estimate, a millisecond
// coarse and half a second apart, let the canceller chase each step and it never converged
// (5-10 dB of echo removed, against 35 dB in the runs without the creep). A period the
// microphone finds no reference for moves it by a whole period at once. Every trackEveryMs it
// looks trackRange either side of where the canceller expects the echo, and when two looks in a
// row agree on a place more than trackTolerance away, the reference moves there at once.
func (d *delayEstimator) track() {
	at := d.shift + d.target
	coarse, ok := d.correlateDecimated((at-trackRange)/decimation, (at+trackRange)/decimation)
	found := at
	if ok {
		found, ok = d.correlate(coarse*decimation-decimation, coarse*decimation+decimation, trackSamples)
	}
	switch {
	case !ok || abs(found-at) <= trackTolerance:
		d.trackPending = -1
	case d.trackPending >= 0 && abs(found-d.trackPending) <= trackTolerance:
		want := max(0, found-d.target)
		d.shift, d.base, d.knownAt, d.trackPending = want, want, d.known, -1
	default:
		d.trackPending = found
	}
}

// correlate returns the delay from lo to hi samples (clamped to 0..maxDelaySamples) at which the
// far signal best matches the microphone's last window samples, and whether that match is good
// enough to act on: a normalized correlation of trackCorrelation or more. The delay is -1 when
// the far signal is silent there.
func (d *delayEstimator) correlate(lo, hi, window int) (int, bool) {
	lo, hi = max(0, lo), min(maxDelaySamples, hi)
	return match(d.mic, d.far, d.n, window, lo, hi)
}

// correlateDecimated is correlate on the decimated signals over a look's window: the lag from lo
// to hi decimated samples at which they match best, and whether that match is good enough.
func (d *delayEstimator) correlateDecimated(lo, hi int) (int, bool) {
	lo, hi = max(0, lo), min(maxDelaySamples/decimation, hi)
	return match(d.micDec, d.farDec, d.n/decimation, trackSamples/decimation, lo, hi)
}

// match returns the lag from lo to hi at which the ring far best matches the last window values
// of the ring mic (both indexed by position, their lengths powers of two, end one past the
// newest), and whether the normalized correlation there reaches trackCorrelation; the lag is -1
// when far is silent there.
func match[T int16 | float32](mic, far []T, end uint64, window, lo, hi int) (int, bool) {
	micMask, farMask := uint64(len(mic)-1), uint64(len(far)-1)
	var mm float64
	for i := end - uint64(window); i < end; i++ {
		m := float64(mic[i&micMask])
		mm += m * m
	}
	best, bestScore, bestNorm := -1, math.Inf(-1), 0.0
	for lag := lo; lag <= hi; lag++ {
		var mf, ff float64
		for i := end - uint64(window); i < end; i++ {
			f := float64(far[(i-uint64(lag))&farMask])
			mf += float64(mic[i&micMask]) * f
			ff += f * f
		}
		if ff == 0 {
			continue
		}
		if s := mf / math.Sqrt(ff); s > bestScore {
			best, bestScore = lag, s
			if mm > 0 {
				bestNorm = s / math.Sqrt(mm)
			}
		}
	}
	return best, bestNorm >= trackCorrelation
}
