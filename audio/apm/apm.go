// Package apm processes the microphone signal before it is encoded: acoustic echo cancellation,
// noise suppression and automatic gain control, from speexdsp (its MDF echo canceller
// speex_echo_* and its preprocessor speex_preprocess_*), linked statically into the SDK.
//
// A Processor works on frames of a fixed size at 48 kHz mono. Playback hands it each frame the
// speakers play (the far-end reference); Capture cleans each microphone frame. The three stages
// are on by default and can be switched at run time from any goroutine; the switch takes effect
// at the next Capture. Playback and Capture may run on two different goroutines (one producer
// and one consumer of the reference queue between them) and allocate nothing.
package apm

/*
#cgo pkg-config: speexdsp
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>

static int sdkpp_echo_set_rate(SpeexEchoState *st, int rate) {
	return speex_echo_ctl(st, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
}

static int sdkpp_preprocess_set(SpeexPreprocessState *st, int request, int value) {
	return speex_preprocess_ctl(st, request, &value);
}

static int sdkpp_preprocess_set_echo(SpeexPreprocessState *st, SpeexEchoState *echo) {
	return speex_preprocess_ctl(st, SPEEX_PREPROCESS_SET_ECHO_STATE, echo);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"

	"sdkpp/audio/pcm"
)

const (
	// DefaultTailMs is the echo tail a Processor models when New gets 0: how long after a sound
	// is played its echo can still reach the microphone (device latency plus room reverberation).
	DefaultTailMs = 200
	// MaxTailMs is the longest echo tail New accepts.
	MaxTailMs = 1000
	// referenceFrames is how many far-end frames Playback can queue ahead of Capture, at least,
	// and referenceMs how much far-end audio at least: shorter frames queue more of them.
	referenceFrames = 8
	referenceMs     = 80
	// suppressDB is how far noise suppression lowers stationary noise (speexdsp's default), and
	// cancelDB how far noise cancellation does: the same denoiser at its strongest.
	suppressDB = -15
	cancelDB   = -45
)

// ErrFrameSize is returned when a frame passed to Playback or Capture is not the Processor's
// frame size.
var ErrFrameSize = errors.New("apm: frame has the wrong number of samples")

// ErrClosed is returned by Playback and Capture after Close.
var ErrClosed = errors.New("apm: processor is closed")

// Processor cleans microphone frames: echo cancellation against the played reference, then
// noise suppression and automatic gain control.
type Processor struct {
	frame     int
	refFrames int // the reference queue's length, in frames
	echo      *C.SpeexEchoState
	pre       *C.SpeexPreprocessState

	// The reference queue: Playback produces whole frames, Capture consumes them.
	ref        []int16
	head, tail atomic.Uint64 // frames consumed, frames produced
	dropped    atomic.Uint64
	starved    atomic.Uint64
	hurry      atomic.Bool // EchoPathMayMove was called: Capture hurries the estimate
	silence    []int16     // the reference while nothing plays
	delay      *delayEstimator
	shift      atomic.Int64 // the delay's shift as last applied, for EchoDelayShift
	known      atomic.Int64 // SetKnownDelay's samples, -1 until set
	scratch    []int16      // a copy of the input when Capture works in place
	scratchOut []int16      // Idle's output, which nobody reads
	far        []int16      // the reference of the frame being cleaned: silence or farBuf
	farBuf     []int16      // the queued reference of the frame being cleaned, copied off the queue
	farQuiet   int          // samples of silence the far end has played, up to echoSpan
	echoSpan   int          // how long an echo can take to come back: tail and longest delay
	linked     bool         // the preprocessor has the echo canceller's residual
	cancelled  atomic.Uint64

	// Wanted settings (any goroutine) and the ones applied to the C state (Capture only).
	wantAEC, wantNS, wantAGC, wantNC atomic.Bool
	aec, ns, agc, nc                 bool
	closed                           atomic.Bool
}

// New returns a Processor for frames of frameSamples samples at 48 kHz mono (10 or 20 ms, that is
// 480 or 960, work best) that cancels echoes up to tailMs milliseconds long (0 means
// DefaultTailMs). Echo cancellation, noise suppression and gain control are on. Close frees it.
func New(frameSamples, tailMs int) (*Processor, error) {
	if frameSamples <= 0 || frameSamples > pcm.SampleRate/10 {
		return nil, fmt.Errorf("apm: frame of %d samples outside 1..%d", frameSamples, pcm.SampleRate/10)
	}
	if tailMs == 0 {
		tailMs = DefaultTailMs
	}
	if tailMs < 0 || tailMs > MaxTailMs {
		return nil, fmt.Errorf("apm: echo tail of %d ms outside 1..%d", tailMs, MaxTailMs)
	}
	refFrames := max(referenceFrames, referenceMs*pcm.SampleRate/1000/frameSamples)
	p := &Processor{
		frame:     frameSamples,
		refFrames: refFrames,
		ref:       make([]int16, refFrames*frameSamples),
		silence:   make([]int16, frameSamples),
		scratch:   make([]int16, frameSamples),
		delay:     newDelayEstimator(frameSamples),
	}
	p.scratchOut = make([]int16, frameSamples)
	p.farBuf = make([]int16, frameSamples)
	// Until something is played there is no echo: the canceller starts idle.
	p.echoSpan = tailMs*pcm.SampleRate/1000 + maxDelaySamples + delayMargin
	p.farQuiet = p.echoSpan
	p.known.Store(-1)
	p.echo = C.speex_echo_state_init(C.int(frameSamples), C.int(tailMs*pcm.SampleRate/1000))
	if p.echo == nil {
		return nil, errors.New("apm: speex_echo_state_init failed")
	}
	p.pre = C.speex_preprocess_state_init(C.int(frameSamples), C.int(pcm.SampleRate))
	if p.pre == nil {
		C.speex_echo_state_destroy(p.echo)
		return nil, errors.New("apm: speex_preprocess_state_init failed")
	}
	if err := p.init(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Processor) init() error {
	if C.sdkpp_echo_set_rate(p.echo, C.int(pcm.SampleRate)) != 0 {
		return errors.New("apm: set echo canceller sample rate")
	}
	p.wantAEC.Store(true)
	p.wantNS.Store(true)
	p.wantAGC.Store(true)
	return p.apply(true)
}

// apply brings the C state in line with the wanted settings. Only Capture's goroutine calls it.
func (p *Processor) apply(force bool) error {
	aec, ns, agc, nc := p.wantAEC.Load(), p.wantNS.Load(), p.wantAGC.Load(), p.wantNC.Load()
	if !force && aec == p.aec && ns == p.ns && agc == p.agc && nc == p.nc {
		return nil
	}
	if aec != p.aec || force {
		// The preprocessor also suppresses the echo the linear filter leaves, when it has one
		// (linkEcho, as the canceller runs).
		if aec && !p.aec {
			C.speex_echo_state_reset(p.echo) // its history is stale after a pause
			p.delay.reset()
			p.shift.Store(0)
		}
		if C.sdkpp_preprocess_set_echo(p.pre, nil) != 0 {
			return errors.New("apm: unlink echo canceller from preprocessor")
		}
		p.linked = false
	}
	// Noise cancellation takes the denoiser over from noise suppression.
	level := suppressDB
	if nc {
		level = cancelDB
	}
	if C.sdkpp_preprocess_set(p.pre, C.SPEEX_PREPROCESS_SET_DENOISE, boolInt(ns || nc)) != 0 ||
		C.sdkpp_preprocess_set(p.pre, C.SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, C.int(level)) != 0 {
		return errors.New("apm: switch noise suppression")
	}
	if C.sdkpp_preprocess_set(p.pre, C.SPEEX_PREPROCESS_SET_AGC, boolInt(agc)) != 0 {
		return errors.New("apm: switch gain control")
	}
	p.aec, p.ns, p.agc, p.nc = aec, ns, agc, nc
	return nil
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// SetEchoCancellation switches echo cancellation (on by default).
func (p *Processor) SetEchoCancellation(on bool) { p.wantAEC.Store(on) }

// SetNoiseSuppression switches noise suppression (on by default).
func (p *Processor) SetNoiseSuppression(on bool) { p.wantNS.Store(on) }

// SetNoiseCancellation switches noise cancellation (off by default): the denoiser at its
// strongest (-45 dB instead of -15 dB). While on, it replaces noise suppression.
func (p *Processor) SetNoiseCancellation(on bool) { p.wantNC.Store(on) }

// SetAutoGain switches automatic gain control (on by default).
func (p *Processor) SetAutoGain(on bool) { p.wantAGC.Store(on) }

// FrameSamples returns the frame size the Processor was made for.
func (p *Processor) FrameSamples() int { return p.frame }

// DroppedReference returns how many far-end frames Playback dropped because Capture had fallen
// a reference queue's length (80 ms, 8 frames at least) behind.
func (p *Processor) DroppedReference() uint64 { return p.dropped.Load() }

// EchoDelayShift returns how many samples the echo delay estimate currently delays the far
// reference by, beyond the reference queue: it follows the echo delay inside the sound system,
// less a margin the canceller models itself, so that the canceller keeps its echo path when
// the sound system's buffering moves.
func (p *Processor) EchoDelayShift() int { return int(p.shift.Load()) }

// SetKnownDelay tells the Processor how many samples of its caller's own buffering now lie
// between a frame handed to Playback and its echo in Capture's input (say, what waits in the
// playback and capture rings): a change moves the reference at once, where the estimate would
// take half a second to see it.
func (p *Processor) SetKnownDelay(samples int) { p.known.Store(int64(max(0, samples))) }

// EchoPathMayMove tells the Processor that the echo's delay may have moved by an amount its
// caller does not know (the speaker lacked audio, and a sound server may raise its latency then):
// the delay estimate looks again five times as often for two seconds, so that the canceller is
// back on the echo within about half a second instead of converging again for seconds.
func (p *Processor) EchoPathMayMove() { p.hurry.Store(true) }

// StarvedReference returns how many microphone frames Capture cleaned against silence because no
// far-end frame was queued.
func (p *Processor) StarvedReference() uint64 { return p.starved.Load() }

// QueuedReference returns how many far-end frames Playback has queued since New (dropped ones
// not counted).
func (p *Processor) QueuedReference() uint64 { return p.tail.Load() }

// Playback queues far, the frame being played to the speakers, as the reference the next Capture
// cancels against. Call it once per played frame, silence included (or not at all while nothing
// plays: Capture then takes silence as the reference).
func (p *Processor) Playback(far []int16) error {
	if len(far) != p.frame {
		return ErrFrameSize
	}
	head, tail := p.head.Load(), p.tail.Load()
	if tail-head >= uint64(p.refFrames) {
		p.dropped.Add(1)
		return nil
	}
	i := int(tail%uint64(p.refFrames)) * p.frame
	copy(p.ref[i:i+p.frame], far)
	p.tail.Store(tail + 1)
	return nil
}

// Capture cleans in, one microphone frame, into out (both of the Processor's frame size; they
// may be the same slice). While nothing but silence has been played for longer than an echo can
// take to come back (the tail and the longest delay looked for), there is no echo to cancel:
// the echo canceller is skipped and only the preprocessor runs.
func (p *Processor) Capture(in, out []int16) error {
	if err := p.begin(in, out); err != nil {
		return err
	}
	if !p.cancelEcho(in, out) {
		copy(out, in)
	}
	if p.ns || p.nc || p.agc {
		C.speex_preprocess_run(p.pre, (*C.spx_int16_t)(&out[0]))
	}
	return nil
}

// Idle stands for Capture on a microphone frame the caller does not need cleaned (nothing is
// being sent): it takes the frame's reference off the queue, so that the frames after it stay
// paired with theirs, and keeps the echo canceller converged while there is echo to learn from,
// but runs no noise suppression or gain control, and nothing at all while the far end is silent.
func (p *Processor) Idle(in []int16) error {
	if err := p.begin(in, p.scratchOut); err != nil {
		return err
	}
	p.cancelEcho(in, p.scratchOut)
	return nil
}

// EchoCancelled counts the microphone frames the echo canceller ran on; the others found only
// silence played for longer than an echo lasts, or were captured with echo cancellation off.
func (p *Processor) EchoCancelled() uint64 { return p.cancelled.Load() }

// begin checks a frame, applies the settings and takes the frame's reference off the queue
// (silence when none is queued) into p.far, noting how long the far end has been silent.
func (p *Processor) begin(in, out []int16) error {
	if p.closed.Load() {
		return ErrClosed
	}
	if len(in) != p.frame || len(out) != p.frame {
		return ErrFrameSize
	}
	if err := p.apply(false); err != nil {
		return err
	}
	p.far = p.silence
	head, tail := p.head.Load(), p.tail.Load()
	if head != tail {
		// Copied out before the slot is given back: Playback may fill it again at once.
		i := int(head%uint64(p.refFrames)) * p.frame
		copy(p.farBuf, p.ref[i:i+p.frame])
		p.far = p.farBuf
		p.head.Store(head + 1)
	} else {
		p.starved.Add(1)
	}
	if silent(p.far) {
		p.farQuiet = min(p.farQuiet+p.frame, p.echoSpan)
	} else {
		p.farQuiet = 0
	}
	return nil
}

// cancelEcho runs the echo canceller on in into out against p.far when it is on and an echo may
// still come back, and reports whether it ran. The preprocessor uses the canceller's residual
// echo only while the canceller runs.
func (p *Processor) cancelEcho(in, out []int16) bool {
	live := p.aec && p.farQuiet < p.echoSpan
	p.linkEcho(live)
	if !live {
		return false
	}
	if &in[0] == &out[0] {
		// speex_echo_cancellation reads in while it writes out: keep them apart.
		copy(p.scratch, in)
		in = p.scratch
	}
	// The reference, delayed to keep the echo delay the canceller sees where it was.
	if k := p.known.Load(); k >= 0 {
		p.delay.setKnown(int(k))
	}
	if p.hurry.Swap(false) {
		p.delay.hurry()
	}
	ref := p.delay.push(p.far, in)
	if s := int64(p.delay.shift); s != p.shift.Load() {
		p.shift.Store(s)
	}
	C.speex_echo_cancellation(p.echo, (*C.spx_int16_t)(&in[0]), (*C.spx_int16_t)(&ref[0]),
		(*C.spx_int16_t)(&out[0]))
	p.cancelled.Add(1)
	return true
}

// linkEcho links the echo canceller to the preprocessor (on) or unlinks it.
func (p *Processor) linkEcho(on bool) {
	if on == p.linked {
		return
	}
	echo := p.echo
	if !on {
		echo = nil
	}
	if C.sdkpp_preprocess_set_echo(p.pre, echo) == 0 {
		p.linked = on
	}
}

// silent reports whether a frame is digital silence.
func silent(frame []int16) bool {
	for _, v := range frame {
		if v != 0 {
			return false
		}
	}
	return true
}

// Close frees the Processor's C state. Call it once, after the last Playback and Capture.
func (p *Processor) Close() {
	if p.closed.Swap(true) {
		return
	}
	C.speex_preprocess_state_destroy(p.pre)
	C.speex_echo_state_destroy(p.echo)
}
