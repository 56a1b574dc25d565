package engine

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
	"sdkpp/core/voice"
)

// While voice activity hears nothing and nothing plays, the engine waits for two frames of the
// microphone at once: a frame alone waits in the ring, and the wake-up that the next one brings
// steps on both (the first step sees the second frame still in the ring). Speech that starts in
// either frame of a pair is sent from its first frame, and every talk spurt ends with its
// end-of-speech marker. In the low-latency mode the frames, and the wait, are half as long.
func TestQuietVoiceActivityWaitsForTwoFrames(t *testing.T) {
	t.Run("default", func(t *testing.T) { quietVoiceActivityWaitsForTwoFrames(t, false) })
	t.Run("low-latency", func(t *testing.T) { quietVoiceActivityWaitsForTwoFrames(t, true) })
}

func quietVoiceActivityWaitsForTwoFrames(t *testing.T, low bool) {
	rec := &recorder{}
	r := startRunningWith(t, voice.EngineConfig{OnPacket: rec.onPacket}, Options{})
	r.e.SetLowLatency(low)
	s := r.devs.Stream()
	n := modeFrame(low)
	silence := make([]int16, n)
	tone := make([]int16, 15*pcm.FrameSamples) // 300 ms at -12 dBFS
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*300*float64(i)/pcm.SampleRate))
	}
	fed, stepped := 0, 0 // frames played, and steps the engine took on them
	// feed plays one frame of the microphone, a period at a time, and waits until the engine
	// has stepped on every frame played, or (unless all) holds this one in the ring while it
	// waits quietly for another; it returns the capture ring's fill at each step taken.
	feed := func(mic []int16, all bool) []int {
		for p := 0; p < len(mic); p += pcm.PeriodSamples {
			require.True(t, s.Period(mic[p:p+pcm.PeriodSamples], r.out))
			r.clock.advance(10 * time.Millisecond)
		}
		fed++
		var fills []int
		require.Eventually(t, func() bool {
			for {
				select {
				case f := <-r.frames:
					fills = append(fills, f)
					stepped++
					continue
				default:
				}
				break
			}
			// The frame it holds may be in part read already.
			return stepped == fed || !all && stepped == fed-1 && s.Capture().Len() <= n &&
				r.e.playIdle.Load() && !r.e.vad.Speaking() && rec.ended()
		}, 5*time.Second, 50*time.Microsecond, "frame %d: the engine steps", fed-1)
		return fills
	}
	// quiet plays pairs of silent frames: each pair is one wake-up.
	quiet := func(pairs int) {
		for range pairs {
			require.Empty(t, feed(silence, false), "frame %d waits for the next", fed-1)
			require.Equal(t, []int{n, 0}, feed(silence, true), "frames %d and %d: one wake-up finds both", fed-2, fed-1)
		}
	}
	// settle plays silence until the engine waits quietly with the ring empty.
	settle := func() {
		for i := 0; stepped < fed || !r.e.playIdle.Load() || r.e.vad.Speaking() || !rec.ended(); i++ {
			require.Less(t, i, 100, "the engine settles")
			feed(silence, false)
		}
	}

	settle()
	quiet(10)
	var starts []int // the frames where bursts start
	for _, second := range []bool{false, true, false, true} {
		if second {
			feed(silence, false)
		}
		starts = append(starts, fed)
		for p := 0; p < len(tone); p += n {
			feed(tone[p:p+n], false)
		}
		settle()
		quiet(2)
	}

	// Each burst's spurt starts at its first frame, and every one ends with a marker.
	var first []int
	spurt := false
	for _, p := range rec.take() {
		if !spurt {
			first = append(first, int(p.Timestamp)/n)
		}
		spurt = !p.EndOfSpeech
	}
	assert.False(t, spurt, "the last spurt ended")
	assert.Equal(t, starts, first, "every burst is sent from its first frame")
}

// ended reports whether the last packet recorded, if any, ends a talk spurt.
func (r *recorder) ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pkts) == 0 || r.pkts[len(r.pkts)-1].EndOfSpeech
}
