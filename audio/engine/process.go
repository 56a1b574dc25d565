package engine

import (
	"math"
	"time"

	"sdkpp/audio/codec"
	"sdkpp/audio/jitter"
	"sdkpp/audio/mixer"
	"sdkpp/audio/pcm"
	"sdkpp/audio/ptt"
	"sdkpp/audio/vad"
	"sdkpp/core/voice"
)

// step runs one 20 ms processing step: frame is what the microphone captured (it is processed in
// place); the result is the frame to hand to playback, valid until the next step. It allocates
// nothing once every sender has been seen.
func (e *Engine) step(frame []int16) []int16 { return e.process(frame, true) }

// process is step; played false says the result will be left out of the playback ring (run
// trims it), so it is not queued as the echo canceller's reference: the reference stays the
// frames the speaker plays, in step with the echo they cause.
func (e *Engine) process(frame []int16, played bool) []int16 {
	if e.dump != nil {
		e.dumpFrame = e.dump.take()
	}
	e.capture(frame)
	out := e.playback(played)
	if f := e.dumpFrame; f != nil {
		e.dumpFrame = nil
		e.dump.put(f)
	}
	return out
}

// capture runs the capture path on one frame.
func (e *Engine) capture(frame []int16) {
	if v := e.inputVolume.Load(); v != 100 {
		for i, s := range frame {
			frame[i] = pcm.Clamp16(int32(s) * v / 100)
		}
	}
	if f := e.dumpFrame; f != nil {
		copy(f.near[:], frame)
	}
	// The canceller and preprocessor work on device periods: their overlap delays the output by
	// a block, and a 10 ms block is half a frame's delay.
	for b, near := e.apm.FrameSamples(), frame; len(near) >= b; near = near[b:] {
		_ = e.apm.Capture(near[:b], near[:b]) // fails only on a wrong frame size or after Close
	}
	if f := e.dumpFrame; f != nil {
		copy(f.out[:], frame)
	}

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
	e.ts += pcm.FrameSamples // the timestamp counts through silence
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
}

// playback runs the playback path: received packets into the jitter buffers, one frame from each
// sender, the mix. It returns the mixed frame, which is also the echo canceller's reference when
// it is played.
func (e *Engine) playback(played bool) []int16 {
	e.applyRemovals()
	e.rx.drain(e.pushFn)

	now := e.now()
	e.inputs = e.inputs[:0]
	var loss float64
	for _, s := range e.order {
		samples := e.decode(s, now)
		if samples != nil && e.cfg.Received != nil && e.cfg.Received(s.id, samples) {
			samples = nil
		}
		e.inputs = append(e.inputs, mixer.Input{Channel: s.ch, Samples: samples})
		loss = max(loss, s.jb.Stats().LossFraction)
	}
	e.lossReport.Store(math.Float64bits(loss))
	e.mix.Mix(e.out, e.inputs)
	if e.cfg.OnSpeaking != nil {
		for _, ev := range e.mix.Events() {
			e.cfg.OnSpeaking(ev.Channel.ID(), ev.Speaking)
		}
	}
	if f := e.dumpFrame; f != nil {
		copy(f.far[:], e.out)
	}
	if played {
		for b, far := e.apm.FrameSamples(), e.out; len(far) >= b; far = far[b:] {
			_ = e.apm.Playback(far[:b])
		}
	}
	return e.out
}

// decode produces a sender's frame for this tick, or nil for silence.
func (e *Engine) decode(s *sender, now time.Duration) []int16 {
	f := s.jb.Pop(now)
	switch f.Kind {
	case jitter.Play:
		n, err := s.dec.Decode(f.Payload, s.pcm)
		if err != nil {
			return e.conceal(s)
		}
		clear(s.pcm[n:])
		s.playing = true
		s.fading = f.EndOfSpeech
		if f.EndOfSpeech {
			fadeOut(s.pcm)
		}
		return s.pcm
	case jitter.FEC:
		if s.fading {
			return nil
		}
		if err := s.dec.DecodeFEC(f.Payload, s.pcm); err != nil {
			return e.conceal(s)
		}
		return s.pcm
	case jitter.Conceal:
		if s.fading || !s.playing {
			return nil // after an end-of-speech marker the far end faded out: no concealment
		}
		return e.conceal(s)
	}
	return nil
}

func (e *Engine) conceal(s *sender) []int16 {
	if err := s.dec.Conceal(s.pcm); err != nil {
		return nil
	}
	return s.pcm
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
	s := &sender{id: id, jb: jitter.New(e.opts.Jitter), dec: dec, ch: e.mix.Add(id), pcm: make([]int16, pcm.FrameSamples)}
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
