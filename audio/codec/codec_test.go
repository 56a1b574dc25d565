package codec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/internal/testsignal"
	"sdkpp/audio/pcm"
)

const testFrames = 150 // 3 s

// encodeAll encodes signal frame by frame and returns a copy of every packet.
func encodeAll(t testing.TB, enc *Encoder, signal []int16) [][]byte {
	buf := make([]byte, MaxPacketBytes)
	var pkts [][]byte
	fs := enc.FrameSamples()
	for f := 0; f+fs <= len(signal); f += fs {
		n, err := enc.Encode(signal[f:f+fs], buf)
		require.NoError(t, err)
		pkts = append(pkts, append([]byte(nil), buf[:n]...))
	}
	return pkts
}

// decodeAll decodes pkts, treating the packets whose index is in lost as lost: recovered from
// the next packet's FEC when fec is set, concealed otherwise.
func decodeAll(t testing.TB, pkts [][]byte, lost map[int]bool, fec bool) []int16 {
	dec, err := NewDecoder()
	require.NoError(t, err)
	fs, err := PacketSamples(pkts[0])
	require.NoError(t, err)
	out := make([]int16, len(pkts)*fs)
	for i, p := range pkts {
		frame := out[i*fs : (i+1)*fs]
		switch {
		case !lost[i]:
			n, err := dec.Decode(p, frame)
			require.NoError(t, err)
			require.Equal(t, fs, n)
		case fec && i+1 < len(pkts) && !lost[i+1]:
			require.NoError(t, dec.DecodeFEC(pkts[i+1], frame))
		default:
			require.NoError(t, dec.Conceal(frame))
		}
	}
	return out
}

// aligned returns the parts of want and got that line up after the codec's delay.
func aligned(want, got []int16, delay int) ([]int16, []int16) {
	return want[:len(got)-delay], got[delay:]
}

func TestRoundTripVoicedHasBoundedError(t *testing.T) {
	signal := testsignal.Voiced(1, testFrames*pcm.FrameSamples, 0.5)
	enc, err := NewEncoder()
	require.NoError(t, err)
	pkts := encodeAll(t, enc, signal)
	got := decodeAll(t, pkts, nil, false)

	delay := testsignal.Delay(signal[:pcm.SampleRate], got, 2*pcm.FrameSamples)
	want, got := aligned(signal, got, delay)
	snr := testsignal.SNR(want, got)
	ratio := testsignal.Energy(got) / testsignal.Energy(want)
	bytes := 0
	for _, p := range pkts {
		bytes += len(p)
	}
	t.Logf("delay %d samples, SNR %.1f dB, energy ratio %.2f, %.1f kbit/s", delay, snr, ratio,
		float64(bytes*8)/float64(len(pkts))/20)
	assert.InDelta(t, 312, delay, 10, "Opus's algorithmic delay at 48 kHz is 6.5 ms")
	// A waveform SNR: Opus's parametric coding of the upper harmonics keeps it modest.
	assert.Greater(t, snr, 5.0)
	assert.InDelta(t, 1.0, ratio, 0.3, "the decoded signal keeps its loudness")
}

func TestLowDelayRoundTrip(t *testing.T) {
	signal := testsignal.Voiced(1, testFrames*pcm.FrameSamples, 0.5)
	enc, err := NewLowDelayEncoder()
	require.NoError(t, err)
	require.Equal(t, LowDelayFrameSamples, enc.FrameSamples())
	pkts := encodeAll(t, enc, signal)
	require.Len(t, pkts, 2*testFrames)
	for _, p := range pkts {
		n, err := PacketSamples(p)
		require.NoError(t, err)
		require.Equal(t, LowDelayFrameSamples, n)
		require.GreaterOrEqual(t, int(p[0]>>3), 16, "CELT only")
	}
	got := decodeAll(t, pkts, nil, false)
	delay := testsignal.Delay(signal[:pcm.SampleRate], got, 2*pcm.FrameSamples)
	want, got := aligned(signal, got, delay)
	snr := testsignal.SNR(want, got)
	t.Logf("delay %d samples, SNR %.1f dB", delay, snr)
	assert.InDelta(t, 120, delay, 10, "restricted low delay looks ahead 2.5 ms")
	assert.Greater(t, snr, 5.0)
	assert.InDelta(t, 1.0, testsignal.Energy(got)/testsignal.Energy(want), 0.3)

	// A lost 10 ms frame is concealed 10 ms long.
	lost := decodeAll(t, pkts, map[int]bool{50: true, 51: true}, false)
	assert.Len(t, lost, len(pkts)*LowDelayFrameSamples)
}

func TestPacketSamples(t *testing.T) {
	enc, err := NewEncoder()
	require.NoError(t, err)
	pkt := make([]byte, MaxPacketBytes)
	n, err := enc.Encode(testsignal.Voiced(3, pcm.FrameSamples, 0.5), pkt)
	require.NoError(t, err)
	got, err := PacketSamples(pkt[:n])
	require.NoError(t, err)
	assert.Equal(t, pcm.FrameSamples, got)

	for _, tc := range []struct {
		pkt  []byte
		want int
	}{
		{[]byte{0<<3 | 0}, 480},      // SILK 10 ms
		{[]byte{3<<3 | 0}, 2880},     // SILK 60 ms
		{[]byte{13<<3 | 1}, 1920},    // hybrid 20 ms, two frames
		{[]byte{16<<3 | 0}, 120},     // CELT 2.5 ms
		{[]byte{18<<3 | 2}, 960},     // CELT 10 ms, two frames
		{[]byte{31<<3 | 3, 6}, 5760}, // CELT 20 ms, six frames: 120 ms
		{[]byte{31<<3 | 3, 7}, 0},    // 140 ms: too long
		{[]byte{31<<3 | 3, 0}, 0},    // no frames
		{[]byte{31<<3 | 3}, 0},       // no frame count
		{nil, 0},
	} {
		got, err := PacketSamples(tc.pkt)
		if tc.want == 0 {
			assert.ErrorIs(t, err, ErrBadPacket, "%x", tc.pkt)
			continue
		}
		require.NoError(t, err, "%x", tc.pkt)
		assert.Equal(t, tc.want, got, "%x", tc.pkt)
	}
}

func TestFECRecoversALostFrameBetterThanConcealment(t *testing.T) {
	signal := testsignal.Voiced(2, testFrames*pcm.FrameSamples, 0.5)
	enc, err := NewEncoder()
	require.NoError(t, err)
	require.NoError(t, enc.SetExpectedLoss(20))
	pkts := encodeAll(t, enc, signal)
	clean := decodeAll(t, pkts, nil, false)
	delay := testsignal.Delay(signal[:pcm.SampleRate], clean, 2*pcm.FrameSamples)

	// Every seventh packet is lost, alone; the first few are kept so FEC has warmed up.
	lost := map[int]bool{}
	for i := 10; i < len(pkts)-1; i += 7 {
		lost[i] = true
	}
	fecOut := decodeAll(t, pkts, lost, true)
	plcOut := decodeAll(t, pkts, lost, false)

	// Compare only the lost frames (shifted by the codec delay) against the original.
	// The same frames decoded without loss are the ceiling.
	var want, gotClean, gotFEC, gotPLC []int16
	for i := range lost {
		lo, hi := i*pcm.FrameSamples, (i+1)*pcm.FrameSamples
		want = append(want, signal[lo-delay:hi-delay]...)
		gotClean = append(gotClean, clean[lo:hi]...)
		gotFEC = append(gotFEC, fecOut[lo:hi]...)
		gotPLC = append(gotPLC, plcOut[lo:hi]...)
	}
	snrClean := testsignal.SNR(want, gotClean)
	snrFEC, snrPLC := testsignal.SNR(want, gotFEC), testsignal.SNR(want, gotPLC)
	t.Logf("%d lost frames: SNR without loss %.1f dB, with FEC %.1f dB, with concealment %.1f dB",
		len(lost), snrClean, snrFEC, snrPLC)
	assert.Greater(t, snrFEC, snrPLC+1.5, "FEC beats concealment by at least 1.5 dB")
	assert.Greater(t, snrFEC, snrClean-1.5, "FEC comes within 1.5 dB of no loss")
}

func TestDTXMakesSilentFramesTiny(t *testing.T) {
	speech := testsignal.Voiced(3, 50*pcm.FrameSamples, 0.5)
	silence := make([]int16, 50*pcm.FrameSamples)
	enc, err := NewEncoder()
	require.NoError(t, err)
	speechPkts := encodeAll(t, enc, speech)
	silentPkts := encodeAll(t, enc, silence)

	speechBytes := 0
	for _, p := range speechPkts {
		speechBytes += len(p)
	}
	// After a short hangover, silent frames are DTX frames of at most two bytes, but for one
	// comfort-noise update every 400 ms (20 frames).
	tiny, updates := 0, 0
	for _, p := range silentPkts[10:] {
		switch {
		case len(p) <= 2:
			tiny++
		case len(p) <= 30:
			updates++
		}
	}
	t.Logf("speech %.1f bytes/frame; silent frame sizes %v", float64(speechBytes)/float64(len(speechPkts)),
		packetSizes(silentPkts))
	assert.Greater(t, speechBytes/len(speechPkts), 40)
	assert.Equal(t, len(silentPkts)-10, tiny+updates, "every silent frame after the hangover is tiny")
	assert.LessOrEqual(t, updates, (len(silentPkts)-10)/20+1, "at most one update per 400 ms")

	// The decoder takes DTX frames like any other packet.
	dec, err := NewDecoder()
	require.NoError(t, err)
	out := make([]int16, pcm.FrameSamples)
	for _, p := range silentPkts {
		_, err := dec.Decode(p, out)
		require.NoError(t, err)
	}
	assert.Less(t, pcm.LevelDBFS(out), -60.0)
}

func packetSizes(pkts [][]byte) []int {
	s := make([]int, len(pkts))
	for i, p := range pkts {
		s[i] = len(p)
	}
	return s
}

func TestNoAllocationPerFrame(t *testing.T) {
	signal := testsignal.Voiced(4, 10*pcm.FrameSamples, 0.5)
	enc, err := NewEncoder()
	require.NoError(t, err)
	dec, err := NewDecoder()
	require.NoError(t, err)
	pkt := make([]byte, MaxPacketBytes)
	out := make([]int16, pcm.FrameSamples)
	f := 0
	allocs := testing.AllocsPerRun(200, func() {
		frame := signal[f*pcm.FrameSamples : (f+1)*pcm.FrameSamples]
		f = (f + 1) % 10
		n, err := enc.Encode(frame, pkt)
		if err != nil {
			panic(err)
		}
		if err := dec.DecodeFEC(pkt[:n], out); err != nil {
			panic(err)
		}
		if _, err := dec.Decode(pkt[:n], out); err != nil {
			panic(err)
		}
		if err := dec.Conceal(out); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestRejectsBadArguments(t *testing.T) {
	enc, err := NewEncoder()
	require.NoError(t, err)
	dec, err := NewDecoder()
	require.NoError(t, err)
	frame := make([]int16, pcm.FrameSamples)
	pkt := make([]byte, MaxPacketBytes)

	assert.Error(t, enc.SetBitrate(MinBitrate-1))
	assert.Error(t, enc.SetBitrate(MaxBitrate+1))
	assert.NoError(t, enc.SetBitrate(MinBitrate))
	assert.NoError(t, enc.SetExpectedLoss(250), "clamped to 100")

	_, err = enc.Encode(frame[:100], pkt)
	assert.ErrorIs(t, err, ErrFrameSize)
	_, err = enc.Encode(frame, nil)
	assert.Error(t, err)
	_, err = dec.Decode(nil, frame)
	assert.Error(t, err)
	_, err = dec.Decode(pkt[:3], frame[:10])
	assert.ErrorIs(t, err, ErrFrameSize)
	assert.ErrorIs(t, dec.Conceal(frame[:10]), ErrFrameSize)
	assert.ErrorIs(t, dec.DecodeFEC(pkt[:3], frame[:130]), ErrFrameSize)
	assert.Error(t, dec.DecodeFEC(nil, frame))
	low, err := NewLowDelayEncoder()
	require.NoError(t, err)
	_, err = low.Encode(frame, pkt)
	assert.ErrorIs(t, err, ErrFrameSize, "a 20 ms frame for a 10 ms encoder")
}

func BenchmarkEncode(b *testing.B) {
	signal := testsignal.Voiced(5, 50*pcm.FrameSamples, 0.5)
	enc, err := NewEncoder()
	require.NoError(b, err)
	pkt := make([]byte, MaxPacketBytes)
	b.ReportAllocs()
	testsignal.ReportCPU(b)
	for i := 0; b.Loop(); i++ {
		f := i % 50
		if _, err := enc.Encode(signal[f*pcm.FrameSamples:(f+1)*pcm.FrameSamples], pkt); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeBench returns a second of encoded speech, a fresh Decoder and an output frame.
func decodeBench(b *testing.B, seed uint64) ([][]byte, *Decoder, []int16) {
	enc, err := NewEncoder()
	require.NoError(b, err)
	pkts := encodeAll(b, enc, testsignal.Voiced(seed, 50*pcm.FrameSamples, 0.5))
	dec, err := NewDecoder()
	require.NoError(b, err)
	b.ReportAllocs()
	testsignal.ReportCPU(b)
	return pkts, dec, make([]int16, pcm.FrameSamples)
}

func BenchmarkDecode(b *testing.B) {
	pkts, dec, out := decodeBench(b, 6)
	for i := 0; b.Loop(); i++ {
		if _, err := dec.Decode(pkts[i%len(pkts)], out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFEC(b *testing.B) {
	pkts, dec, out := decodeBench(b, 7)
	for i := 0; b.Loop(); i++ {
		if err := dec.DecodeFEC(pkts[i%len(pkts)], out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeThenConceal(b *testing.B) {
	pkts, dec, out := decodeBench(b, 8)
	for i := 0; b.Loop(); i++ {
		// Conceal after each decoded frame: one isolated loss, the common case.
		if _, err := dec.Decode(pkts[i%len(pkts)], out); err != nil {
			b.Fatal(err)
		}
		if err := dec.Conceal(out); err != nil {
			b.Fatal(err)
		}
	}
}
