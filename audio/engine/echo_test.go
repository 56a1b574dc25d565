package engine

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/codec"
	"sdkpp/audio/internal/speech"
	"sdkpp/audio/pcm"
	"sdkpp/core/voice"
)

// farPackets encodes the named speech fixtures, one after the other, into a far end's packets,
// one per frame.
func farPackets(t *testing.T, names ...string) []voice.Packet {
	var far []int16
	for _, name := range names {
		far = append(far, speech.MustLoad(name)...)
	}
	enc, err := codec.NewEncoder()
	require.NoError(t, err)
	var pkts []voice.Packet
	buf := make([]byte, codec.MaxPacketBytes)
	for i := 0; i+pcm.FrameSamples <= len(far); i += pcm.FrameSamples {
		n, err := enc.Encode(far[i:i+pcm.FrameSamples], buf)
		require.NoError(t, err)
		pkts = append(pkts, voice.Packet{Seq: uint16(len(pkts)), Timestamp: uint32(i), Payload: append([]byte(nil), buf[:n]...)})
	}
	return pkts
}

// The echo canceller keeps cancelling across speaker underruns: the engine plays a far end's
// speech on in-memory devices whose microphone hears the speaker 30 ms later, and the speaker
// takes audio faster than the engine refills it, until it lacks some, now and then. The silence it
// plays delays what comes after; the canceller's reference follows at once.
func TestEchoCancellationAcrossUnderruns(t *testing.T) {
	pkts := farPackets(t, speech.Names...)
	const echoPeriods = 3
	periods := 2 * len(pkts)
	underrunAt := map[int]bool{periods * 4 / 10: true, periods * 6 / 10: true, periods * 8 / 10: true}
	echo := func(cancel bool) (residual float64, underruns uint64) {
		var mu sync.Mutex
		var energy, count float64
		frames := 0
		devs := NewMemoryDevices()
		clock := &fakeClock{}
		e, err := New(voice.EngineConfig{Captured: func(s []int16) {
			mu.Lock()
			defer mu.Unlock()
			if frames++; frames > 250 { // 5 s to converge
				for _, v := range s {
					energy += float64(v) * float64(v)
				}
				count += float64(len(s))
			}
		}}, Options{Devices: devs, Now: clock.now})
		require.NoError(t, err)
		e.SetNoiseSuppression(false)
		e.SetAutoGain(false)
		e.SetEchoCancellation(cancel)
		require.NoError(t, e.Start())
		s := devs.Stream()
		// The speaker starts once the engine has written its first period: an underrun at the
		// start would double the calm spell, and the lead it leaves would absorb an underrun
		// the test makes.
		require.Eventually(t, func() bool { return s.Playback().Len() >= pcm.PeriodSamples }, 5*time.Second,
			50*time.Microsecond, "the engine writes the first period")
		played := make([][]int16, 0, periods)
		lacking, before := false, uint64(0)
		in := make([]int16, pcm.PeriodSamples)
		for k := range periods {
			clock.advance(10 * time.Millisecond)
			if k%2 == 0 {
				e.ReceiveAt(7, pkts[k/2], clock.now())
			}
			clear(in)
			if j := k - echoPeriods; j >= 0 {
				for i, v := range played[j] {
					in[i] = v / 2
				}
			}
			out := make([]int16, pcm.PeriodSamples)
			require.True(t, s.Period(in, out))
			played = append(played, out)
			if underrunAt[k] {
				lacking, before = true, s.Stats().Playback.Underruns
			}
			if lacking && s.Stats().Playback.Underruns == before {
				// The speaker comes again at once, until it lacks audio: after an underrun
				// the engine keeps a period of lead, which the next such spell drains first.
				continue
			}
			lacking = false
			require.Eventually(t, func() bool { return s.Playback().Len() >= pcm.PeriodSamples }, 5*time.Second,
				50*time.Microsecond, "period %d: the engine refills the speaker", k)
		}
		underruns = s.Stats().Playback.Underruns
		require.NoError(t, e.Close())
		mu.Lock()
		defer mu.Unlock()
		require.Positive(t, count)
		return 10 * math.Log10(energy/count/(32768*32768)+1e-12), underruns
	}
	off, _ := echo(false)
	on, underruns := echo(true)
	t.Logf("echo reaching the encoder: %.1f dBFS without cancellation, %.1f dBFS with (%.1f dB less), across %d speaker underruns",
		off, on, off-on, underruns)
	assert.GreaterOrEqual(t, underruns, uint64(len(underrunAt)), "the speaker lacked audio where the test made it")
	assert.Greater(t, off, -40.0, "the echo is there without cancellation")
	assert.GreaterOrEqual(t, off-on, 15.0)
}
