package engine

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/device"
	"sdkpp/audio/internal/speech"
	"sdkpp/audio/netsim"
	"sdkpp/audio/pcm"
	"sdkpp/audio/quality"
	"sdkpp/core/voice"
)

// fakeClock is a clock the test advances.
type fakeClock struct{ t atomic.Int64 }

func (c *fakeClock) now() time.Duration      { return time.Duration(c.t.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.t.Add(int64(d)) }

// recorder collects OnPacket's packets.
type recorder struct {
	mu   sync.Mutex
	pkts []voice.Packet
}

func (r *recorder) onPacket(p voice.Packet) {
	r.mu.Lock()
	p.Payload = append([]byte(nil), p.Payload...)
	r.pkts = append(r.pkts, p)
	r.mu.Unlock()
}

func (r *recorder) take() []voice.Packet {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pkts
	r.pkts = nil
	return p
}

// running is an engine on in-memory devices that the test drives period by period.
type running struct {
	t      *testing.T
	e      *Engine
	devs   *MemoryDevices
	clock  *fakeClock
	frames chan int // the capture ring's fill at each step
	speech []int16
	pos    int
	out    []int16
}

// startRunning starts an engine that steps once a frame, also while voice activity hears nothing
// and nothing plays (QuietWakeFrames 1): each frame the test plays is a step it can wait for.
func startRunning(t *testing.T, cfg voice.EngineConfig) *running {
	return startRunningWith(t, cfg, Options{QuietWakeFrames: 1})
}

// startRunningWith is startRunning with opts (their devices, clock and AfterFrame are the test's).
func startRunningWith(t *testing.T, cfg voice.EngineConfig, opts Options) *running {
	r := &running{t: t, devs: NewMemoryDevices(), clock: &fakeClock{}, frames: make(chan int, 1024),
		speech: quality.SpeechLike(10*pcm.SampleRate, pcm.SampleRate, 7), out: make([]int16, pcm.PeriodSamples)}
	opts.Devices, opts.Now = r.devs, r.clock.now
	opts.AfterFrame = func() { r.frames <- r.devs.Stream().Capture().Len() }
	e, err := New(cfg, opts)
	require.NoError(t, err)
	require.NoError(t, e.Start())
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	r.e = e
	return r
}

// frame plays two device periods of speech and waits for the engine's step on them.
func (r *running) frame() {
	s := r.devs.Stream()
	for range 2 {
		if r.pos+pcm.PeriodSamples > len(r.speech) {
			r.pos = 0
		}
		require.True(r.t, s.Period(r.speech[r.pos:r.pos+pcm.PeriodSamples], r.out))
		r.pos += pcm.PeriodSamples
		r.clock.advance(10 * time.Millisecond)
	}
	select {
	case <-r.frames:
	case <-time.After(5 * time.Second):
		r.t.Fatal("the engine did not process a frame")
	}
}

// quietPeriods plays n device periods of silence at the microphone and waits for the engine's
// step after every second one.
func (r *running) quietPeriods(n int) {
	s := r.devs.Stream()
	in := make([]int16, pcm.PeriodSamples)
	for i := range n {
		r.clock.advance(10 * time.Millisecond)
		require.True(r.t, s.Period(in, r.out))
		if i%2 == 1 {
			<-r.frames
		}
	}
}

func (r *running) run(frames int) {
	for range frames {
		r.frame()
	}
}

func TestPushToTalk(t *testing.T) {
	var rec recorder
	r := startRunning(t, voice.EngineConfig{OnPacket: rec.onPacket})
	r.e.SetMode(voice.ModePushToTalk)
	r.e.SetPTTReleaseDelay(100)

	r.run(10)
	assert.Empty(t, rec.take(), "released: nothing leaves")

	r.e.SetPTTActive(true)
	r.frame()
	first := rec.take()
	require.Len(t, first, 1, "pressed: the very next frame leaves")
	assert.False(t, first[0].EndOfSpeech)

	r.run(4)
	held := rec.take()
	require.Len(t, held, 4)
	for i, p := range held {
		assert.Equal(t, first[0].Seq+uint16(i+1), p.Seq, "sequence numbers count packets")
		assert.Equal(t, first[0].Timestamp+uint32((i+1)*pcm.FrameSamples), p.Timestamp)
	}

	r.e.SetPTTActive(false)
	r.run(10)
	tail := rec.take()
	// 100 ms is five frames; honoured to within one frame.
	require.GreaterOrEqual(t, len(tail), 5)
	require.LessOrEqual(t, len(tail), 6)
	for _, p := range tail[:len(tail)-1] {
		assert.False(t, p.EndOfSpeech)
	}
	assert.True(t, tail[len(tail)-1].EndOfSpeech, "the last packet marks the end of speech")

	r.run(10)
	assert.Empty(t, rec.take(), "released after the delay: nothing leaves")

	// The timestamp counted through the silence: 10 frames of release tail and silence later.
	r.e.SetPTTActive(true)
	r.frame()
	again := rec.take()
	require.Len(t, again, 1)
	assert.Equal(t, tail[len(tail)-1].Timestamp+uint32((10-len(tail)+10+1)*pcm.FrameSamples), again[0].Timestamp)
}

func TestSelfMuteEndsTheSpurt(t *testing.T) {
	var rec recorder
	var speaking []bool
	r := startRunning(t, voice.EngineConfig{OnPacket: rec.onPacket, OnSpeaking: func(s uint64, on bool) {
		if s == 0 {
			speaking = append(speaking, on)
		}
	}})
	r.e.SetMode(voice.ModePushToTalk)
	r.e.SetPTTActive(true)
	r.run(3)
	require.Len(t, rec.take(), 3)
	r.e.SetSelfMute(true)
	r.run(5)
	muted := rec.take()
	require.Len(t, muted, 1, "muting sends one end-of-speech marker, then nothing")
	assert.True(t, muted[0].EndOfSpeech)
	r.e.SetSelfMute(false)
	r.run(1)
	assert.Len(t, rec.take(), 1)
	require.NoError(t, r.e.Close())
	assert.Equal(t, []bool{true, false, true}, speaking)
}

func TestDevices(t *testing.T) {
	r := startRunning(t, voice.EngineConfig{})
	in, err := r.e.InputDevices()
	require.NoError(t, err)
	require.Len(t, in, 1)
	assert.Equal(t, device.MemoryCaptureID, in[0].ID)
	out, err := r.e.OutputDevices()
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, device.MemoryCaptureID, r.e.CurrentInputDevice().ID)
	assert.Equal(t, device.MemoryPlaybackID, r.e.CurrentOutputDevice().ID)

	require.NoError(t, r.e.SetInputDevice(device.MemoryCaptureID))
	assert.Equal(t, 2, r.devs.Opened(), "selecting a device reopens the stream")
	r.run(2) // the new stream drives the engine

	err = r.e.SetOutputDevice("nope")
	require.ErrorIs(t, err, device.ErrNoDevice)
	assert.Equal(t, device.MemoryPlaybackID, r.e.CurrentOutputDevice().ID, "a failed selection keeps the previous device")
	r.run(2)
}

// pipe runs two engines step by step without goroutines: a's packets reach b through a simulated
// network. Everything is on one simulated clock.
type pipe struct {
	a, b    *Engine
	clock   *fakeClock
	pkts    []voice.Packet
	heardAt bool // whether b's last step had a frame from sender 1
}

func newPipe(t *testing.T, jcfg Options) *pipe {
	p := &pipe{clock: &fakeClock{}}
	var err error
	p.a, err = New(voice.EngineConfig{OnPacket: func(pk voice.Packet) {
		pk.Payload = append([]byte(nil), pk.Payload...)
		p.pkts = append(p.pkts, pk)
	}}, Options{Now: p.clock.now})
	require.NoError(t, err)
	jcfg.Now = p.clock.now
	p.b, err = New(voice.EngineConfig{Received: func(sender uint64, _ []int16) bool {
		p.heardAt = true
		return false
	}}, jcfg)
	require.NoError(t, err)
	t.Cleanup(func() { p.a.Close(); p.b.Close() })
	p.a.SetMode(voice.ModePushToTalk)
	p.a.SetPTTActive(true)
	p.a.SetEchoCancellation(false)
	p.b.SetEchoCancellation(false)
	return p
}

func TestJitterThroughNetsim(t *testing.T) {
	t.Run("default", func(t *testing.T) { jitterThroughNetsim(t, false) })
	t.Run("low-latency", func(t *testing.T) { jitterThroughNetsim(t, true) })
}

// jitterThroughNetsim is TestJitterThroughNetsim with both engines in the low-latency mode (10 ms
// frames) or not.
func jitterThroughNetsim(t *testing.T, low bool) {
	p := newPipe(t, Options{})
	p.a.SetLowLatency(low)
	p.b.SetLowLatency(low)
	fs := modeFrame(low)
	frameDur := time.Duration(fs) * time.Second / pcm.SampleRate
	speech := quality.SpeechLike(20*pcm.SampleRate, pcm.SampleRate, 3)
	frames := len(speech) / fs
	jittery := frames / 2
	sim := netsim.New(netsim.Config{Seed: 1, Delay: 10 * time.Millisecond, Jitter: 40 * time.Millisecond, Reorder: 0.05})
	calm := netsim.New(netsim.Config{Seed: 2, Delay: 10 * time.Millisecond})

	// Encode everything first, then deliver by arrival time while b plays.
	frame := make([]int16, fs)
	for i := range frames {
		copy(frame, speech[i*fs:])
		p.a.capture(frame)
	}
	require.Len(t, p.pkts, frames)
	type arrival struct {
		at time.Duration
		i  int
	}
	var arrivals []arrival
	for i := range frames {
		send := time.Duration(i+1) * frameDur
		s := sim
		if i >= jittery {
			s = calm
		}
		for _, at := range s.Transmit(nil, send) {
			arrivals = append(arrivals, arrival{at, i})
		}
	}
	// deliver in arrival order
	for i := 1; i < len(arrivals); i++ {
		for j := i; j > 0 && arrivals[j].at < arrivals[j-1].at; j-- {
			arrivals[j], arrivals[j-1] = arrivals[j-1], arrivals[j]
		}
	}
	silence := make([]int16, fs)
	next := 0
	var delays []time.Duration
	var heard []bool
	for tick := 1; tick <= frames+20; tick++ {
		now := time.Duration(tick) * frameDur
		p.clock.t.Store(int64(now))
		for next < len(arrivals) && arrivals[next].at <= now {
			a := arrivals[next]
			p.b.ReceiveAt(1, p.pkts[a.i], a.at)
			next++
		}
		p.heardAt = false
		copy(frame, silence)
		p.b.step(frame)
		heard = append(heard, p.heardAt)
		if st, ok := p.b.SenderStats(1); ok {
			delays = append(delays, st.CurrentDelay)
		} else {
			delays = append(delays, 0)
		}
	}
	// From the first frame heard until the packets run out, every tick plays something: a
	// packet, FEC or concealment.
	first := -1
	for i, h := range heard {
		if h {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0)
	last := frames - 1
	gaps := 0
	for i := first; i < last; i++ {
		if !heard[i] {
			gaps++
		}
	}
	assert.Zero(t, gaps, "no gap in playback that concealment does not fill")
	st, _ := p.b.SenderStats(1)
	t.Logf("stats %+v", st)

	// During the jitter the delay rose; within a few seconds after it stopped it fell back to the
	// calm network's: no minimum, and up to a tick of phase between arrivals and ticks.
	var peak time.Duration
	for _, d := range delays[:jittery] {
		peak = max(peak, d)
	}
	const calmDelay = 30 * time.Millisecond
	assert.GreaterOrEqual(t, peak, 40*time.Millisecond, "the buffer grew under jitter")
	lastHigh := 0
	for i := jittery; i < last; i++ {
		if delays[i] > calmDelay+time.Millisecond {
			lastHigh = i
		}
	}
	fellBack := time.Duration(lastHigh-jittery+1) * frameDur
	t.Logf("peak delay %v under jitter; back to %v %v after the jitter stopped", peak, calmDelay, fellBack)
	assert.LessOrEqual(t, fellBack, 4*time.Second, "the delay falls back within a few seconds")
}

func TestStepAllocatesNothing(t *testing.T) {
	p := newPipe(t, Options{})
	p.a.SetEchoCancellation(true)
	p.b.SetEchoCancellation(true)
	speech := quality.SpeechLike(4*pcm.SampleRate, pcm.SampleRate, 5)
	frame := make([]int16, pcm.FrameSamples)
	frames := len(speech) / pcm.FrameSamples
	// a's packets are recorded by appending: replace that with a hook that allocates nothing.
	var pkt voice.Packet
	buf := make([]byte, 1500)
	p.a.cfg.OnPacket = func(pk voice.Packet) {
		pkt = pk
		pkt.Payload = buf[:copy(buf, pk.Payload)]
	}
	p.a.cfg.Captured = func(s []int16) { s[0] = s[0] / 2 }
	// With the AEC dump on, a step still allocates nothing: it copies into the ring.
	dump, err := startAecDump(filepath.Join(t.TempDir(), "alloc"), t.Logf)
	require.NoError(t, err)
	p.a.dump = dump // a.Close stops it
	i := 0
	tick := func() {
		copy(frame, speech[(i%frames)*pcm.FrameSamples:])
		i++
		p.clock.advance(20 * time.Millisecond)
		p.a.step(frame)
		p.b.ReceiveAt(1, pkt, p.clock.now())
		p.b.ReceiveAt(2, pkt, p.clock.now())
		copy(frame, speech[(i%frames)*pcm.FrameSamples:])
		p.b.step(frame)
	}
	for range 50 {
		tick() // senders appear, buffers settle
	}
	assert.Zero(t, testing.AllocsPerRun(200, tick), "a processing step allocates nothing")
}

// The captured hook runs before voice activity detection: audio a game puts into a silent frame
// is detected and sent, and while self-muted the hook sees silence and nothing it writes leaves.
func TestCapturedHookFeedsVoiceActivity(t *testing.T) {
	p := newPipe(t, Options{})
	p.a.SetMode(voice.ModeVoiceActivity)
	speech := quality.SpeechLike(pcm.SampleRate, pcm.SampleRate, 4)
	var seen []int16
	i := 0
	p.a.cfg.Captured = func(s []int16) {
		seen = append(seen[:0], s...)
		copy(s, speech[(i%50)*pcm.FrameSamples:])
		i++
	}
	silent := make([]int16, pcm.FrameSamples)
	for range 20 {
		p.clock.advance(20 * time.Millisecond)
		p.a.step(silent)
		clear(silent)
	}
	assert.NotEmpty(t, p.pkts, "the hook's audio is detected as voice and sent")

	p.pkts = nil
	p.a.SetSelfMute(true)
	for range 5 {
		p.clock.advance(20 * time.Millisecond)
		p.a.step(silent)
		clear(silent)
	}
	assert.Equal(t, make([]int16, pcm.FrameSamples), seen, "muted, the hook sees silence")
	for _, pk := range p.pkts {
		assert.True(t, pk.EndOfSpeech, "muted, only the end-of-speech marker leaves")
	}
	assert.LessOrEqual(t, len(p.pkts), 1)
}

// The playback ring holds the period the speaker takes next and no more: a speaker that took
// nothing for 200 ms finds one period waiting, not 200 ms of stale output, and from then on each
// period it takes is replaced by exactly one, which is also the echo canceller's reference.
func TestPlaybackDoesNotPileUp(t *testing.T) {
	pkts := farPackets(t, speech.Names[0])
	r := startRunning(t, voice.EngineConfig{})
	s := r.devs.Stream()
	in := make([]int16, pcm.PeriodSamples)
	for range 10 {
		for range 2 {
			require.True(t, s.Period(in, nil))
		}
		<-r.frames
	}
	assert.Equal(t, pcm.PeriodSamples, s.Playback().Len(), "a speaker that took nothing finds one period")
	out := make([]int16, pcm.PeriodSamples)
	for i := range 20 {
		if i%2 == 0 { // a far end talks, so that there is something to play
			r.e.ReceiveAt(7, pkts[i/2], r.clock.now())
		}
		r.clock.advance(10 * time.Millisecond)
		require.True(t, s.Period(in, out))
		// The engine answers the speaker's period with the next one.
		require.Eventually(t, func() bool { return s.Playback().Len() == pcm.PeriodSamples }, 5*time.Second,
			100*time.Microsecond, "period %d: one period waits for the speaker", i)
		assert.Equal(t, uint64(2*(i+3)), r.e.apm.QueuedReference(),
			"reference blocks, two a period: the silent period ahead, the first one written, and one for each period the speaker took")
	}
	assert.Zero(t, s.Stats().Playback.Underruns, "the speaker never ran dry")
	assert.Zero(t, r.e.apm.DroppedReference())
}

// With nothing to play and nothing coming, the engine leaves the speaker idle: it stops writing
// silence every period (the device plays its own), and what the speaker then lacks is not
// counted as lateness (no lead). A packet wakes it: the next period the speaker takes is the
// far end's. While voice activity listens the speaker's device runs on through a conversation's
// pauses, and stops once nothing has played for the hold-off (by the engine's clock); a packet
// restarts it, and the restarted device finds the far end's first period waiting.
func TestIdleSpeaker(t *testing.T) {
	pkts := farPackets(t, speech.Names[0])
	r := startRunning(t, voice.EngineConfig{})
	s := r.devs.Stream()
	in, out := make([]int16, pcm.PeriodSamples), make([]int16, pcm.PeriodSamples)
	// play hands the engine a packet every other period for 20 periods, the first ten of a new
	// sender's talk spurt, and plays each period the speaker takes; its first call checks that
	// the idle speaker's silence raised no lead (later ones would see a lead that a late write on
	// a loaded machine raised in between).
	play := func(sender uint64) {
		t.Helper()
		heard := false
		for i := range 20 {
			if i%2 == 0 {
				p := pkts[i/2]
				p.EndOfSpeech = i == 18 // the spurt ends, as a talker's does
				r.e.ReceiveAt(sender, p, r.clock.now())
			}
			require.Eventually(t, func() bool { return !s.PlaybackPaused() && s.Playback().Len() >= pcm.PeriodSamples },
				5*time.Second, 100*time.Microsecond, "period %d: playing again, the speaker finds a period waiting", i)
			r.clock.advance(10 * time.Millisecond)
			require.True(t, s.Period(in, out))
			heard = heard || pcm.LevelDBFS(out) > -60
			if i%2 == 1 {
				<-r.frames // the microphone's frame, stepped on
			}
		}
		assert.True(t, heard, "the far end is played")
		if sender == 7 {
			assert.LessOrEqual(t, s.Playback().Len(), 2*pcm.PeriodSamples,
				"the idle speaker's silence is not lateness: no lead for it (the start may have left one)")
		}
		// The spurt over, the speaker plays out what is left (the engine writes each period by
		// the wall clock, which is waited for) and goes idle; the hold-off counts from there.
		for i := 0; ; i++ {
			require.Eventually(t, func() bool { return r.e.playIdle.Load() || s.Playback().Len() >= pcm.PeriodSamples },
				5*time.Second, 100*time.Microsecond, "period %d after the spurt: the engine writes or goes idle", i)
			if r.e.playIdle.Load() {
				break
			}
			require.Less(t, i, 50, "the spurt over, the speaker goes idle")
			r.clock.advance(10 * time.Millisecond)
			require.True(t, s.Period(in, out))
			if i%2 == 1 {
				<-r.frames
			}
		}
	}

	r.quietPeriods(20)
	require.Eventually(t, r.e.playIdle.Load, 5*time.Second, 100*time.Microsecond, "the speaker goes idle")
	queued := r.e.apm.QueuedReference()
	r.quietPeriods(10)
	assert.False(t, s.PlaybackPaused(), "within the hold-off the speaker's device runs on")
	assert.Zero(t, s.Playback().Len(), "nothing written while idle")
	assert.Equal(t, queued, r.e.apm.QueuedReference(), "no reference of silence either")
	assert.Positive(t, s.Stats().Playback.UnderrunSamples, "the device played its own silence")
	play(7)

	// A pause of the conversation shorter than the hold-off keeps the device running.
	r.quietPeriods(int(DefaultSpeakerHoldOff/(10*time.Millisecond)) - 20)
	assert.False(t, s.PlaybackPaused(), "a pause shorter than the hold-off")
	play(8)

	// Then silence for longer than the hold-off: the speaker's device stops, and a packet
	// restarts it.
	r.quietPeriods(int(DefaultSpeakerHoldOff/(10*time.Millisecond)) + 10)
	require.Eventually(t, s.PlaybackPaused, 5*time.Second, 100*time.Microsecond, "the hold-off over, the speaker stops")
	before := s.Stats()
	r.quietPeriods(4)
	assert.Equal(t, before.PlaybackPeriods, s.Stats().PlaybackPeriods, "a stopped speaker is called no more")
	play(9)
}

// TestCaptureStopsWhileNothingCanBeSentOrHeard: with push-to-talk released and the speaker idle
// the engine stops the microphone's device, and the speaker's once it played what it held; a
// press starts them again, and so does a packet to play (its echo canceller needs the microphone
// while the speaker plays), which the restarted speaker finds waiting; voice activity never
// stops them.
func TestCaptureStopsWhileNothingCanBeSentOrHeard(t *testing.T) {
	pkts := farPackets(t, speech.Names[0])
	r := startRunning(t, voice.EngineConfig{})
	s := r.devs.Stream()
	paused := func(want bool, msg string) {
		t.Helper()
		require.Eventually(t, func() bool { return s.CapturePaused() == want }, 5*time.Second, 100*time.Microsecond, msg)
	}
	r.quietPeriods(20)
	require.Eventually(t, r.e.playIdle.Load, 5*time.Second, 100*time.Microsecond, "the speaker goes idle")
	assert.False(t, s.CapturePaused(), "voice activity listens")

	r.e.SetMode(voice.ModePushToTalk)
	paused(true, "push-to-talk released, nothing playing: the microphone stops")
	r.e.SetPTTActive(true)
	paused(false, "a press starts it")
	r.quietPeriods(4)
	r.e.SetPTTActive(false)
	r.quietPeriods(2) // the talk spurt ends
	paused(true, "released again")

	require.Eventually(t, s.PlaybackPaused, 5*time.Second, 100*time.Microsecond, "and the speaker's device stops too")
	before := s.Stats()
	r.quietPeriods(4)
	assert.Equal(t, before.PlaybackPeriods, s.Stats().PlaybackPeriods, "a stopped speaker is called no more")

	r.e.ReceiveAt(7, pkts[0], r.clock.now())
	paused(false, "a packet to play starts it")
	require.Eventually(t, func() bool { return !s.PlaybackPaused() }, 5*time.Second, 100*time.Microsecond, "and the speaker")
	assert.GreaterOrEqual(t, s.Playback().Len(), pcm.PeriodSamples, "which finds the first period to play in the ring")
	assert.False(t, r.e.playIdle.Load())
	r.quietPeriods(1)
	assert.Equal(t, before.Playback, s.Stats().Playback, "and lacks nothing of it")
}

func TestPacingFollowsUnderruns(t *testing.T) {
	var p pacing
	p.reset(100)
	assert.Zero(t, p.periods(100), "no underrun since the start: no lead")
	assert.Equal(t, 1, p.periods(580), "one period lacked")
	assert.Equal(t, 1, p.periods(580), "the same underrun counts once")
	assert.Equal(t, 2*firstCalm, p.calmSpell, "the calm spell doubles")
	assert.Equal(t, 3, p.periods(1061), "a period and a sample lacked")
	assert.Equal(t, maxLeadPeriods, p.periods(1061+590), "bounded")
	for range 10 {
		p.periods(p.underruns + 1)
	}
	assert.Equal(t, maxCalm, p.calmSpell, "the calm spell is bounded too")

	for range maxCalm - 1 {
		p.wrote()
	}
	assert.Equal(t, maxLeadPeriods, p.periods(p.underruns))
	p.wrote()
	assert.Equal(t, maxLeadPeriods-1, p.periods(p.underruns), "a calm spell gives a period back")
	for range (maxLeadPeriods - 1) * maxCalm {
		p.wrote()
	}
	assert.Zero(t, p.periods(p.underruns))
}
