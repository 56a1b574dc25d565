package engine

import (
	"encoding/hex"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/codec"
	"sdkpp/audio/device"
	"sdkpp/audio/internal/pulsetest"
	"sdkpp/audio/internal/speech"
	"sdkpp/audio/netsim"
	"sdkpp/audio/pcm"
	"sdkpp/audio/quality"
	"sdkpp/audio/ring"
	"sdkpp/core/voice"
)

// lostPeriods is how many more periods a stream may capture than it plays before a sound-server
// test counts the sound server as having stopped calling the speaker's stream. On a virtual
// machine it now and then called it up to a seventh less often than the microphone's, for a
// minute at a time (1312 playback periods to 1535 captured): each period it skips moves the
// echo by a period and leaves a gap in what it plays. A measurement that falls short while that
// happened is taken again, twice at most; one that falls short while the stream played on fails.
const lostPeriods = 5

// keptPlaying reports whether a stream's speaker side kept up with its microphone side.
func keptPlaying(st device.Stats) bool { return st.PlaybackPeriods+lostPeriods >= st.CapturePeriods }

// playLatency is how much of a reference recording pacat keeps buffered in the sound server.
const playLatency = 300 * time.Millisecond

// pulseID is the device ID of a PulseAudio sink or source (miniaudio's ID is its name).
func pulseID(name string) string { return hex.EncodeToString([]byte(name)) }

func pulseContext(t *testing.T) *device.Context {
	c, err := device.NewContext(device.Options{Backend: device.BackendPulseAudio, PollInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c
}

// captureThroughSink plays speech into the sink "vsink" and lets an engine capture it from the
// sink's monitor, with its input processing off and the gate open, and returns the packets the
// engine sent and the frames it encoded (from the captured hook), in order, and the engine's
// device stats; low runs the engine in the low-latency mode (10 ms frames). The speech is played by pacat with a deep buffer (pulsetest.Server.Play): played
// through a low-latency stream of this process it lost periods now and then, when the process
// was not scheduled in time, and the gaps scored as the engine's distortion.
func captureThroughSink(t *testing.T, srv *pulsetest.Server, c *device.Context, played []int16, expectedLoss int, low bool) ([]voice.Packet, [][]int16, device.Stats) {
	var rec recorder
	var frames struct {
		sync.Mutex
		list [][]int16
	}
	e, err := New(voice.EngineConfig{OnPacket: rec.onPacket, InputDevice: pulseID("vsink.monitor"), OutputDevice: pulseID("quiet"),
		Captured: func(s []int16) {
			frames.Lock()
			frames.list = append(frames.list, append([]int16(nil), s...)) // a test's hook may allocate
			frames.Unlock()
		}},
		Options{Devices: c})
	require.NoError(t, err)
	defer func() { assert.NoError(t, e.Close()) }()
	e.SetEchoCancellation(false)
	e.SetNoiseSuppression(false)
	e.SetAutoGain(false)
	e.SetExpectedLoss(expectedLoss)
	e.SetLowLatency(low)
	e.SetMode(voice.ModePushToTalk)
	e.SetPTTActive(true)

	// A second more than the speech: pacat's start and its buffer delay the speech by up to
	// half of that.
	total := len(played) + pcm.SampleRate
	require.NoError(t, e.Start())
	// Start the speech once the engine runs, so that its capture holds all of it.
	deadline := time.Now().Add(time.Minute)
	sentSoFar := func() int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.pkts)
	}
	for sentSoFar() == 0 {
		require.True(t, time.Now().Before(deadline), "the engine did not start: %+v", e.Stats())
		time.Sleep(5 * time.Millisecond) // waiting for real-time audio, not proving an absence
	}
	rec.take()
	frames.Lock()
	frames.list = nil // from here on, each captured frame is the packet of the same index
	frames.Unlock()
	waitPlayed := srv.Play(t, "vsink", played, playLatency)
	want := total / modeFrame(low)
	for {
		n := sentSoFar()
		if n >= want {
			break
		}
		require.True(t, time.Now().Before(deadline), "the engine stalled after %d frames: %+v", n, e.Stats())
		time.Sleep(50 * time.Millisecond) // waiting for real-time audio, not proving an absence
	}
	st := e.Stats()
	require.NoError(t, e.Close())
	waitPlayed()
	t.Logf("capture device stats: %+v", st)
	pkts := rec.take()
	frames.Lock()
	defer frames.Unlock()
	return pkts, frames.list[:min(len(pkts), len(frames.list))], st
}

// recordingFidelity compares what an engine recorded (frames, in order) with what was played into
// the sink: the log-spectral distance of the two, and the offset in ms into the recording of the
// first sample that differs after aligning them (-1 when none does). Through a null sink at full
// volume a healthy sound server hands the engine a bit-exact copy: 0 dB and -1.
func recordingFidelity(played []int16, frames [][]int16) (lsd float64, firstDiffMS int) {
	var rec []int16
	for _, f := range frames {
		rec = append(rec, f...)
	}
	lag := quality.Align(played, rec)
	firstDiffMS = -1
	for i := max(0, -lag); i < len(played) && i+lag < len(rec); i++ {
		if played[i] != rec[i+lag] {
			firstDiffMS = (i + lag) * 1000 / pcm.SampleRate
			break
		}
	}
	return quality.LogSpectralDistance(played, rec, pcm.SampleRate), firstDiffMS
}

// encodeFrames encodes frames as the engine does, for the given expected loss (0: no FEC).
func encodeFrames(t *testing.T, frames [][]int16, expectedLoss int) []voice.Packet {
	enc, err := codec.NewEncoder()
	require.NoError(t, err)
	require.NoError(t, enc.SetExpectedLoss(expectedLoss))
	buf := make([]byte, codec.MaxPacketBytes)
	pkts := make([]voice.Packet, len(frames))
	for i, f := range frames {
		n, err := enc.Encode(f, buf)
		require.NoError(t, err)
		pkts[i] = voice.Packet{Seq: uint16(i), Timestamp: uint32(i * pcm.FrameSamples), Payload: append([]byte(nil), buf[:n]...)}
	}
	return pkts
}

// playThrough delivers packets through a simulated network with the given share of lost packets
// to an engine stepped on a simulated clock, and returns what it played. The packets are sent one
// frame apart, their frame's (from the first packet's TOC); the engine runs in the low-latency
// mode when they are 10 ms frames.
func playThrough(t *testing.T, pkts []voice.Packet, lossPercent float64, seed uint64) []int16 {
	clock := &fakeClock{}
	e, err := New(voice.EngineConfig{}, Options{Now: clock.now})
	require.NoError(t, err)
	defer e.Close()
	fs, err := codec.PacketSamples(pkts[0].Payload)
	require.NoError(t, err)
	e.SetLowLatency(fs < pcm.FrameSamples)
	frameDur := time.Duration(fs) * time.Second / pcm.SampleRate
	e.SetEchoCancellation(false)
	e.SetNoiseSuppression(false)
	e.SetAutoGain(false)
	lost := netsim.LossPattern(len(pkts), lossPercent, seed)
	sim := netsim.New(netsim.Config{Seed: seed, Delay: 10 * time.Millisecond, Jitter: 20 * time.Millisecond})
	type arrival struct {
		at time.Duration
		i  int
	}
	var arrivals []arrival
	for i := range pkts {
		if lost[i] {
			continue
		}
		for _, at := range sim.Transmit(nil, time.Duration(i)*frameDur) {
			arrivals = append(arrivals, arrival{at, i})
		}
	}
	for i := 1; i < len(arrivals); i++ {
		for j := i; j > 0 && arrivals[j].at < arrivals[j-1].at; j-- {
			arrivals[j], arrivals[j-1] = arrivals[j-1], arrivals[j]
		}
	}
	var played []int16
	silence := make([]int16, fs)
	next := 0
	for tick := 0; tick < len(pkts)+25; tick++ {
		now := time.Duration(tick) * frameDur
		clock.t.Store(int64(now))
		for next < len(arrivals) && arrivals[next].at <= now {
			e.ReceiveAt(1, pkts[arrivals[next].i], arrivals[next].at)
			next++
		}
		clear(silence)
		played = append(played, e.step(silence)...)
	}
	return played
}

// TestPulseSpeechQuality plays a speech fixture into a PulseAudio null sink, captures it from the
// sink's monitor in one engine, and decodes and mixes its packets in a second engine after a
// simulated network with loss and jitter: the log-spectral distance to the fixture stays within
// the bounds of issue 13. FEC is compared with concealment alone on the same captured audio,
// encoded both ways, so that the difference between two real-time captures does not blur it.
//
// The bounds hold the engine, so they are held on a faithful recording. Through a healthy null
// sink the engine records a bit-exact copy of the fixture (recordingFidelity); now and then, on a
// busy virtual machine, the sound server handed it something else: played by a low-latency stream
// of this process, the speech lost periods whenever the process was not scheduled in time (one
// recording measured 14 dB in every condition, another 10.4 dB and one passed the bounds but not
// FEC's). pacat now plays it with a deep buffer. A recording that is still not a faithful copy
// although the engine's own capture ring lost nothing is made again, twice at most, and the log
// tells where it first differs; the bounds are held on the last one made.
func TestPulseSpeechQuality(t *testing.T) {
	srv := pulsetest.Start(t, "vsink", "quiet")
	c := pulseContext(t)
	for _, mode := range []struct {
		name string
		low  bool
	}{{"default", false}, {"low-latency", true}} {
		t.Run(mode.name, func(t *testing.T) { pulseSpeechQuality(t, srv, c, mode.low) })
	}
}

// pulseSpeechQuality is TestPulseSpeechQuality in one mode. The low-latency mode sends no FEC
// (Opus's restricted low-delay mode has none): its losses are concealed, within the same bounds.
func pulseSpeechQuality(t *testing.T, srv *pulsetest.Server, c *device.Context, low bool) {
	ref := speech.MustLoad(speech.Alice)

	lsd := func(pkts []voice.Packet, loss float64, seeds uint64) float64 {
		var all []float64
		for seed := range seeds {
			all = append(all, quality.LogSpectralDistance(ref, playThrough(t, pkts, loss, seed+1), pcm.SampleRate))
		}
		return median(all)
	}
	var sent []voice.Packet
	var frames [][]int16
	var clean float64
	for attempt := 1; ; attempt++ {
		var st device.Stats
		sent, frames, st = captureThroughSink(t, srv, c, ref, 20, low)
		require.NotEmpty(t, frames)
		clean = lsd(sent, 0, 3)
		recLSD, firstDiff := recordingFidelity(ref, frames)
		t.Logf("attempt %d: the recording is %.2f dB from the fixture (first differing sample at %d ms; -1: none); clean %.2f dB",
			attempt, recLSD, firstDiff, clean)
		engineLost := st.Capture != (ring.Stats{})
		if firstDiff < 0 || engineLost || attempt == 3 {
			break
		}
		t.Logf("attempt %d: the sound server did not deliver the fixture intact, and the engine's capture ring lost nothing; recording again", attempt)
	}
	loss10 := lsd(sent, 10, 3)
	loss20 := lsd(sent, 20, 3)
	t.Logf("LSD through the sound server: clean %.2f dB, 10%% loss %.2f dB, 20%% loss %.2f dB", clean, loss10, loss20)
	assert.LessOrEqual(t, clean, 7.5)
	assert.LessOrEqual(t, loss10, 9.5)
	assert.LessOrEqual(t, loss20, 11.0)
	if low {
		return
	}
	// FEC restores a lost frame's waveform, which segmental SNR sees better than the spectra do.
	snr := func(pkts []voice.Packet, loss float64, seeds uint64) (lsds, snrs float64) {
		var l, n []float64
		for seed := range seeds {
			got := playThrough(t, pkts, loss, seed+1)
			l = append(l, quality.LogSpectralDistance(ref, got, pcm.SampleRate))
			n = append(n, quality.SegmentalSNR(ref, got, pcm.SampleRate))
		}
		return median(l), median(n)
	}
	fecLSD, fecSNR := snr(encodeFrames(t, frames, 20), 20, 7)
	concealLSD, concealSNR := snr(encodeFrames(t, frames, 0), 20, 7)
	t.Logf("the same audio at 20%% loss: with FEC %.2f dB LSD, %.2f dB segmental SNR; concealment alone %.2f dB LSD, %.2f dB segmental SNR",
		fecLSD, fecSNR, concealLSD, concealSNR)
	assert.Greater(t, fecSNR, concealSNR+0.3, "FEC beats concealment alone at 20% loss")
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// TestPulseEchoCancellation plays far-end speech through an engine's playback into the same null
// sink its microphone (the sink's monitor) captures: after the canceller converges, the echo that
// reaches the encoder is at least 15 dB below what it is with cancellation off.
//
// The echo is measured in half seconds after the first three, and the test holds the medians:
// the sound server moves the echo now and then (a buffer resized, a period the microphone found
// no reference for), and for the half second after a move the canceller is converging again.
// Held as one mean over the seven seconds, a single such half second failed a run (10 dB).
//
// Runs in which the sound server skipped a dozen speaker periods in ten seconds fell to 4-11 dB;
// such a measurement is taken again (lostPeriods). Measured here over 30 runs: medians 17-39 dB
// below where the stream played on, most over 35 dB.
//
// A speaker underrun used to take it down to about 10 dB: the engine moved the canceller's
// reference for the silence the speaker played, which the reference queue had already followed
// (TestEchoCancellationAcrossUnderruns). make test-go runs it (and TestPulseSpeechQuality) after
// the rest, alone, as other test packages beside it take the processing thread's deadlines.
func TestPulseEchoCancellation(t *testing.T) {
	pulsetest.Start(t)
	c := pulseContext(t)
	pkts := farPackets(t, speech.Bob, speech.Carol)

	// echo returns the level (dBFS) of what reaches the encoder in each half second after the
	// canceller's first three seconds, and whether the sound server kept its playback going
	// (keptPlaying).
	echo := func(cancel bool) (levels []float64, kept bool) {
		const converge = 150 // frames: 3 s
		const half = 25      // frames: 0.5 s
		var mu sync.Mutex
		var frame int
		var energy []float64 // per half second after converge
		e, err := New(voice.EngineConfig{
			InputDevice: pulseID("vsink.monitor"), OutputDevice: pulseID("vsink"), Logf: t.Logf,
			Captured: func(s []int16) {
				mu.Lock()
				defer mu.Unlock()
				frame++
				if frame <= converge {
					return
				}
				i := (frame - converge - 1) / half
				if i == len(energy) {
					energy = append(energy, 0)
				}
				for _, v := range s {
					energy[i] += float64(v) * float64(v)
				}
			},
		}, Options{Devices: c})
		require.NoError(t, err)
		defer func() { assert.NoError(t, e.Close()) }()
		e.SetNoiseSuppression(false)
		e.SetAutoGain(false)
		e.SetEchoCancellation(cancel)
		require.NoError(t, e.Start())
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for _, p := range pkts {
			<-tick.C // the far end's packets come in real time
			e.Receive(7, p)
		}
		stats, shift := e.Stats(), e.apm.EchoDelayShift()
		require.NoError(t, e.Close())
		t.Logf("cancellation %v: device stats %+v, playback lead %d periods, reference delayed by %d samples, %d periods cleaned without a reference",
			cancel, stats, e.PlaybackLead(), shift, e.apm.StarvedReference())
		mu.Lock()
		defer mu.Unlock()
		for _, en := range energy[:max(len(energy)-1, 0)] { // the last half second is partial
			levels = append(levels, 10*math.Log10(en/(half*pcm.FrameSamples)/(32768*32768)+1e-12))
		}
		require.NotEmpty(t, levels)
		return levels, keptPlaying(stats)
	}
	off, _ := echo(false)
	offMed := median(off)
	assert.Greater(t, offMed, -40.0, "the echo is there without cancellation")
	for attempt := 1; ; attempt++ {
		on, kept := echo(true)
		n := min(len(off), len(on))
		within := 0
		for i := range n {
			if off[i]-on[i] < 15 {
				within++
			}
		}
		onMed := median(on)
		t.Logf("echo reaching the encoder, median of %d half seconds: %.1f dBFS without cancellation, %.1f dBFS with (%.1f dB less); %d of them within 15 dB",
			n, offMed, onMed, offMed-onMed, within)
		t.Logf("each half second, cancellation off: %.0f", off)
		t.Logf("each half second, cancellation on:  %.0f", on)
		if offMed-onMed >= 15 || kept || attempt == 3 {
			assert.GreaterOrEqual(t, offMed-onMed, 15.0, "attempt %d; the sound server kept its playback going: %v", attempt, kept)
			return
		}
		t.Logf("attempt %d: the sound server lost playback periods; measuring again", attempt)
	}
}

// A game lists devices for its settings menu before any call: an engine that was never started
// lists the sound server's devices with a context of its own.
func TestPulseDevicesBeforeStart(t *testing.T) {
	pulsetest.Start(t, "mic-test", "ear-test")
	e, err := New(voice.EngineConfig{}, Options{})
	require.NoError(t, err)
	defer e.Close()
	in, err := e.InputDevices()
	require.NoError(t, err)
	out, err := e.OutputDevices()
	require.NoError(t, err)
	names := func(ds []voice.Device) (n []string) {
		for _, d := range ds {
			n = append(n, d.Name)
		}
		return n
	}
	assert.Contains(t, names(in), "Monitor of mic-test")
	assert.Contains(t, names(out), "ear-test")
	assert.Equal(t, voice.Device{}, e.CurrentInputDevice(), "listing opened no stream")
}
