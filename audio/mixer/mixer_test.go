package mixer

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/internal/testsignal"
	"sdkpp/audio/pcm"
	"sdkpp/audio/spatial"
)

// sine returns a 300 Hz frame of the given peak amplitude.
func sine(peak float64) []int16 {
	f := make([]int16, pcm.FrameSamples)
	for i := range f {
		f[i] = int16(math.Round(peak * math.Sin(2*math.Pi*300*float64(i)/pcm.SampleRate)))
	}
	return f
}

func constant(v int16) []int16 {
	f := make([]int16, pcm.FrameSamples)
	for i := range f {
		f[i] = v
	}
	return f
}

func TestUnityPassesThrough(t *testing.T) {
	m := New()
	a := m.Add(1)
	in := sine(20000)
	dst := make([]int16, pcm.FrameSamples)
	m.Mix(dst, []Input{{Channel: a, Samples: in}})
	assert.Equal(t, in, dst)
}

func TestVolumes(t *testing.T) {
	tests := []struct {
		name          string
		sender, out   int
		muted, deaf   bool
		want          int16
		senderClamped int
	}{
		{"unity", 100, 100, false, false, 1000, 100},
		{"half", 50, 100, false, false, 500, 50},
		{"double", 200, 100, false, false, 2000, 200},
		{"output half", 100, 50, false, false, 500, 100},
		{"both", 200, 150, false, false, 3000, 200},
		{"clamped high", 500, 100, false, false, 2000, 200},
		{"clamped low", -20, 100, false, false, 0, 0},
		{"muted", 100, 100, true, false, 0, 100},
		{"deafened", 100, 100, false, true, 0, 100},
		{"output zero", 100, 0, false, false, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			c := m.Add(7)
			c.SetVolume(tt.sender)
			c.SetMuted(tt.muted)
			m.SetVolume(tt.out)
			m.SetDeafened(tt.deaf)
			assert.Equal(t, tt.senderClamped, c.Volume())
			assert.Equal(t, tt.muted, c.Muted())
			assert.Equal(t, tt.deaf, m.Deafened())
			dst := constant(123)
			m.Mix(dst, []Input{{Channel: c, Samples: constant(1000)}})
			assert.Equal(t, constant(tt.want), dst)
		})
	}
	m := New()
	m.SetVolume(900)
	assert.Equal(t, MaxVolume, m.Volume())
}

func TestSumsSenders(t *testing.T) {
	m := New()
	a, b, c := m.Add(1), m.Add(2), m.Add(3)
	c.SetMuted(true)
	dst := make([]int16, pcm.FrameSamples)
	m.Mix(dst, []Input{{Channel: a, Samples: constant(1000)}, {Channel: b, Samples: constant(-300)}, {Channel: c, Samples: constant(5000)}})
	assert.Equal(t, constant(700), dst)
	// A short input counts as silence past its end.
	m.Mix(dst, []Input{{Channel: a, Samples: constant(1000)}, {Channel: b, Samples: constant(2000)[:10]}})
	assert.Equal(t, int16(3000), dst[0])
	assert.Equal(t, int16(1000), dst[10])
	m.Mix(dst, nil)
	assert.Equal(t, constant(0), dst)
}

func TestSoftClip(t *testing.T) {
	assert.Equal(t, int16(0), SoftClip(0))
	assert.Equal(t, int16(26000), SoftClip(26000))
	assert.Equal(t, int16(-26000), SoftClip(-26000))
	assert.Equal(t, int16(32767), SoftClip(1e9))
	assert.Equal(t, int16(-32767), SoftClip(-1e9))
	// Monotonic, below full scale for a moderate overload, continuous at the knee.
	prev := SoftClip(0)
	for v := float32(0); v < 3*32768; v += 37 {
		got := SoftClip(v)
		require.GreaterOrEqual(t, got, prev, "at %v", v)
		prev = got
	}
	assert.Less(t, SoftClip(40000), int16(32767))
	assert.Greater(t, SoftClip(40000), SoftClip(33000))
	k := float32(Knee * 32768)
	assert.InDelta(t, float64(k), float64(SoftClip(k+1)), 2)
	// The slope just above the knee is still about one.
	assert.InDelta(t, 100, float64(SoftClip(k+100)-SoftClip(k)), 2)
}

func TestTanhApproximation(t *testing.T) {
	prev := float32(-1)
	for x := float32(0); x < 5; x += 0.001 {
		got := tanh(x)
		require.GreaterOrEqual(t, got, prev, "monotonic at %v", x)
		require.InDelta(t, math.Tanh(float64(x)), float64(got), 0.025, "at %v", x)
		prev = got
	}
}

func TestOverloadIsLimitedNotWrapped(t *testing.T) {
	m := New()
	a, b := m.Add(1), m.Add(2)
	dst := make([]int16, pcm.FrameSamples)
	loud := sine(30000)
	m.Mix(dst, []Input{{Channel: a, Samples: loud}, {Channel: b, Samples: loud}})
	for i := range dst {
		if loud[i] > 0 {
			require.Greater(t, dst[i], int16(0), "no wrap-around at %d", i)
			require.GreaterOrEqual(t, dst[i], loud[i]-1, "the sum stays louder than one sender at %d", i)
		}
		if loud[i] < 0 {
			require.Less(t, dst[i], int16(0), "no wrap-around at %d", i)
		}
	}
}

func TestSpeakingEdges(t *testing.T) {
	m := New()
	a, b := m.Add(1), m.Add(2)
	assert.Equal(t, uint64(2), b.ID())
	dst := make([]int16, pcm.FrameSamples)
	voice, hiss := sine(3000), sine(30)

	m.Mix(dst, []Input{{Channel: a, Samples: voice}, {Channel: b, Samples: hiss}})
	assert.Equal(t, []Event{{a, true}}, m.Events())
	assert.True(t, a.Speaking())
	assert.False(t, b.Speaking())
	assert.InDelta(t, -23.8, a.Level(), 0.1)

	m.Mix(dst, []Input{{Channel: a, Samples: voice}, {Channel: b, Samples: voice}})
	assert.Equal(t, []Event{{b, true}}, m.Events(), "no event while a speaks on")

	// a's jitter buffer goes idle: no input from a; it stops after the hangover.
	for i := range SpeakingHangoverFrames {
		m.Mix(dst, []Input{{Channel: b, Samples: voice}})
		assert.Empty(t, m.Events(), "hangover frame %d", i)
	}
	m.Mix(dst, []Input{{Channel: b, Samples: voice}})
	assert.Equal(t, []Event{{a, false}}, m.Events())
	assert.Equal(t, pcm.MinDBFS, a.Level())

	// A muted and a deafened sender still report speaking.
	b.SetMuted(true)
	m.SetDeafened(true)
	m.Mix(dst, []Input{{Channel: a, Samples: voice}, {Channel: b, Samples: voice}})
	assert.Equal(t, []Event{{a, true}}, m.Events())
	assert.Equal(t, constant(0), dst)

	m.Remove(a)
	m.Remove(a)
	assert.Equal(t, 1, m.Len())
}

// eight registers eight senders with sines of peak step, 2*step, ... 8*step.
func eight(m *Mixer, step float64) []Input {
	var inputs []Input
	for i := range 8 {
		inputs = append(inputs, Input{Channel: m.Add(uint64(i)), Samples: sine(step * float64(i+1))})
	}
	return inputs
}

// TestSpeakingHangoverInTenMillisecondFrames: mixing 10 ms frames, a sender stays speaking for
// twice as many frames after it goes quiet, the same 160 ms.
func TestSpeakingHangoverInTenMillisecondFrames(t *testing.T) {
	m := New()
	a := m.Add(1)
	m.SetFrameDuration(10)
	b := m.Add(2) // added after the change: the same hangover
	dst := make([]int16, pcm.FrameSamples/2)
	voice := sine(3000)[:len(dst)]
	m.Mix(dst, []Input{{Channel: a, Samples: voice}, {Channel: b, Samples: voice}})
	require.Len(t, m.Events(), 2)
	for i := range 2 * SpeakingHangoverFrames {
		m.Mix(dst, nil)
		require.Empty(t, m.Events(), "hangover frame %d", i)
	}
	m.Mix(dst, nil)
	assert.Len(t, m.Events(), 2, "both stop after 160 ms")
}

func TestMixDoesNotAllocate(t *testing.T) {
	m := New()
	inputs := eight(m, 1000)
	dst := make([]int16, pcm.FrameSamples)
	silent := make([]int16, pcm.FrameSamples)
	n := 0
	inputs[3].Samples = silent
	allocs := testing.AllocsPerRun(500, func() {
		n++
		if n%20 < 10 {
			inputs[3].Samples = silent
		} else {
			inputs[3].Samples = inputs[4].Samples
		}
		m.Mix(dst, inputs)
		_ = m.Events()
	})
	assert.Zero(t, allocs)
}

func TestConcurrentSettings(t *testing.T) {
	m := New()
	c := m.Add(1)
	dst := make([]int16, pcm.FrameSamples)
	in := sine(10000)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 2000 {
			c.SetVolume(i % 201)
			c.SetMuted(i%3 == 0)
			m.SetVolume(200 - i%201)
			m.SetDeafened(i%7 == 0)
			_ = c.Speaking()
		}
	})
	for range 2000 {
		m.Mix(dst, []Input{{Channel: c, Samples: in}})
	}
	wg.Wait()
}

// BenchmarkMixEight mixes eight senders whose sum peaks just above full scale.
func BenchmarkMixEight(b *testing.B) { benchEight(b, 1000) }

// BenchmarkMixEightOverload mixes eight senders whose sum is three times full scale, so that
// most samples go through the limiter's curve.
func BenchmarkMixEightOverload(b *testing.B) { benchEight(b, 3000) }

func benchEight(b *testing.B, step float64) {
	m := New()
	inputs := eight(m, step)
	dst := make([]int16, pcm.FrameSamples)
	for b.Loop() {
		m.Mix(dst, inputs)
	}
}

// Positional voice, with a tone per speaker measured per ear in one stereo mix: a speaker on the
// listener's right is at least 10 dB louder in the right ear; one at the conversational distance
// keeps its unattenuated level; one at half the audible distance follows the chosen model within
// 1 dB (each model in turn); one beyond the audible distance is not rendered; a non-positional
// participant (a team radio) is centred and unattenuated.
func TestPositionalRenderingPerEar(t *testing.T) {
	const peak = 8000
	freqs := map[string]float64{"right": 300, "near": 500, "half": 700, "radio": 900}
	unattenuated := 20 * math.Log10(peak/32768.0)
	for _, model := range []spatial.FadeModel{spatial.FadeInverse, spatial.FadeLinear, spatial.FadeExponential} {
		t.Run(model.String(), func(t *testing.T) {
			props := spatial.Properties{AudibleDistance: 40, ConversationalDistance: 2, FadeIntensity: 1, Model: model}
			listener := spatial.Listener{Position: spatial.Vec3{X: 10, Y: 1, Z: -4}, Forward: spatial.Vec3{Z: -1}, Up: spatial.Vec3{Y: 1}}
			at := func(x, z float32) spatial.Vec3 {
				return spatial.Vec3{X: listener.Position.X + x, Y: listener.Position.Y, Z: listener.Position.Z + z}
			}
			m := New()
			var inputs []Input
			place := func(name string, pos spatial.Vec3) bool {
				in := Input{Channel: m.Add(uint64(len(inputs) + 1)), Samples: testsignal.Tone(freqs[name], peak, 0, pcm.FrameSamples), Positional: true}
				var ok bool
				in.Left, in.Right, ok = spatial.Gains(listener, props, pos)
				if ok {
					inputs = append(inputs, in)
				}
				return ok
			}
			require.True(t, place("right", at(1.5, -0.5)))
			require.True(t, place("near", at(0, -props.ConversationalDistance)))
			require.True(t, place("half", at(0, props.AudibleDistance/2)))
			assert.False(t, place("far", at(props.AudibleDistance, 1)), "beyond the audible distance: not rendered")
			inputs = append(inputs, Input{Channel: m.Add(99), Samples: testsignal.Tone(freqs["radio"], peak, 0, pcm.FrameSamples)})

			dst := make([]int16, 2*pcm.FrameSamples)
			m.MixStereo(dst, inputs)

			l, r := testsignal.ToneDB(dst, 0, 2, freqs["right"]), testsignal.ToneDB(dst, 1, 2, freqs["right"])
			assert.GreaterOrEqual(t, r-l, 10.0, "on the right: right %.1f dB, left %.1f dB", r, l)
			for ch := range 2 {
				assert.InDelta(t, unattenuated, testsignal.ToneDB(dst, ch, 2, freqs["near"]), 1, "conversational distance, ear %d", ch)
				assert.InDelta(t, unattenuated, testsignal.ToneDB(dst, ch, 2, freqs["radio"]), 1, "non-positional, ear %d", ch)
			}
			want, _ := props.Attenuation(float64(props.AudibleDistance / 2))
			for ch := range 2 {
				assert.InDelta(t, unattenuated+20*math.Log10(want), testsignal.ToneDB(dst, ch, 2, freqs["half"]), 1,
					"half the audible distance, %s model, ear %d", model, ch)
			}
			assert.InDelta(t, testsignal.ToneDB(dst, 0, 2, freqs["radio"]), testsignal.ToneDB(dst, 1, 2, freqs["radio"]), 0.1, "the radio is centred")
		})
	}
}
