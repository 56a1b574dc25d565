package apm

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/internal/testsignal"
	"sdkpp/audio/pcm"
)

const frame = pcm.FrameSamples

// echoScene is a far-end talker played to the speakers and a microphone that hears only its echo:
// the played signal 40 ms later at half amplitude (-6 dB), over a -80 dBFS noise floor.
func echoScene(seconds int) (far, mic []int16) {
	n := seconds * pcm.SampleRate
	far = testsignal.Voiced(11, n, 0.5)
	mic = testsignal.Noise(12, n, -80)
	delay := 40 * pcm.SampleRate / 1000
	for i := delay; i < n; i++ {
		mic[i] = pcm.Clamp16(int32(mic[i]) + int32(far[i-delay])/2)
	}
	return far, mic
}

// run feeds far and mic through p frame by frame and returns the processed microphone signal.
func run(t testing.TB, p *Processor, far, mic []int16) []int16 {
	out := make([]int16, len(mic))
	for f := 0; f+frame <= len(mic); f += frame {
		if far != nil {
			require.NoError(t, p.Playback(far[f:f+frame]))
		}
		require.NoError(t, p.Capture(mic[f:f+frame], out[f:f+frame]))
	}
	return out
}

// gainDB returns how much louder out is than in over the given sample range, in dB.
func gainDB(in, out []int16, from, to int) float64 {
	return 10 * math.Log10(testsignal.Energy(out[from:to])/testsignal.Energy(in[from:to]))
}

func newProcessor(t testing.TB, aec, ns, agc bool) *Processor {
	p, err := New(frame, 0)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	p.SetEchoCancellation(aec)
	p.SetNoiseSuppression(ns)
	p.SetAutoGain(agc)
	return p
}

func TestEchoCancellation(t *testing.T) {
	far, mic := echoScene(10)
	last := len(mic) - 3*pcm.SampleRate // the last 3 s, after convergence
	for _, tc := range []struct {
		name    string
		ns, agc bool
		maxGain float64
	}{
		{"canceller alone", false, false, -15},
		{"all stages on (the default)", true, true, -15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProcessor(t, true, tc.ns, tc.agc)
			out := run(t, p, far, mic)
			g := gainDB(mic, out, last, len(mic))
			perSecond := make([]string, 0, 10)
			for s := 0; s+pcm.SampleRate <= len(mic); s += pcm.SampleRate {
				perSecond = append(perSecond, fmt.Sprintf("%.0f", gainDB(mic, out, s, s+pcm.SampleRate)))
			}
			t.Logf("residual echo %.1f dB against the echo at the microphone (per second: %v dB)",
				g, perSecond)
			assert.Less(t, g, tc.maxGain)
		})
	}
}

func TestEchoCancellationOffLeavesTheSignalUnchanged(t *testing.T) {
	far, mic := echoScene(10)
	half := 7 * pcm.SampleRate
	p := newProcessor(t, true, false, false)
	first := run(t, p, far[:half], mic[:half])
	require.Less(t, gainDB(mic, first, half-pcm.SampleRate, half), -15.0, "the canceller was working")

	// Switched off at run time, mid-call: the microphone signal passes untouched.
	p.SetEchoCancellation(false)
	second := run(t, p, far[half:], mic[half:])
	assert.Equal(t, mic[half:], second)
}

func TestNoiseSuppressionLowersStationaryNoise(t *testing.T) {
	noise := testsignal.Noise(13, 5*pcm.SampleRate, -40)
	last := len(noise) - 2*pcm.SampleRate
	off := run(t, newProcessor(t, false, false, false), nil, noise)
	on := run(t, newProcessor(t, false, true, false), nil, noise)
	gOff, gOn := gainDB(noise, off, last, len(noise)), gainDB(noise, on, last, len(noise))
	t.Logf("stationary noise: %.1f dB with suppression off, %.1f dB on", gOff, gOn)
	assert.InDelta(t, 0, gOff, 0.01)
	assert.Less(t, gOn, -10.0)
}

// Noise cancellation lowers stationary noise further than suppression, and replaces it: with
// suppression off it still works.
func TestNoiseCancellationLowersNoiseFurther(t *testing.T) {
	noise := testsignal.Noise(13, 5*pcm.SampleRate, -40)
	last := len(noise) - 2*pcm.SampleRate
	ns := run(t, newProcessor(t, false, true, false), nil, noise)
	nc := newProcessor(t, false, false, false)
	nc.SetNoiseCancellation(true)
	cancelled := run(t, nc, nil, noise)
	gNS, gNC := gainDB(noise, ns, last, len(noise)), gainDB(noise, cancelled, last, len(noise))
	t.Logf("stationary noise: %.1f dB with suppression, %.1f dB with cancellation", gNS, gNC)
	assert.Less(t, gNC, gNS-6)
}

func TestAutoGainRaisesQuietSpeech(t *testing.T) {
	quiet := testsignal.Voiced(14, 10*pcm.SampleRate, 0.02)
	last := len(quiet) - 3*pcm.SampleRate
	out := run(t, newProcessor(t, false, false, true), nil, quiet)
	g := gainDB(quiet, out, last, len(quiet))
	t.Logf("quiet speech at %.1f dBFS raised by %.1f dB", pcm.LevelDBFS(quiet[last:]), g)
	assert.Greater(t, g, 6.0)
}

func TestNoAllocationPerFrame(t *testing.T) {
	far, mic := echoScene(1)
	p := newProcessor(t, true, true, true)
	out := make([]int16, frame)
	f := 0
	allocs := testing.AllocsPerRun(100, func() {
		lo := (f % 50) * frame
		f++
		if err := p.Playback(far[lo : lo+frame]); err != nil {
			panic(err)
		}
		if err := p.Capture(mic[lo:lo+frame], out); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestCaptureInPlace(t *testing.T) {
	far, mic := echoScene(4)
	a := run(t, newProcessor(t, true, true, true), far, mic)
	b := append([]int16(nil), mic...)
	p := newProcessor(t, true, true, true)
	for f := 0; f+frame <= len(b); f += frame {
		require.NoError(t, p.Playback(far[f:f+frame]))
		require.NoError(t, p.Capture(b[f:f+frame], b[f:f+frame]))
	}
	assert.Equal(t, a, b)
}

// Playback, Capture and the switches on three goroutines, as the engine may call them; run with
// -race.
func TestConcurrentUse(t *testing.T) {
	far, mic := echoScene(2)
	p := newProcessor(t, true, true, true)
	var wg sync.WaitGroup
	wg.Go(func() {
		for f := 0; f+frame <= len(far); f += frame {
			assert.NoError(t, p.Playback(far[f:f+frame]))
		}
	})
	wg.Go(func() {
		out := make([]int16, frame)
		for f := 0; f+frame <= len(mic); f += frame {
			assert.NoError(t, p.Capture(mic[f:f+frame], out))
		}
	})
	wg.Go(func() {
		for i := range 100 {
			p.SetEchoCancellation(i%2 == 0)
			p.SetNoiseSuppression(i%3 == 0)
			p.SetAutoGain(i%5 == 0)
		}
	})
	wg.Wait()
}

func TestReferenceQueueIsBounded(t *testing.T) {
	p := newProcessor(t, true, true, true)
	far := make([]int16, frame)
	for range referenceFrames + 3 {
		require.NoError(t, p.Playback(far))
	}
	assert.Equal(t, uint64(3), p.DroppedReference())
}

func TestRejectsBadArguments(t *testing.T) {
	_, err := New(0, 0)
	assert.Error(t, err)
	_, err = New(frame, MaxTailMs+1)
	assert.Error(t, err)
	_, err = New(frame, -1)
	assert.Error(t, err)

	p, err := New(frame, 100)
	require.NoError(t, err)
	assert.Equal(t, frame, p.FrameSamples())
	buf := make([]int16, frame)
	assert.ErrorIs(t, p.Playback(buf[:10]), ErrFrameSize)
	assert.ErrorIs(t, p.Capture(buf, buf[:10]), ErrFrameSize)
	p.Close()
	p.Close() // a second Close does nothing
	assert.ErrorIs(t, p.Capture(buf, buf), ErrClosed)
}

// BenchmarkCapture measures the cost of one frame (Playback and Capture) per stage set, frame
// size and echo tail.
func BenchmarkCapture(b *testing.B) {
	far, mic := echoScene(1)
	for _, size := range []int{pcm.PeriodSamples, pcm.FrameSamples} {
		for _, tc := range []struct {
			name         string
			aec, ns, agc bool
			tailMs       int
		}{
			{"all", true, true, true, 200},
			{"all-tail100", true, true, true, 100},
			{"aec", true, false, false, 200},
			{"ns+agc", false, true, true, 200},
		} {
			b.Run(fmt.Sprintf("%dms/%s", size*1000/pcm.SampleRate, tc.name), func(b *testing.B) {
				p, err := New(size, tc.tailMs)
				require.NoError(b, err)
				defer p.Close()
				p.SetEchoCancellation(tc.aec)
				p.SetNoiseSuppression(tc.ns)
				p.SetAutoGain(tc.agc)
				out := make([]int16, size)
				frames := len(mic) / size
				b.ReportAllocs()
				testsignal.ReportCPU(b)
				for i := 0; b.Loop(); i++ {
					lo := (i % frames) * size
					_ = p.Playback(far[lo : lo+size])
					_ = p.Capture(mic[lo:lo+size], out)
				}
			})
		}
	}
}

// When the echo delay inside the sound system moves (40 ms, then 90 ms, as a busy machine makes
// PulseAudio buffer more), the delay estimate follows it and delays the reference to match: the
// canceller keeps its echo path instead of adapting to a new one for seconds.
func TestEchoDelayEstimateFollowsAMovingDelay(t *testing.T) {
	n, jump := 12*pcm.SampleRate, 6*pcm.SampleRate
	far := testsignal.Voiced(11, n, 0.5)
	mic := testsignal.Noise(12, n, -80)
	for i := range n {
		d := 40 * pcm.SampleRate / 1000
		if i >= jump {
			d = 90 * pcm.SampleRate / 1000
		}
		if i >= d {
			mic[i] = pcm.Clamp16(int32(mic[i]) + int32(far[i-d])/2)
		}
	}
	t.Run("estimated", func(t *testing.T) { testMovingDelay(t, far, mic, jump, false) })
	t.Run("known", func(t *testing.T) { testMovingDelay(t, far, mic, jump, true) })
}

// An echo delay shorter than the margin is where the canceller converges; when it then grows
// (PulseAudio raising its latency after an underrun), the reference follows by the move, not by
// the move beyond the margin. A move within the tracking range is followed within a few looks
// whether or not the engine says the path may have moved (measured: -15 dB over 0.5-2 s after
// it either way; before the tracking, -4.6 dB untold and -13 dB told). A longer move is the
// envelope estimate's, which being told makes look five times as often; on this voiced signal
// the looks follow it as soon (8 to 48 ms: -18 dB either way, against -11 dB told and -7.1 dB
// untold with looks every 100 ms).
func TestShortEchoDelayMoveIsFollowed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		toMs   int  // the echo's delay after the move (before it: 8 ms)
		tracks bool // the move is within the tracking range
	}{
		{"within the tracking range", 18, true},
		{"beyond the tracking range", 48, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, jump := 12*pcm.SampleRate, 6*pcm.SampleRate
			far := testsignal.Voiced(11, n, 0.5)
			mic := testsignal.Noise(12, n, -80)
			for i := range n {
				d := 8 * samplesPerMs
				if i >= jump {
					d = tc.toMs * samplesPerMs
				}
				if i >= d {
					mic[i] = pcm.Clamp16(int32(mic[i]) + int32(far[i-d])/2)
				}
			}
			var soonUntold float64
			for _, hurry := range []bool{false, true} {
				p := newProcessor(t, true, false, false)
				run(t, p, far[:jump], mic[:jump])
				assert.Zero(t, p.EchoDelayShift(), "a delay within the margin is left to the canceller")
				if hurry {
					p.EchoPathMayMove()
				}
				after := run(t, p, far[jump:], mic[jump:])
				assert.InDelta(t, (tc.toMs-8)*samplesPerMs, p.EchoDelayShift(), shiftTolerance, "the shift follows the move")
				soon := gainDB(mic[jump:], after, pcm.SampleRate/2, 2*pcm.SampleRate)
				late := gainDB(mic[jump:], after, 3*pcm.SampleRate, 6*pcm.SampleRate)
				t.Logf("told of the move %v: residual echo %.1f dB from 0.5 s to 2 s after it, %.1f dB from 3 s to 6 s", hurry, soon, late)
				assert.Less(t, late, -25.0)
				switch {
				case tc.tracks:
					assert.Less(t, soon, -12.0, "the tracking follows the move within half a second")
				case hurry:
					assert.LessOrEqual(t, soon, soonUntold+1, "told, the canceller is back on the echo no later")
				default:
					soonUntold = soon
				}
			}
		})
	}
}

// testMovingDelay runs the scene of TestEchoDelayEstimateFollowsAMovingDelay, the move either
// found by the estimate or told by SetKnownDelay (as the engine does for its rings).
func testMovingDelay(t *testing.T, far, mic []int16, jump int, known bool) {
	p := newProcessor(t, true, true, true)
	if known {
		p.SetKnownDelay(1000)
	}
	before := run(t, p, far[:jump], mic[:jump])
	gBefore := gainDB(mic, before, jump-pcm.SampleRate, jump)
	assert.InDelta(t, 40*samplesPerMs-delayMargin, p.EchoDelayShift(), shiftTolerance,
		"the reference is delayed by the echo delay less the canceller's margin")
	if known {
		// The caller's buffering grew by the move: the reference follows at once.
		p.SetKnownDelay(1000 + 50*samplesPerMs)
		first := run(t, p, far[jump:jump+pcm.SampleRate/2], mic[jump:jump+pcm.SampleRate/2])
		g := gainDB(mic[jump:], first, 0, pcm.SampleRate/2)
		t.Logf("residual echo %.1f dB in the 0.5 s after the move", g)
		assert.Less(t, g, -15.0, "a known move is followed at once (the estimate alone leaves about -5 dB here)")
		jump += pcm.SampleRate / 2
	}
	after := run(t, p, far[jump:], mic[jump:])
	assert.InDelta(t, 90*samplesPerMs-delayMargin, p.EchoDelayShift(), shiftTolerance, "the shift follows the new delay")
	g := gainDB(mic[jump:], after, 3*pcm.SampleRate/2, 3*pcm.SampleRate)
	t.Logf("residual echo %.1f dB before the move, %.1f dB from 1.5 s to 3 s after it",
		gBefore, g)
	assert.Less(t, g, -25.0, "the canceller keeps cancelling once the estimate follows")
}

// There is no echo of silence: while nothing but silence has been played for longer than an echo
// lasts (before anything plays, or that long after it stopped) the echo canceller does not run.
// It runs from the first frame played that is not silent, and Idle keeps it running (converged)
// while that echo may come back, without cleaning anything.
func TestNoEchoCancellationOfSilence(t *testing.T) {
	far, mic := echoScene(1)
	p := newProcessor(t, true, true, true)
	silence := make([]int16, frame)
	out := make([]int16, frame)
	for range 50 {
		require.NoError(t, p.Playback(silence))
		require.NoError(t, p.Capture(mic[:frame], out))
	}
	assert.Zero(t, p.EchoCancelled(), "nothing has been played")

	require.NoError(t, p.Playback(far[frame:2*frame]))
	require.NoError(t, p.Capture(mic[:frame], out))
	assert.Equal(t, uint64(1), p.EchoCancelled(), "a frame was played: its echo may come")

	span := (DefaultTailMs*samplesPerMs + maxDelaySamples + delayMargin) / frame // frames an echo may take
	for range span - 1 {
		require.NoError(t, p.Playback(silence))
		require.NoError(t, p.Idle(mic[:frame]))
	}
	assert.Equal(t, uint64(span), p.EchoCancelled(), "idle frames keep the canceller running while the echo may come")
	for range 20 {
		require.NoError(t, p.Playback(silence))
		require.NoError(t, p.Capture(mic[:frame], out))
	}
	assert.Equal(t, uint64(span), p.EchoCancelled(), "the echo is over")
	assert.Equal(t, uint64(0), p.StarvedReference(), "every frame took its own reference")
}

// Idle takes its frame's reference off the queue, so that the frame cleaned after it pairs with
// its own reference; it does not touch the frame.
func TestIdleKeepsThePairing(t *testing.T) {
	_, mic := echoScene(1)
	p := newProcessor(t, true, true, true)
	in := slices.Clone(mic[:frame])
	require.NoError(t, p.Playback(make([]int16, frame)))
	require.NoError(t, p.Idle(in))
	assert.Equal(t, mic[:frame], in)
	require.NoError(t, p.Idle(in))
	assert.Equal(t, uint64(1), p.StarvedReference(), "the second idle frame found the queue empty")
	assert.Error(t, p.Idle(in[:10]))
}
