// Package engine is one player's voice engine: it ties the audio packages together between the
// devices and the network.
//
// An Engine owns one processing goroutine, started by Start and ended by Close. The device clock
// drives it through the two rings: every period (10 ms) the microphone delivers wakes it while a
// frame is being sent, and once a period while there is something to play, just before the
// speaker takes it (by the device's take clock) or as it took the period before. A
// quiet call wakes it far less: with nothing that can be sent, or voice activity listening to
// silence, once per 20 ms frame of the microphone (push-to-talk released, the frame is not even
// cleaned: no echo cancellation, noise suppression or encoding), and once per two frames while
// voice activity hears nothing and nothing plays (Options.QuietWakeFrames); with nothing to play
// and nothing coming, never for the speaker, which the device then feeds silence itself until a
// packet comes (Receive wakes it); and the speaker's device stops too (device.PlaybackPauser)
// until a packet, a press or a mode change: at once with push-to-talk released, after
// Options.SpeakerHoldOff of nothing played while the microphone listens. The echo canceller runs
// only while an echo of what was played can still come back.
//
//   - capture, as each period arrives: input volume, then echo cancellation against exactly what
//     was played, noise suppression and gain control (package apm, in 5 ms blocks); once a whole
//     20 ms frame is in: voice activity (vad), the push-to-talk or voice activity gate with its
//     release delay and end-of-speech marker (ptt), self mute, the captured hook, Opus encoding
//     (codec), OnPacket, and the no-input detector;
//   - playback, just before the speaker takes a period (or, on a device without a take clock, as
//     soon as it took the one before): the next period goes into the playback ring, which holds
//     just that (plus a lead that speaker underruns raise and calm lowers). When the last
//     mixed frame has been played, the packets Receive queued go into one jitter buffer per
//     sender; each sender's frame is decoded, recovered from FEC or concealed (or faded out after
//     an end-of-speech marker), passed to the received hook, and mixed (mixer); speaking changes
//     are reported as edges. While nobody is heard only a period of the silent mix is played, so
//     that a talk spurt starts at the next period rather than the next frame.
//
// The callbacks of voice.EngineConfig (OnPacket, OnSpeaking, OnNoInput, Captured, Received) run
// on the processing goroutine, every frame, without queueing: they must not block, and must copy
// what they keep (a Packet's Payload and the hooks' samples are reused by the next frame).
// OnDevicesChanged runs on the engine's device-watching goroutine.
//
// A processing step allocates nothing. Every method of Engine may be called from any goroutine.
package engine

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/audio/apm"
	"sdkpp/audio/codec"
	"sdkpp/audio/device"
	"sdkpp/audio/internal/osthread"
	"sdkpp/audio/jitter"
	"sdkpp/audio/mixer"
	"sdkpp/audio/pcm"
	"sdkpp/audio/ptt"
	"sdkpp/audio/spatial"
	"sdkpp/audio/vad"
	"sdkpp/core/voice"
)

// Defaults of Options.
const (
	// DefaultNoInputThresholdDBFS is the level below which the input counts as silent.
	DefaultNoInputThresholdDBFS = -90
	// DefaultNoInputDuration is how long the input must stay silent before OnNoInput(true).
	DefaultNoInputDuration = 5 * time.Second
	// DefaultEchoTailMs is the echo tail the canceller models: the echo's delay estimate keeps
	// the delay it sees near 20 ms, which leaves most of it to the room's reverberation.
	DefaultEchoTailMs = 100
	// DefaultSpeakerHoldOff is how long nothing must have played, in voice activity mode, before
	// the speaker's device stops: longer than the pauses of a conversation, so that a call in
	// progress keeps its speaker running, and short beside a quiet call's minutes.
	DefaultSpeakerHoldOff = time.Second
	// DefaultQuietWakeFrames is how many frames of the microphone voice activity waits for at
	// once while it hears nothing and nothing plays. Two halve the engine's wake-ups in a quiet
	// call; speech that starts in the first of them is detected, and its first frame sent, one
	// frame later (20 ms, 10 in the low-latency mode), and every frame of it is sent.
	DefaultQuietWakeFrames = 2
)

// blockSamples is the input processing's block (5 ms, half a device period): the noise
// suppressor delays the microphone signal by one block, 5 ms rather than a period's 10.
const blockSamples = pcm.PeriodSamples / 2

// ErrClosed reports a call on a closed Engine.
var ErrClosed = errors.New("engine: closed")

// Options are the engine's settings beyond what the call layer gives (voice.EngineConfig).
type Options struct {
	// Devices is the sound system; nil opens a device.Context on the platform's default backend
	// at Start, which Close closes.
	Devices Devices
	// Now is the clock that stamps received packets and paces the jitter buffers, on one
	// monotonic scale; nil uses the time since New.
	Now func() time.Duration
	// Jitter shapes each sender's jitter buffer (zero fields take jitter's defaults).
	Jitter jitter.Config
	// EchoTailMs is the echo tail the canceller models (0: DefaultEchoTailMs).
	EchoTailMs int
	// NoInputDuration is how long the input must stay below the no-input threshold before
	// OnNoInput(true) (0: DefaultNoInputDuration).
	NoInputDuration time.Duration
	// AfterFrame, if set, runs on the processing goroutine after each processing step (tests use
	// it to follow the engine).
	AfterFrame func()
	// Stereo plays interleaved stereo, so that positional voice places speakers left and right;
	// without it the output is mono and positional voice only attenuates with distance.
	Stereo bool
	// QuietWakeFrames is how many frames of the microphone voice activity waits for at once
	// while it hears nothing (no talk spurt, no hangover) and nothing plays (0:
	// DefaultQuietWakeFrames). Tests that play the devices a frame at a time and wait for each
	// step set 1.
	QuietWakeFrames int
	// SpeakerHoldOff is how long nothing must have played, while the microphone listens (voice
	// activity, or push-to-talk pressed), before the speaker's device stops (0:
	// DefaultSpeakerHoldOff; negative: at once). With push-to-talk released it stops at once.
	SpeakerHoldOff time.Duration
}

// Engine is one player's voice engine. It implements voice.Engine.
type Engine struct {
	cfg  voice.EngineConfig
	opts Options
	now  func() time.Duration

	// Control: the devices, the stream and the processing goroutine. ctl orders Start, Close
	// and device changes; none of them runs on the processing goroutine.
	ctl       sync.Mutex
	devs      Devices
	ownDevs   *device.Context
	stream    device.Stream
	stop      chan struct{} // closed to end the processing goroutine
	done      chan struct{} // closed by the processing goroutine when it ends
	watchStop chan struct{}
	watchDone chan struct{}
	inputID   string
	outputID  string
	inUse     device.StreamInfo
	started   bool
	closed    bool

	// Settings any goroutine changes; the processing step reads them.
	lowLatency   atomic.Bool  // requested; each path switches at its next frame
	inputVolume  atomic.Int32 // percent
	selfMute     atomic.Bool
	expectedLoss atomic.Int32 // percent; -1 until set
	noInputDBFS  atomic.Uint64
	lossReport   atomic.Uint64 // float64 bits

	// Per-sender settings set before or after the sender's first packet, and positional voice.
	sendersMu  sync.Mutex
	settings   map[uint64]*senderSettings
	removed    []uint64
	positional bool
	listener   spatial.Listener
	props      spatial.Properties
	culled     atomic.Uint64

	rx *queue
	// wake rouses the processing goroutine from a quiet wait (kick): a packet for an idle
	// speaker, a push-to-talk press, a change of mode. playIdle is set while the speaker is left
	// idle (nothing to play), so that Receive kicks only then.
	wake     chan struct{}
	playIdle atomic.Bool

	// The processing step's state, owned by the processing goroutine.
	apm      *apm.Processor
	vad      *vad.Detector
	noInput  *vad.NoInput
	gate     *ptt.Gate
	enc      *codec.Encoder
	mix      *mixer.Mixer
	senders  map[uint64]*sender
	order    []*sender // senders in arrival order, for a stable mix
	inputs   []mixer.Input
	in       []int16 // the frame being captured, a period at a time
	inFill   int     // samples of in captured so far
	inBuf    []int16 // in's storage: a 20 ms frame; in is 10 ms of it in low-latency mode
	outBuf   []int16 // out's storage
	encs     [2]*codec.Encoder
	capLow   bool    // the capture path runs in low-latency mode (e.in, e.enc)
	mixLow   bool    // the playback path runs in low-latency mode (e.out)
	out      []int16 // the frame being played, a period at a time (interleaved when stereo)
	outCh    int     // channels of out and of the speaker: 1, or 2 with Options.Stereo
	mono     []int16 // a played stereo period downmixed, the echo canceller's reference
	outPos   int     // samples of out written to the speaker so far (len(out): none left)
	pace     pacing
	payload  []byte
	seq      uint16
	ts       uint32
	spurt    bool // a talk spurt is open (packets left since the last end-of-speech)
	quiet    bool // the frame being captured cannot be sent: it is not cleaned (quietCapture)
	mixQuiet bool // the last mix heard nothing and no sender has anything coming
	speaking bool // the local player's speaking state last reported
	lossSet  int32
	pushFn   func(*queued)
	noInThr  float64

	// dump writes the echo-cancellation diagnostics (EngineConfig.AecDump) between Start and
	// Close; dumpFrame is the capture frame's share of it, nil when the writer is behind, and
	// farHist the last frame's worth of what was played.
	dump      *aecDump
	dumpFrame *aecFrame
	farHist   [pcm.FrameSamples]int16
}

// maxPacketSamples is the longest Opus packet: 120 ms.
const maxPacketSamples = 120 * pcm.SampleRate / 1000

// sender is one remote player's playback path.
type sender struct {
	id    uint64
	jb    *jitter.Buffer
	dec   *codec.Decoder
	ch    *mixer.Channel
	pcm   []int16 // decoded samples not yet mixed: pcm[:fill]
	fill  int
	live  bool    // pcm[:fill] holds audio, not silence
	frame []int16 // the samples mixed at this tick: a frame of the engine's, of frameBuf
	// frameBuf is frame's storage, a 20 ms frame.
	frameBuf []int16
	fading   bool // the last frame played carried end-of-speech: stay silent, do not conceal
	playing  bool
	// outOfRange: positional and beyond the audible distance at this frame (not decoded).
	outOfRange bool
}

// senderSettings are a sender's volume and local mute as last set, and its place.
type senderSettings struct {
	volume int
	muted  bool
	ch     *mixer.Channel

	pos           spatial.Vec3
	hasPos        bool // a position is known: until then the sender is centred
	nonPositional bool // a team radio: centred and unattenuated
}

var (
	_ voice.Engine           = (*Engine)(nil)
	_ voice.PositionalEngine = (*Engine)(nil)
	_ voice.LowLatencyEngine = (*Engine)(nil)
)

// New makes an engine for cfg, stopped; Start opens the devices. Close releases it.
func New(cfg voice.EngineConfig, opts Options) (*Engine, error) {
	if opts.EchoTailMs == 0 {
		opts.EchoTailMs = DefaultEchoTailMs
	}
	p, err := apm.New(blockSamples, opts.EchoTailMs)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	enc, err := codec.NewEncoder()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	low, err := codec.NewLowDelayEncoder()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	if opts.NoInputDuration <= 0 {
		opts.NoInputDuration = DefaultNoInputDuration
	}
	if opts.QuietWakeFrames <= 0 {
		opts.QuietWakeFrames = DefaultQuietWakeFrames
	}
	if opts.SpeakerHoldOff == 0 {
		opts.SpeakerHoldOff = DefaultSpeakerHoldOff
	}
	e := &Engine{
		cfg:      cfg,
		opts:     opts,
		devs:     opts.Devices,
		inputID:  cfg.InputDevice,
		outputID: cfg.OutputDevice,
		settings: map[uint64]*senderSettings{},
		rx:       newQueue(),
		wake:     make(chan struct{}, 1),
		apm:      p,
		vad:      vad.New(),
		noInput:  vad.NewNoInput(DefaultNoInputThresholdDBFS, opts.NoInputDuration),
		gate:     ptt.New(),
		enc:      enc,
		encs:     [2]*codec.Encoder{enc, low},
		mix:      mixer.New(),
		senders:  map[uint64]*sender{},
		inBuf:    make([]int16, pcm.FrameSamples),
		outCh:    1,
		mono:     make([]int16, pcm.PeriodSamples),
		listener: spatial.DefaultListener,
		props:    spatial.DefaultProperties,
		payload:  make([]byte, codec.MaxPacketBytes),
		lossSet:  -1,
		noInThr:  DefaultNoInputThresholdDBFS,
	}
	if opts.Stereo {
		e.outCh = 2
	}
	e.in = e.inBuf
	e.outBuf = make([]int16, pcm.FrameSamples*e.outCh)
	e.out = e.outBuf
	e.outPos = len(e.out)
	e.now = opts.Now
	if e.now == nil {
		start := time.Now()
		e.now = func() time.Duration { return time.Since(start) }
	}
	e.inputVolume.Store(100)
	e.expectedLoss.Store(-1)
	e.noInputDBFS.Store(math.Float64bits(DefaultNoInputThresholdDBFS))
	e.pushFn = e.pushQueued
	e.gate.SetMode(ptt.VoiceActivity)
	return e, nil
}

// Start opens the devices and starts the processing goroutine.
func (e *Engine) Start() error {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if e.closed {
		return fmt.Errorf("engine: start: %w", ErrClosed)
	}
	if e.started {
		return nil
	}
	if e.cfg.AecDump != "" {
		d, err := startAecDump(e.cfg.AecDump, e.logf)
		if err != nil {
			e.logf("engine: %v", err) // diagnostics only: the call goes on without them
		} else {
			e.dump = d
		}
	}
	if e.devs == nil {
		c, err := device.NewContext(device.Options{})
		if err != nil {
			e.stopDump()
			return fmt.Errorf("engine: start: %w", err)
		}
		e.ownDevs, e.devs = c, c
	}
	if err := e.openLocked(); err != nil {
		if e.ownDevs != nil {
			_ = e.ownDevs.Close()
			e.ownDevs, e.devs = nil, nil
		}
		e.stopDump()
		return fmt.Errorf("engine: start: %w", err)
	}
	e.started = true
	e.logf("engine: started: capture %q, playback %q, %d Hz, periods of %d samples",
		e.inUse.Capture.Name, e.inUse.Playback.Name, e.inUse.SampleRate, e.inUse.PeriodSamples)
	e.watchStop, e.watchDone = make(chan struct{}), make(chan struct{})
	go e.watch(e.devs.Events(), e.watchStop, e.watchDone)
	return nil
}

// openLocked opens and starts the stream on the selected devices and the processing goroutine.
func (e *Engine) openLocked() error {
	s, err := e.devs.Open(device.Config{Capture: true, CaptureID: e.inputID, Playback: true, PlaybackID: e.outputID,
		PlaybackChannels: e.outCh})
	if err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		_ = s.Close()
		return err
	}
	stop, done := make(chan struct{}), make(chan struct{})
	e.stream, e.inUse, e.stop, e.done = s, s.Info(), stop, done
	// The processing step runs on an OS thread of its own that ends with the stream. The C ABI
	// runs the game's raw-audio hooks on that thread's companion (capi/internal/hookrelay), which
	// ends with it: a runtime the hooks attached the companion to (Mono, IL2CPP) sees it exit and
	// detaches it, instead of waiting at shutdown for a thread the SDK keeps.
	if err := osthread.Go(func() { e.run(s, stop, done) }); err != nil {
		e.stream = nil
		_ = s.Close()
		return err
	}
	return nil
}

// closeStreamLocked ends the processing goroutine and closes the stream.
func (e *Engine) closeStreamLocked() error {
	if e.stream == nil {
		return nil
	}
	close(e.stop)
	<-e.done
	err := e.stream.Close()
	e.stream = nil
	return err
}

// Close stops processing, closes the devices and frees the engine; it returns once the engine's
// goroutines have ended. It is safe to call more than once.
func (e *Engine) Close() error {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.closeStreamLocked()
	e.stopDump()
	if e.started {
		close(e.watchStop)
		<-e.watchDone
	}
	if e.ownDevs != nil {
		if cerr := e.ownDevs.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	e.apm.Close()
	if err != nil {
		return fmt.Errorf("engine: close: %w", err)
	}
	return nil
}

// stopDump ends the AEC dump's writer, if any; the processing goroutine has ended.
func (e *Engine) stopDump() {
	if e.dump != nil {
		e.dump.stop()
		e.dump = nil
	}
}

// logf writes a diagnostic to EngineConfig.Logf.
func (e *Engine) logf(format string, args ...any) {
	if e.cfg.Logf != nil {
		e.cfg.Logf(format, args...)
	}
}

// knownDelayBase keeps the delay told to the echo canceller positive as microphone samples are
// dropped.
const knownDelayBase = 1 << 20

// run is the processing goroutine, on a thread of its own (osthread). The two device sides drive
// it: each period the microphone delivers goes through the capture path at once (a whole frame
// is then sent). The playback ring holds the lead that speaker underruns call for (pacing), and
// the next period is written when the speaker is about to take it: by the device's take clock
// (device.PlaybackClock) a margin before the take it predicts (justInTime), so that a packet
// that comes in the meantime is heard at that take rather than a period later; on a device
// without the clock, as soon as the speaker took the period before.
func (e *Engine) run(s device.Stream, stop, done chan struct{}) {
	defer close(done)
	capture, playback := s.Capture(), s.Playback()
	// The echo canceller pairs each microphone period with the next reference period in line.
	// The microphone's and the speaker's callbacks come in either order, and a microphone period
	// that finds no reference slips the pairing by a period; one silent period ahead keeps that
	// from happening (the echo of a period comes periods later in any case). Through a PulseAudio
	// null sink it raised the echo removed from 29.6 to 35.3 dB.
	var silence [blockSamples]int16
	// A device with a take clock has each period written just before it takes it, a period
	// later than one without: one more silent period ahead keeps the reference from running dry.
	clock, _ := s.(device.PlaybackClock)
	ahead := 1
	if clock != nil {
		ahead = 2
	}
	for range ahead * pcm.PeriodSamples / blockSamples {
		_ = e.apm.Playback(silence[:])
	}
	jit := newJustInTime(time.Duration(pcm.PeriodSamples) * time.Second / pcm.SampleRate)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer func() {
		timer.Stop()
		if jit.measured > 0 {
			e.logf("engine: playback written just in time: margin %v at the end, largest need %v, %d writes measured",
				jit.margin, jit.worst, jit.measured)
		}
	}()
	period := pcm.PeriodSamples * e.outCh
	left := 0          // the playback ring's fill after the last look
	speakerOn := false // the speaker has taken audio since the stream started
	pauser, _ := s.(device.CapturePauser)
	capturePaused := false
	// The speaker's device stops while it has nothing to play (device.PlaybackPauser). Its take
	// clock times writes again only from the first take after it restarted (the count before is
	// resumedTakes): the last stamp before is as old as the pause.
	speaker, _ := s.(device.PlaybackPauser)
	speakerPaused := false
	var resumedTakes uint64
	idleSince := time.Duration(-1) // when the speaker last found nothing to play (Options.Now), or -1
	want := period
	for {
		busy := false
		// The take clock's last reading, while the speaker plays (timed), and when the next
		// period is due (zero: now, or when the speaker next takes).
		var takes uint64
		var last, dueAt time.Time
		timed := false
		for capture.Len() >= pcm.PeriodSamples {
			if e.inFill == 0 {
				e.captureMode()
			}
			block := e.in[e.inFill : e.inFill+pcm.PeriodSamples]
			capture.Read(block)
			if e.inFill == 0 {
				e.quiet = e.quietCapture()
			}
			e.captureBlock(block, e.inFill)
			e.inFill += pcm.PeriodSamples
			if e.inFill == len(e.in) {
				e.inFill = 0
				e.captureFrame(e.in)
				if e.opts.AfterFrame != nil {
					e.opts.AfterFrame()
				}
			}
			busy = true
		}

		ps, cs := playback.Stats(), capture.Stats()
		under := ps.UnderrunSamples / uint64(e.outCh) // in sample frames, as pacing counts
		if e.playIdle.Load() {
			if !e.rx.pending() {
				goto wait
			}
			// A packet came: the speaker plays again. What it lacked while idle was silence
			// the engine chose, not lateness; the echo canceller's reference starts over a
			// silent period ahead, as at the stream's start.
			e.playIdle.Store(false)
			e.pace.rebase(under)
			_ = e.apm.Playback(silence[:])
			left = 0
		}
		speakerOn = speakerOn || playback.Len() < left
		if !speakerOn {
			// Until the speaker first takes audio, what it lacked is the stream starting, not
			// the engine being late.
			e.pace.reset(under)
		}
		if speakerOn && under != e.pace.underruns {
			// The speaker lacked audio: PulseAudio raises a stream's latency then, which moves
			// the echo by an amount nobody here knows. The delay estimate looks again at once.
			e.apm.EchoPathMayMove()
		}
		if clock != nil && speakerOn && !speakerPaused {
			takes, last = clock.PlaybackTakes()
			if timed = takes > resumedTakes; timed {
				jit.observe(takes, last)
				if under != e.pace.underruns && jit.short() {
					// Written too late for the speaker: first back to writing as the speaker
					// takes the period before (a full period's margin), and only then a lead.
					e.pace.rebase(under)
				}
			}
		}
		want = (1 + e.pace.periods(under)) * period
		for playback.Len() < want {
			if e.outPos >= len(e.out) && e.mixQuiet && speakerOn && !e.rx.pending() {
				// Nothing to play and nothing coming: leave the speaker idle (the device plays
				// silence) instead of waking every period to write it; Receive kicks.
				e.playIdle.Store(true)
				if !e.rx.pending() {
					break
				}
				e.playIdle.Store(false) // a packet slipped in before Receive could see the flag
			}
			var take uint64
			if timed {
				// Just in time: the next period is mixed when the device is about to need it.
				take, dueAt = jit.due(takes, last, playback.Len()/period-e.pace.lead)
				if time.Now().Before(dueAt) {
					break
				}
			}
			playback.Write(e.nextPeriod())
			e.pace.wrote()
			if timed {
				jit.wrote(take, last, dueAt, time.Now())
				dueAt = time.Time{}
			}
			busy = true
		}
		left = playback.Len()
		if busy {
			// Every microphone sample dropped brings the echo that much earlier: the echo
			// canceller's reference follows at once (its estimate finds the other moves). A
			// period of silence the speaker played for want of output needs no such move: the
			// next period is written (and queued as the reference) when the speaker takes the
			// silent one, a period late like its sound (TestEchoCancellationAcrossUnderruns).
			e.apm.SetKnownDelay(knownDelayBase - int(cs.OverrunSamples))
		}

	wait:
		select {
		case <-stop:
			return
		default:
		}
		// With push-to-talk released and nothing playing the microphone has no use: its device
		// stops, so that neither it nor the sound system's capture thread wakes every period. A
		// press, a mode change or a packet (each kicks) starts it again; what it captured before
		// the pause is dropped, and the echo canceller looks for the echo's delay again.
		if pause := e.quietCapture() && e.playIdle.Load(); pauser != nil && pause != capturePaused {
			if !pause {
				capture.Discard(capture.Len())
				e.inFill = 0
				e.apm.EchoPathMayMove()
			}
			if err := pauser.PauseCapture(pause); err != nil {
				e.logf("engine: %v; the microphone stays on", err)
				pauser = nil
			}
			capturePaused = pause && pauser != nil
		}
		// With nothing to play the speaker's device stops, once it has played what the ring
		// held: neither it nor the sound system wakes every few milliseconds for silence. With
		// the microphone stopped too (push-to-talk released) at once; while the microphone
		// listens (voice activity) only once nothing has played for Options.SpeakerHoldOff, so
		// that a conversation's pauses do not stop and start it at every talk spurt (the
		// microphone's frames wake the engine to see the hold-off end). A press, a mode change
		// or a packet restarts it, after the first period to play (if any) is in the ring, which
		// it plays first.
		idle := e.playIdle.Load() && playback.Len() == 0
		if !idle {
			idleSince = -1
		} else if idleSince < 0 {
			idleSince = e.now()
		}
		if pause := idle && (capturePaused || e.now()-idleSince >= e.opts.SpeakerHoldOff); speaker != nil && pause != speakerPaused {
			if clock != nil && !pause {
				resumedTakes, _ = clock.PlaybackTakes()
			}
			if err := speaker.PausePlayback(pause); err != nil {
				e.logf("engine: %v; the speaker stays on", err)
				speaker = nil
			}
			speakerPaused = pause && speaker != nil
			jit.take = 0 // a write measured before the pause says nothing about the margin
			if !pause {
				// Restarted: the device lacked nothing the engine was late for (it played what
				// the ring held when it started), and the echo comes back by another path.
				e.pace.rebase(playback.Stats().UnderrunSamples / uint64(e.outCh))
				e.apm.EchoPathMayMove()
				continue
			}
		}
		// Wake-ups: the microphone's periods as they come while a frame is being sent; a whole
		// frame at once while nothing can be sent or voice activity listens to silence (the
		// frame's periods are cleaned together, or only measured), and QuietWakeFrames of them
		// while voice activity hears nothing and nothing plays. The speaker's periods while it
		// plays; none while it is idle.
		need := pcm.PeriodSamples
		if !e.spurt && e.cfg.Captured == nil && (e.gate.Mode() == ptt.VoiceActivity || e.quietCapture()) {
			need = len(e.in) - e.inFill
			if e.gate.Mode() == ptt.VoiceActivity && e.playIdle.Load() && !e.vad.Speaking() {
				// Within half the ring, so that the device never finds it full.
				need = min(need+(e.opts.QuietWakeFrames-1)*len(e.in), capture.Cap()/2)
			}
		}
		data := capture.DataSignalAt(need)
		var space <-chan struct{}
		var due <-chan time.Time
		if !e.playIdle.Load() {
			if timed && dueAt.IsZero() && playback.Len() >= want {
				// The ring holds the next period: the one after is due after the next take,
				// unless that take is overdue (then wait for it).
				if _, at := jit.due(takes, last, playback.Len()/period-e.pace.lead); time.Now().Before(at) {
					dueAt = at
				}
			}
			if !dueAt.IsZero() {
				timer.Reset(time.Until(dueAt))
				due = timer.C
			} else {
				space = playback.SpaceSignal()
				if playback.Len() < want {
					continue
				}
			}
		} else if speaker != nil && !speakerPaused && capturePaused {
			// Idle, the speaker still plays what the ring held: its device stops when it took it.
			space = playback.SpaceSignal()
			if playback.Len() == 0 {
				continue
			}
		}
		if due == nil {
			timer.Stop()
		}
		if capture.Len() >= need {
			continue
		}
		select {
		case <-data:
		case <-space:
		case <-due:
		case <-e.wake:
		case <-stop:
			return
		}
	}
}

// quietCapture reports whether the next frame cannot be sent whatever the microphone hears:
// push-to-talk released with no talk spurt to finish, and no captured hook or echo dump that
// wants every frame cleaned. Only the processing goroutine calls it.
func (e *Engine) quietCapture() bool {
	return e.gate.Idle() && !e.spurt && e.cfg.Captured == nil && e.dump == nil
}

// kick wakes the processing goroutine from its wait; it never blocks.
func (e *Engine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// watch reports device changes until stop.
func (e *Engine) watch(events <-chan device.Event, stop, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case _, ok := <-events:
			if !ok {
				return
			}
			if e.cfg.OnDevicesChanged == nil {
				continue
			}
			list, err := e.devs.Devices()
			if err != nil {
				continue
			}
			e.cfg.OnDevicesChanged(toVoice(list.Capture), toVoice(list.Playback))
		}
	}
}

// Receive hands a packet from sender to the engine, stamped with the engine's clock now. It
// copies the packet and never waits for the processing goroutine.
func (e *Engine) Receive(sender uint64, p voice.Packet) {
	e.ReceiveAt(sender, p, e.now())
}

// ReceiveAt is Receive with the arrival time given on the scale of Options.Now.
func (e *Engine) ReceiveAt(sender uint64, p voice.Packet, arrival time.Duration) {
	e.rx.push(sender, jitter.Packet{Seq: p.Seq, Timestamp: p.Timestamp, EndOfSpeech: p.EndOfSpeech, Payload: p.Payload}, arrival)
	if e.playIdle.Load() {
		e.kick()
	}
}

// RemoveSender forgets a sender that left; its buffered audio is dropped at the next frame.
func (e *Engine) RemoveSender(sender uint64) {
	e.sendersMu.Lock()
	delete(e.settings, sender)
	e.removed = append(e.removed, sender)
	e.sendersMu.Unlock()
}

// SetMode selects voice activity or push-to-talk.
func (e *Engine) SetMode(m voice.Mode) {
	if m == voice.ModePushToTalk {
		e.gate.SetMode(ptt.PushToTalk)
	} else {
		e.gate.SetMode(ptt.VoiceActivity)
	}
	e.kick()
}

// SetPTTActive presses or releases the push-to-talk key.
func (e *Engine) SetPTTActive(on bool) {
	e.gate.SetActive(on)
	e.kick()
}

// SetPTTReleaseDelay sets how long sending goes on after the key is released (or the voice
// stops), honoured in whole 20 ms frames.
func (e *Engine) SetPTTReleaseDelay(ms uint32) { e.gate.SetReleaseDelay(ms) }

// SetVADThreshold selects the automatic threshold or a manual one in dBFS (-100..0).
func (e *Engine) SetVADThreshold(automatic bool, dbfs float32) { e.vad.SetThreshold(automatic, dbfs) }

// SetSelfMute stops (or resumes) sending; a talk spurt in progress ends with an end-of-speech
// marker.
func (e *Engine) SetSelfMute(on bool) { e.selfMute.Store(on) }

// SetLowLatency switches the low-latency mode (off by default): 10 ms frames instead of 20, sent
// in Opus's restricted low-delay mode (2.5 ms of look-ahead instead of 6.5, no in-band FEC), and
// mixed 10 ms at a time. Each path switches at its next frame boundary; receivers follow each
// sender's frame size whatever their own mode.
func (e *Engine) SetLowLatency(on bool) {
	e.lowLatency.Store(on)
	e.kick()
}

// LowLatency reports whether the low-latency mode is on (as last set).
func (e *Engine) LowLatency() bool { return e.lowLatency.Load() }

// SetSelfDeaf silences playback.
func (e *Engine) SetSelfDeaf(on bool) { e.mix.SetDeafened(on) }

// SetInputVolume scales the microphone signal: 100 percent leaves it unchanged, 0 silences it,
// up to 200 doubles it.
func (e *Engine) SetInputVolume(percent float32) {
	e.inputVolume.Store(int32(clampPercent(percent)))
}

// SetOutputVolume sets the playback volume (0..200 percent).
func (e *Engine) SetOutputVolume(percent float32) { e.mix.SetVolume(clampPercent(percent)) }

// SetSenderVolume sets one sender's volume (0..200 percent), also before its first packet.
func (e *Engine) SetSenderVolume(sender uint64, percent float32) {
	v := clampPercent(percent)
	e.sendersMu.Lock()
	s := e.settingsLocked(sender)
	s.volume = v
	if s.ch != nil {
		s.ch.SetVolume(v)
	}
	e.sendersMu.Unlock()
}

// SetLocalMute mutes or unmutes one sender for the local player only.
func (e *Engine) SetLocalMute(sender uint64, mute bool) {
	e.sendersMu.Lock()
	s := e.settingsLocked(sender)
	s.muted = mute
	if s.ch != nil {
		s.ch.SetMuted(mute)
	}
	e.sendersMu.Unlock()
}

func (e *Engine) settingsLocked(sender uint64) *senderSettings {
	s := e.settings[sender]
	if s == nil {
		s = &senderSettings{volume: mixer.UnityVolume}
		e.settings[sender] = s
	}
	return s
}

// SetPositional switches positional voice (off by default): while on, every sender whose
// position is known and who is not marked non-positional is placed around the listener and
// attenuated with distance, and one beyond the audible distance is not decoded.
func (e *Engine) SetPositional(on bool) {
	e.sendersMu.Lock()
	e.positional = on
	e.sendersMu.Unlock()
}

// SetListener sets where the local player hears from (voice.DefaultListener until set).
func (e *Engine) SetListener(l voice.Listener) {
	e.sendersMu.Lock()
	e.listener = spatial.Listener{Position: spatial.Vec3(l.Position), Forward: spatial.Vec3(l.Forward), Up: spatial.Vec3(l.Up)}
	e.sendersMu.Unlock()
}

// SetSpatialProperties sets the distance properties of positional voice
// (voice.DefaultSpatialProperties until set); invalid ones are refused.
func (e *Engine) SetSpatialProperties(vp voice.SpatialProperties) error {
	p := spatial.Properties{AudibleDistance: vp.AudibleDistance, ConversationalDistance: vp.ConversationalDistance,
		FadeIntensity: vp.FadeIntensity, Model: spatial.FadeModel(vp.Model)}
	if !p.Valid() {
		return fmt.Errorf("engine: positional properties %+v: invalid", p)
	}
	e.sendersMu.Lock()
	e.props = p
	e.sendersMu.Unlock()
	return nil
}

// SetSenderPosition sets where a sender stands, also before its first packet: the game's
// knowledge, or what the sender's own client sends with its voice.
func (e *Engine) SetSenderPosition(sender uint64, pos voice.Vec3) {
	e.sendersMu.Lock()
	s := e.settingsLocked(sender)
	s.pos, s.hasPos = spatial.Vec3(pos), true
	e.sendersMu.Unlock()
}

// ClearSenderPosition forgets a sender's position: it is centred again.
func (e *Engine) ClearSenderPosition(sender uint64) {
	e.sendersMu.Lock()
	e.settingsLocked(sender).hasPos = false
	e.sendersMu.Unlock()
}

// SetSenderPositional marks a sender positional (the default) or not: a non-positional sender
// (a team radio beside proximity chat) is centred and unattenuated wherever it stands.
func (e *Engine) SetSenderPositional(sender uint64, positional bool) {
	e.sendersMu.Lock()
	e.settingsLocked(sender).nonPositional = !positional
	e.sendersMu.Unlock()
}

// CulledFrames counts the frames of senders beyond the audible distance that were not decoded.
func (e *Engine) CulledFrames() uint64 { return e.culled.Load() }

// SetEchoCancellation switches echo cancellation.
func (e *Engine) SetEchoCancellation(on bool) { e.apm.SetEchoCancellation(on) }

// SetNoiseSuppression switches noise suppression.
func (e *Engine) SetNoiseSuppression(on bool) { e.apm.SetNoiseSuppression(on) }

// SetNoiseCancellation switches noise cancellation (off by default); while on it replaces noise
// suppression.
func (e *Engine) SetNoiseCancellation(on bool) { e.apm.SetNoiseCancellation(on) }

// SetAutoGain switches automatic gain control.
func (e *Engine) SetAutoGain(on bool) { e.apm.SetAutoGain(on) }

// SetNoInputThreshold sets the level (dBFS) below which the input counts as silent for the
// no-input detector.
func (e *Engine) SetNoInputThreshold(dbfs float32) {
	e.noInputDBFS.Store(math.Float64bits(float64(dbfs)))
}

// SetExpectedLoss feeds the far ends' loss report (percent) to the encoder's FEC.
func (e *Engine) SetExpectedLoss(percent int) { e.expectedLoss.Store(int32(max(0, min(100, percent)))) }

// LossReport returns the loss fraction (0..1) the local jitter buffers measured: the largest
// over the senders, for the call layer to report to them.
func (e *Engine) LossReport() float64 { return math.Float64frombits(e.lossReport.Load()) }

// InputDevices lists the capture devices.
func (e *Engine) InputDevices() ([]voice.Device, error) {
	list, err := e.list()
	if err != nil {
		return nil, err
	}
	return toVoice(list.Capture), nil
}

// OutputDevices lists the playback devices.
func (e *Engine) OutputDevices() ([]voice.Device, error) {
	list, err := e.list()
	if err != nil {
		return nil, err
	}
	return toVoice(list.Playback), nil
}

func (e *Engine) list() (device.List, error) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if e.closed {
		return device.List{}, fmt.Errorf("engine: list devices: %w", ErrClosed)
	}
	devs := e.devs
	if devs == nil {
		// Not started: a game's settings menu lists devices before any call. A context of
		// its own, closed here, lists them without opening a stream.
		c, err := device.NewContext(device.Options{})
		if err != nil {
			return device.List{}, fmt.Errorf("engine: list devices: %w", err)
		}
		defer c.Close()
		devs = c
	}
	list, err := devs.Devices()
	if err != nil {
		return device.List{}, fmt.Errorf("engine: list devices: %w", err)
	}
	return list, nil
}

// SetInputDevice selects the capture device by id (empty: the default) and, when running,
// reopens the stream on it.
func (e *Engine) SetInputDevice(id string) error { return e.setDevices(&e.inputID, id) }

// SetOutputDevice selects the playback device by id (empty: the default) and, when running,
// reopens the stream on it.
func (e *Engine) SetOutputDevice(id string) error { return e.setDevices(&e.outputID, id) }

func (e *Engine) setDevices(field *string, id string) error {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if e.closed {
		return fmt.Errorf("engine: select device: %w", ErrClosed)
	}
	old := *field
	*field = id
	if e.stream == nil {
		return nil
	}
	if err := e.closeStreamLocked(); err != nil {
		return fmt.Errorf("engine: select device %q: %w", id, err)
	}
	if err := e.openLocked(); err != nil {
		*field = old
		if rerr := e.openLocked(); rerr != nil {
			return fmt.Errorf("engine: select device %q: %w (and reopening the previous one: %w)", id, err, rerr)
		}
		return fmt.Errorf("engine: select device %q: %w", id, err)
	}
	return nil
}

// CurrentInputDevice reports the capture device in use (zero when stopped).
func (e *Engine) CurrentInputDevice() voice.Device {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	d := e.inUse.Capture
	return voice.Device{ID: d.ID, Name: d.Name, IsDefault: d.IsDefault}
}

// CurrentOutputDevice reports the playback device in use (zero when stopped).
func (e *Engine) CurrentOutputDevice() voice.Device {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	d := e.inUse.Playback
	return voice.Device{ID: d.ID, Name: d.Name, IsDefault: d.IsDefault}
}

// Stats reports the stream's device periods and ring glitches (zero when stopped).
func (e *Engine) Stats() device.Stats {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if e.stream == nil {
		return device.Stats{}
	}
	return e.stream.Stats()
}

// PlaybackLead returns how many periods the engine keeps in the playback ring beyond the one the
// speaker takes next, raised by speaker underruns. It must not run concurrently with processing:
// call it on a stopped engine, or from AfterFrame.
func (e *Engine) PlaybackLead() int { return e.pace.lead }

// SenderStats returns a sender's jitter buffer statistics. It must not run concurrently with
// processing: call it on a stopped engine, or from AfterFrame.
func (e *Engine) SenderStats(sender uint64) (jitter.Stats, bool) {
	s := e.senders[sender]
	if s == nil {
		return jitter.Stats{}, false
	}
	return s.jb.Stats(), true
}

func clampPercent(p float32) int {
	if p != p || p < 0 { // NaN or negative
		return 0
	}
	return int(min(p, mixer.MaxVolume) + 0.5)
}
