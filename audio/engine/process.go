package engine

import (
	"math"
	"time"

	"sdkpp/audio/codec"
	"sdkpp/audio/jitter"
	"sdkpp/audio/mixer"
	"sdkpp/audio/pcm"
	"sdkpp/audio/ptt"
	"sdkpp/audio/spatial"
	"sdkpp/audio/vad"
	"sdkpp/core/voice"
)

// step runs one 20 ms frame through both paths at once, for tests and benchmarks that play the
// engine without devices: frame is what the microphone captured (processed in place); the
// result is the mixed frame to play, queued whole as the echo canceller's reference and valid
// until the next step. It allocates nothing once every sender has been seen.
func (e *Engine) step(frame []int16) []int16 {
	e.capture(frame)
	e.mixMode()
	e.mixFrame()
	for b, n := 0, pcm.PeriodSamples*e.outCh; b < len(e.out); b += n {
		e.played(e.out[b : b+n])
	}
	e.outPos = len(e.out)
	return e.out
}

// modeFrame is the frame of a path in the low-latency mode or not, in samples.
func modeFrame(low bool) int {
	if low {
		return codec.LowDelayFrameSamples
	}
	return pcm.FrameSamples
}

// captureMode switches the capture path to the mode last asked for, between two frames: the
// frame, the encoder, and what counts frames (voice activity's hangover, the gate's release
// delay, the no-input detector) to keep their durations.
func (e *Engine) captureMode() {
	low := e.lowLatency.Load()
	if low == e.capLow {
		return
	}
	e.capLow = low
	n := modeFrame(low)
	e.in = e.inBuf[:n]
	if low {
		e.enc = e.encs[1]
	} else {
		e.enc = e.encs[0]
	}
	e.lossSet = -1 // the new encoder takes the expected loss at its first frame
	ms := n * 1000 / pcm.SampleRate
	e.vad.SetHangover(vad.DefaultHangoverFrames * pcm.FrameDurationMs / ms)
	e.gate.SetFrameDuration(ms)
	e.noInput.SetFrame(time.Duration(ms) * time.Millisecond)
}

// mixMode switches the playback path to the mode last asked for, between two mixed frames.
func (e *Engine) mixMode() {
	if low := e.lowLatency.Load(); low != e.mixLow {
		e.mixLow = low
		n := modeFrame(low)
		e.out = e.outBuf[:n*e.outCh]
		e.mix.SetFrameDuration(n * 1000 / pcm.SampleRate)
	}
}

// capture runs the capture path on one whole frame (of the mode's length), in place.
func (e *Engine) capture(frame []int16) {
	e.captureMode()
	e.quiet = e.quietCapture()
	for b := 0; b < len(frame); b += pcm.PeriodSamples {
		e.captureBlock(frame[b:b+pcm.PeriodSamples], b)
	}
	e.captureFrame(frame)
}

// captureBlock runs the first part of the capture path on one device period of the microphone,
// in place, as soon as the device delivers it: input volume, then echo cancellation, noise
// suppression and gain control (apm works in 5 ms blocks). off is the block's offset in its frame.
// A frame that cannot be sent (e.quiet) is not cleaned: apm only keeps its pairing, and its
// echo canceller converged while there is echo.
func (e *Engine) captureBlock(block []int16, off int) {
	if e.quiet {
		for b := 0; b < len(block); b += blockSamples {
			_ = e.apm.Idle(block[b : b+blockSamples]) // fails only on a wrong block size or after Close
		}
		return
	}
	if off == 0 && e.dump != nil {
		e.dumpFrame = e.dump.take()
	}
	if v := e.inputVolume.Load(); v != 100 {
		for i, s := range block {
			block[i] = pcm.Clamp16(int32(s) * v / 100)
		}
	}
	f := e.dumpFrame
	if f != nil {
		copy(f.near[off:], block)
	}
	for b := 0; b < len(block); b += blockSamples {
		// fails only on a wrong block size or after Close
		_ = e.apm.Capture(block[b:b+blockSamples], block[b:b+blockSamples])
	}
	if f != nil {
		copy(f.out[off:], block)
	}
}

// captureFrame runs the rest of the capture path on a frame whose periods went through
// captureBlock: self mute, the captured hook, voice activity, the no-input detector, the
// push-to-talk or voice activity gate, and the encoder.
func (e *Engine) captureFrame(frame []int16) {
	// The game's captured hook sees the processed frame (silence while muted) and may replace it:
	// what it leaves is what voice activity, the no-input detector and the encoder see, so a game
	// that feeds its own audio through the hook is heard.
	muted := e.selfMute.Load()
	if muted {
		clear(frame)
	}
	if e.cfg.Captured != nil {
		e.cfg.Captured(frame)
	}

	level := pcm.LevelDBFS(frame)
	speaking := e.vad.ProcessLevel(level)
	if thr := math.Float64frombits(e.noInputDBFS.Load()); thr != e.noInThr {
		e.noInThr = thr
		e.noInput.Configure(thr, e.opts.NoInputDuration)
	}
	switch e.noInput.ProcessLevel(level) {
	case vad.EventNoInput:
		if e.cfg.OnNoInput != nil {
			e.cfg.OnNoInput(true)
		}
	case vad.EventInputRecovered:
		if e.cfg.OnNoInput != nil {
			e.cfg.OnNoInput(false)
		}
	}

	d := e.gate.Next(speaking)
	send, eos := d.Sends(), d == ptt.SendEndOfSpeech
	if muted {
		// Muted: nothing leaves, but a talk spurt in progress ends with a silent marker.
		send, eos = e.spurt, e.spurt
		clear(frame)
	}

	if loss := e.expectedLoss.Load(); loss >= 0 && loss != e.lossSet {
		if e.enc.SetExpectedLoss(int(loss)) == nil {
			e.lossSet = loss
		}
	}
	ts := e.ts
	e.ts += uint32(len(frame)) // the timestamp counts through silence
	if send {
		n, err := e.enc.Encode(frame, e.payload)
		if err == nil && e.cfg.OnPacket != nil {
			e.cfg.OnPacket(voice.Packet{Seq: e.seq, Timestamp: ts, EndOfSpeech: eos, Payload: e.payload[:n]})
		}
		e.seq++
		e.spurt = !eos
	}
	if talking := send && !eos; talking != e.speaking {
		e.speaking = talking
		if e.cfg.OnSpeaking != nil {
			e.cfg.OnSpeaking(0, talking)
		}
	}
	if f := e.dumpFrame; f != nil {
		e.dumpFrame = nil
		f.n = len(frame)
		copy(f.far[:], e.farHist[len(e.farHist)-f.n:])
		e.dump.put(f)
	}
}

// nextPeriod returns the next device period to play, mixing a new frame when the last one has
// been played, and queues it as the echo canceller's reference. When nobody is heard the frame's
// second period is left out, so that the next mix, and the first frame of a talk spurt with it,
// comes a period sooner.
func (e *Engine) nextPeriod() []int16 {
	n := pcm.PeriodSamples * e.outCh
	if e.outPos >= len(e.out) {
		e.mixMode()
		e.outPos = 0
		if !e.mixFrame() {
			e.outPos = len(e.out) - n
		}
	}
	p := e.out[e.outPos : e.outPos+n]
	e.outPos += n
	e.played(p)
	return p
}

// played records a period written to the speaker: the echo canceller's reference, and the last
// frame's worth of it for the AEC dump.
func (e *Engine) played(p []int16) {
	if e.outCh == 2 {
		for i := range e.mono {
			e.mono[i] = int16((int32(p[2*i]) + int32(p[2*i+1])) / 2)
		}
		p = e.mono
	}
	for b := 0; b < len(p); b += blockSamples {
		_ = e.apm.Playback(p[b : b+blockSamples])
	}
	if e.dump != nil {
		n := copy(e.farHist[:], e.farHist[len(p):])
		copy(e.farHist[n:], p)
	}
}

// mixFrame runs the playback path into e.out: received packets into the jitter buffers, one
// frame from each sender, placed (positional voice), the mix. A positional sender beyond the
// audible distance is not decoded: its jitter buffer moves on, its frame is counted as culled.
// It reports whether anything was heard or a sender's speaking state is still open; otherwise
// e.out is silence.
func (e *Engine) mixFrame() bool {
	e.applyRemovals()
	e.rx.drain(e.pushFn)

	now := e.now()
	e.inputs = e.inputs[:0]
	var loss float64
	heard, coming := false, false
	for _, s := range e.order {
		in := e.place(s)
		samples := e.decode(s, now, s.outOfRange)
		if samples != nil && e.cfg.Received != nil && e.cfg.Received(s.id, samples) {
			samples = nil
		}
		heard = heard || samples != nil || s.ch.Speaking()
		coming = coming || !s.jb.Idle()
		in.Samples = samples
		e.inputs = append(e.inputs, in)
		loss = max(loss, s.jb.Stats().LossFraction)
	}
	e.lossReport.Store(math.Float64bits(loss))
	e.mixQuiet = !heard && !coming
	if e.outCh == 2 {
		e.mix.MixStereo(e.out, e.inputs)
	} else {
		e.mix.Mix(e.out, e.inputs)
	}
	if e.cfg.OnSpeaking != nil {
		for _, ev := range e.mix.Events() {
			e.cfg.OnSpeaking(ev.Channel.ID(), ev.Speaking)
		}
	}
	return heard
}

// place returns a sender's mixer input for this frame, its samples left to fill: centred unless
// positional voice is on, the sender is not marked non-positional and its position is known; then
// its ear gains, and s.outOfRange when it is beyond the audible distance.
func (e *Engine) place(s *sender) mixer.Input {
	in := mixer.Input{Channel: s.ch}
	s.outOfRange = false
	e.sendersMu.Lock()
	defer e.sendersMu.Unlock()
	st := e.settings[s.id]
	if !e.positional || st == nil || !st.hasPos || st.nonPositional {
		return in
	}
	in.Positional = true
	var audible bool
	in.Left, in.Right, audible = spatial.Gains(e.listener, e.props, st.pos)
	s.outOfRange = !audible
	return in
}

// decode produces a sender's next frame (the engine's: len(e.out)/e.outCh samples), or nil for silence. The sender's
// frames need not be the engine's: each packet is decoded whole, at the duration its TOC says,
// into the sender's pending samples, and the jitter buffer is popped until a tick's worth is
// there. A culled sender's frames are taken from its jitter buffer and dropped undecoded
// (counted); the decoder starts over, without concealment, at the first frame it decodes again.
func (e *Engine) decode(s *sender, now time.Duration, culled bool) []int16 {
	n := len(e.out) / e.outCh
	s.frame = s.frameBuf[:n]
	if culled {
		got := s.fill
		s.fill, s.live, s.playing = 0, false, false
		for got < n {
			f := s.jb.Pop(now)
			if f.Kind == jitter.Idle {
				break
			}
			e.culled.Add(1)
			got += f.Samples
		}
		return nil
	}
	for s.fill < n {
		f := s.jb.Pop(now)
		if f.Kind == jitter.Idle {
			break
		}
		dst := s.pcm[s.fill : s.fill+f.Samples]
		if e.decodeFrame(s, f, dst) {
			s.live = true
		} else {
			clear(dst)
		}
		s.fill += f.Samples
	}
	if s.fill == 0 {
		s.live = false
		return nil
	}
	if s.fill < n { // the spurt ended inside the tick
		clear(s.pcm[s.fill:n])
		s.fill = n
	}
	live := s.live
	copy(s.frame, s.pcm[:n])
	s.fill = copy(s.pcm, s.pcm[n:s.fill])
	s.live = s.live && s.fill > 0
	if !live {
		return nil
	}
	return s.frame
}

// decodeFrame decodes one frame the jitter buffer gave into dst (its length the frame's) and
// reports whether it holds audio; false leaves dst for the caller to silence.
func (e *Engine) decodeFrame(s *sender, f jitter.Frame, dst []int16) bool {
	switch f.Kind {
	case jitter.Play:
		got, err := s.dec.Decode(f.Payload, s.pcm[s.fill:])
		if err != nil || got != len(dst) {
			return e.conceal(s, dst)
		}
		s.playing = true
		s.fading = f.EndOfSpeech
		if f.EndOfSpeech {
			fadeOut(dst)
		}
		return true
	case jitter.FEC:
		if s.fading {
			return false
		}
		if err := s.dec.DecodeFEC(f.Payload, dst); err != nil {
			return e.conceal(s, dst)
		}
		return true
	case jitter.Conceal:
		if s.fading || !s.playing {
			return false // after an end-of-speech marker the far end faded out: no concealment
		}
		return e.conceal(s, dst)
	}
	return false
}

func (e *Engine) conceal(s *sender, dst []int16) bool {
	return s.dec.Conceal(dst) == nil
}

// fadeOut ramps a frame linearly down to silence.
func fadeOut(frame []int16) {
	n := int32(len(frame))
	for i, v := range frame {
		frame[i] = int16(int32(v) * (n - int32(i)) / n)
	}
}

// pushQueued moves one received packet into its sender's jitter buffer.
func (e *Engine) pushQueued(q *queued) {
	s := e.senders[q.sender]
	if s == nil {
		s = e.addSender(q.sender)
		if s == nil {
			return
		}
	}
	n, err := codec.PacketSamples(q.pkt.Payload)
	if err != nil {
		return // not an Opus packet: nothing to play
	}
	q.pkt.Samples = n
	if !q.pkt.EndOfSpeech {
		s.fading = false // a new talk spurt
	}
	_ = s.jb.Push(q.pkt, q.arrival) // only an oversized payload fails, and the queue refuses those
}

// addSender makes a sender's playback path on its first packet (this allocates, once).
func (e *Engine) addSender(id uint64) *sender {
	dec, err := codec.NewDecoder()
	if err != nil {
		return nil
	}
	s := &sender{id: id, jb: jitter.New(e.opts.Jitter), dec: dec, ch: e.mix.Add(id),
		pcm: make([]int16, maxPacketSamples+pcm.FrameSamples), frameBuf: make([]int16, pcm.FrameSamples)}
	e.sendersMu.Lock()
	st := e.settingsLocked(id)
	st.ch = s.ch
	s.ch.SetVolume(st.volume)
	s.ch.SetMuted(st.muted)
	e.sendersMu.Unlock()
	e.senders[id] = s
	e.order = append(e.order, s)
	return s
}

// applyRemovals forgets the senders RemoveSender named.
func (e *Engine) applyRemovals() {
	e.sendersMu.Lock()
	if len(e.removed) == 0 {
		e.sendersMu.Unlock()
		return
	}
	for _, id := range e.removed {
		s := e.senders[id]
		if s == nil {
			continue
		}
		delete(e.senders, id)
		e.mix.Remove(s.ch)
		for i, o := range e.order {
			if o == s {
				e.order = append(e.order[:i], e.order[i+1:]...)
				break
			}
		}
	}
	e.removed = e.removed[:0]
	e.sendersMu.Unlock()
}
