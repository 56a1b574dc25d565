package engine

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/codec"
	"sdkpp/audio/pcm"
)

// toneOnset runs a tone that starts after half a second through a pipe stepped in the given mode
// at the mode's frame, each packet delivered at the step that made it, and returns how many
// samples after the tone's first sample b's output first grows loud, and the packets' frame.
func toneOnset(t *testing.T, low bool) (delay, packetSamples int) {
	p := newPipe(t, Options{})
	p.a.SetNoiseSuppression(false)
	p.a.SetAutoGain(false)
	p.a.SetLowLatency(low)
	p.b.SetLowLatency(low)
	fs := modeFrame(low)
	frameDur := time.Duration(fs) * time.Second / pcm.SampleRate
	const onset = pcm.SampleRate / 2
	frame := make([]int16, fs)
	silence := make([]int16, fs)
	var out []int16
	for i := range pcm.SampleRate / fs {
		for j := range frame {
			frame[j] = 0
			if n := i*fs + j; n >= onset {
				frame[j] = int16(12000 * math.Sin(2*math.Pi*440*float64(n-onset)/pcm.SampleRate))
			}
		}
		p.clock.advance(frameDur)
		sent := len(p.pkts)
		p.a.capture(frame)
		for _, pk := range p.pkts[sent:] {
			p.b.ReceiveAt(1, pk, p.clock.now())
		}
		copy(frame, silence)
		out = append(out, p.b.step(frame)...)
	}
	require.NotEmpty(t, p.pkts)
	packetSamples, err := codec.PacketSamples(p.pkts[0].Payload)
	require.NoError(t, err)
	heard := slices.IndexFunc(out, func(v int16) bool { return v > 3000 || v < -3000 })
	require.GreaterOrEqual(t, heard, onset, "the tone is heard")
	return heard - onset, packetSamples
}

// TestLowLatencyMode: in the low-latency mode the engine sends 10 ms frames in Opus's restricted
// low-delay mode and mixes 10 ms at a time, and a tone crosses two engines stepped frame by frame
// 4 ms sooner (the look-ahead it saves; stepping whole frames hides the frame's own 10 ms, which
// the device bench measures).
func TestLowLatencyMode(t *testing.T) {
	def, defPacket := toneOnset(t, false)
	low, lowPacket := toneOnset(t, true)
	ms := func(n int) float64 { return float64(n) * 1000 / pcm.SampleRate }
	t.Logf("a tone crosses two engines in %.1f ms in the default mode, %.1f ms in the low-latency mode", ms(def), ms(low))
	assert.Equal(t, pcm.FrameSamples, defPacket)
	assert.Equal(t, codec.LowDelayFrameSamples, lowPacket)
	assert.LessOrEqual(t, ms(low), ms(def)-3.5)
	assert.LessOrEqual(t, ms(low), 3.0, "2.5 ms of look-ahead and the tone's first rise")
}

// TestSwitchingModeMidSpurt: a sender that switches to the low-latency mode and back in the middle
// of a talk spurt is heard without a gap by a receiver in either mode, which follows its frame
// size from the packets alone.
func TestSwitchingModeMidSpurt(t *testing.T) {
	for _, receiverLow := range []bool{false, true} {
		p := newPipe(t, Options{})
		p.b.SetLowLatency(receiverLow)
		tick := 10 * time.Millisecond
		var inFrame []int16 // a's frame being captured, 10 ms at a time
		heard := []bool{}
		sizes := map[int]int{}
		var bFrame []int16
		for k := range 300 { // 3 s in 10 ms ticks
			switch k {
			case 100:
				p.a.SetLowLatency(true)
			case 200:
				p.a.SetLowLatency(false)
			}
			p.clock.advance(tick)
			// a captures a tone 10 ms at a time; a whole frame of its mode goes out.
			for j := range pcm.PeriodSamples {
				inFrame = append(inFrame, int16(8000*math.Sin(2*math.Pi*300*float64(k*pcm.PeriodSamples+j)/pcm.SampleRate)))
			}
			want := modeFrame(p.a.lowLatency.Load())
			if len(inFrame) >= want {
				sent := len(p.pkts)
				p.a.capture(inFrame[:want])
				inFrame = inFrame[want:]
				for _, pk := range p.pkts[sent:] {
					n, err := codec.PacketSamples(pk.Payload)
					require.NoError(t, err)
					sizes[n]++
					p.b.ReceiveAt(1, pk, p.clock.now())
				}
			}
			// b plays a frame of its mode when its last one is over.
			if len(bFrame) == 0 {
				bFrame = make([]int16, modeFrame(receiverLow))
				p.heardAt = false
				p.b.step(bFrame)
				heard = append(heard, p.heardAt)
			}
			bFrame = bFrame[min(len(bFrame), pcm.PeriodSamples):]
		}
		first := slices.Index(heard, true)
		require.GreaterOrEqual(t, first, 0)
		for i := first; i < len(heard)-3; i++ {
			assert.True(t, heard[i], "receiver low-latency %v: tick %d unheard", receiverLow, i)
		}
		st, _ := p.b.SenderStats(1)
		assert.Zero(t, st.Lost, "receiver low-latency %v: %+v", receiverLow, st)
		assert.Greater(t, sizes[pcm.FrameSamples], 50)
		assert.Greater(t, sizes[codec.LowDelayFrameSamples], 50)
	}
}
