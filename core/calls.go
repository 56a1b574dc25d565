package core

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"sdkpp/core/callbacks"
	"sdkpp/core/voice"
)

// callState is the Client's voice calls and audio settings; mu guards it. Lock order: a
// voice.Call's lock, then Client.mu (call events post handlers); mu is never held while calling
// into a voice.Call that could take its lock and then Client.mu.
type callState struct {
	mu       sync.Mutex
	calls    map[uint64]*callEntry
	muteAll  bool
	deafAll  bool
	inVol    float32 // 0..100
	outVol   float32 // 0..200
	inDev    string
	outDev   string
	noInput  float32
	settings struct{ aec, ns, agc, nc bool }

	participant handlerSlot[ClientVoiceParticipantChangedCallback]
	devices     handlerSlot[ClientDeviceChangeCallback]
	noInputCb   handlerSlot[ClientNoAudioInputCallback]

	// Test hooks: the engine factory (nil: voice.NewEngine), and a last change to each call's
	// configuration (its relay dialer, signaling, timing).
	newEngine func(voice.EngineConfig) (voice.Engine, error)
	tune      func(*voice.Config)

	speakerWarned sync.Once
}

// callEntry is one call and the game's callbacks for it.
type callEntry struct {
	call        *voice.Call
	status      handlerSlot[CallOnStatusChanged]
	participant handlerSlot[CallOnParticipantChanged]
	speaking    handlerSlot[CallOnSpeakingStatusChanged]
	voiceState  handlerSlot[CallOnVoiceStateChanged]
	// audio holds the raw PCM hooks' releases, run once the call's engine has stopped.
	audio []*callbacks.Scope

	// last is the newest status, for a handler set after it was reported (Client.mu guards it).
	last struct {
		status CallStatus
		err    CallError
		detail int32
	}
}

// initCallsLocked sets the defaults once.
func (s *callState) initLocked() {
	if s.calls == nil {
		s.calls = map[uint64]*callEntry{}
		s.inVol, s.outVol = 100, 100
		s.noInput = -100
		s.settings.aec, s.settings.ns, s.settings.agc = true, true, true
	}
}

// StartCall joins the voice call of a lobby the player is in and returns its handle, or nil if
// the player is already in that call or the client is not ready.
func (c *Client) StartCall(lobbyId uint64) *Call {
	return c.startCall(lobbyId, nil, nil)
}

// StartCallWithAudioCallbacks is StartCall with raw PCM hooks. Both run directly on the SDK's
// audio thread for every 20 ms frame (they are not queued): received sees each participant's
// decoded frame and may mute it, captured sees each captured frame before it is encoded. Each
// must copy what it needs and return at once.
func (c *Client) StartCallWithAudioCallbacks(lobbyId uint64, received Callback[ClientUserAudioReceivedCallback], captured Callback[ClientUserAudioCapturedCallback]) *Call {
	return c.startCall(lobbyId, &received, &captured)
}

func (c *Client) startCall(lobbyID uint64, received *Callback[ClientUserAudioReceivedCallback], captured *Callback[ClientUserAudioCapturedCallback]) *Call {
	// The hooks' game data is released when the call ends, or now when it does not start.
	started := false
	defer func() {
		if !started {
			for _, r := range []func(){releaseOf(received), releaseOf(captured)} {
				if r != nil {
					r()
				}
			}
		}
	}()
	c.mu.Lock()
	gw, closed := c.conn.gw, c.closed
	c.mu.Unlock()
	self := c.users.Current()
	if closed || gw == nil || self == 0 || lobbyID == 0 {
		c.logf(LoggingSeverityError, "StartCall(%d): the client is not ready", lobbyID)
		return nil
	}
	s := &c.calls
	s.mu.Lock()
	s.initLocked()
	if s.calls[lobbyID] != nil {
		s.mu.Unlock()
		c.logf(LoggingSeverityWarning, "StartCall(%d): already in that call", lobbyID)
		return nil
	}
	e := &callEntry{}
	e.last.status = CallStatusJoining // voice.Start returns the call Joining
	c.voice.callStarted.Store(true)
	ecfg := voice.EngineConfig{InputDevice: s.inDev, OutputDevice: s.outDev,
		AecDump: c.aecDumpPrefix(lobbyID),
		Logf:    func(f string, a ...any) { c.voiceLogf(LoggingSeverityInfo, f, a...) },
		OnNoInput: func(silent bool) {
			postHandler(c, &c.calls.noInputCb, func(f ClientNoAudioInputCallback) { f(!silent) })
		},
		OnDevicesChanged: func(in, out []voice.Device) {
			ins, outs := audioDevices(in), audioDevices(out)
			postHandler(c, &c.calls.devices, func(f ClientDeviceChangeCallback) { f(ins, outs) })
		},
	}
	if received != nil && received.Fn != nil {
		fn := received.Fn
		// The engine calls Received from its one processing goroutine: one flag, allocated
		// here, serves every frame.
		mute := new(bool)
		ecfg.Received = func(sender uint64, samples []int16) bool {
			*mute = false
			fn(sender, samples, uint64(len(samples)), 48000, 1, mute)
			return *mute
		}
	}
	if captured != nil && captured.Fn != nil {
		fn := captured.Fn
		ecfg.Captured = func(samples []int16) { fn(samples, uint64(len(samples)), 48000, 1) }
	}
	cfg := voice.Config{
		LobbyID: lobbyID, UserID: self,
		Send:      gw.Send,
		NewEngine: s.newEngine,
		Engine:    ecfg,
		Clock:     c.clock,
		Logf:      func(f string, a ...any) { c.voiceLogf(LoggingSeverityVerbose, f, a...) },
		SelfMute:  s.muteAll, SelfDeaf: s.deafAll,
		Events: voice.Events{
			Status: func(st voice.Status, er voice.Error, d int32) {
				c.mu.Lock()
				e.last.status, e.last.err, e.last.detail = CallStatus(st), CallError(er), d
				c.mu.Unlock()
				postHandler(c, &e.status, func(f CallOnStatusChanged) { f(CallStatus(st), CallError(er), d) })
			},
			Participant: func(user uint64, added bool) {
				postHandler(c, &e.participant, func(f CallOnParticipantChanged) { f(user, added) })
				postHandler(c, &c.calls.participant, func(f ClientVoiceParticipantChangedCallback) { f(lobbyID, user, added) })
			},
			VoiceState: func(user uint64) {
				postHandler(c, &e.voiceState, func(f CallOnVoiceStateChanged) { f(user) })
			},
			Speaking: func(user uint64, on bool) {
				postHandler(c, &e.speaking, func(f CallOnSpeakingStatusChanged) { f(user, on) })
			},
		},
	}
	if s.tune != nil {
		s.tune(&cfg)
	}
	call, err := voice.Start(cfg)
	if err != nil {
		s.mu.Unlock()
		c.logf(LoggingSeverityError, "StartCall(%d): %v", lobbyID, err)
		return nil
	}
	eng := call.Engine()
	eng.SetInputVolume(s.inVol)
	eng.SetOutputVolume(s.outVol)
	eng.SetNoInputThreshold(s.noInput)
	eng.SetEchoCancellation(s.settings.aec)
	eng.SetNoiseSuppression(s.settings.ns)
	eng.SetAutoGain(s.settings.agc)
	eng.SetNoiseCancellation(s.settings.nc)
	for _, r := range []func(){releaseOf(received), releaseOf(captured)} {
		if r != nil {
			e.audio = append(e.audio, c.scope.NewScope(r)) // endCall closes them after End
		}
	}
	started = true
	s.calls[lobbyID] = e
	e.call = call
	s.mu.Unlock()
	return &Call{c: c, lobby: lobbyID}
}

// releaseOf returns a callback's release function, or nil.
func releaseOf[F any](cb *Callback[F]) func() {
	if cb == nil {
		return nil
	}
	return cb.Release
}

// onVoiceDispatch hands a voice dispatch to the calls.
func (c *Client) onVoiceDispatch(event string, data json.RawMessage) {
	for _, call := range c.liveCalls() {
		call.HandleDispatch(event, data)
	}
}

// onVoiceSignalingLost tells every call that the gateway session dropped (rule ST-4).
func (c *Client) onVoiceSignalingLost() {
	for _, call := range c.liveCalls() {
		call.SignalingLost()
	}
}

// liveCalls returns the calls, in lobby order.
func (c *Client) liveCalls() []*voice.Call {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	var out []*voice.Call
	for _, e := range c.calls.calls {
		out = append(out, e.call)
	}
	slices.SortFunc(out, func(a, b *voice.Call) int { return cmpU64(a.LobbyID(), b.LobbyID()) })
	return out
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// entry returns a call's entry, or nil.
func (c *Client) callEntry(lobbyID uint64) *callEntry {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	return c.calls.calls[lobbyID]
}

// GetCall returns the handle of the call in a lobby, or nil.
func (c *Client) GetCall(channelId uint64) *Call {
	if c.callEntry(channelId) == nil {
		return nil
	}
	return &Call{c: c, lobby: channelId}
}

// GetCalls returns the handles of every call, in lobby order.
func (c *Client) GetCalls() []*Call {
	var out []*Call
	for _, call := range c.liveCalls() {
		out = append(out, &Call{c: c, lobby: call.LobbyID()})
	}
	return out
}

// EndCall leaves a call and stops it; cb runs (queued) once it has stopped.
func (c *Client) EndCall(channelId uint64, cb Callback[ClientEndCallCallback]) {
	once := c.scope.Once(func() { cb.Fn() }, cb.Release)
	c.calls.mu.Lock()
	e := c.calls.calls[channelId]
	delete(c.calls.calls, channelId)
	c.calls.mu.Unlock()
	if e == nil {
		once.Fire(cb.Fn)
		return
	}
	c.endEntry(e, func() { once.Fire(cb.Fn) })
}

// EndCalls leaves and stops every call; cb runs (queued) once all have stopped.
func (c *Client) EndCalls(cb Callback[ClientEndCallsCallback]) {
	once := c.scope.Once(func() { cb.Fn() }, cb.Release)
	c.calls.mu.Lock()
	entries := c.calls.calls
	c.calls.calls = map[uint64]*callEntry{}
	c.calls.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Add(1)
		c.endEntry(e, wg.Done)
	}
	if !c.start(func(context.Context) { wg.Wait(); once.Fire(cb.Fn) }) {
		wg.Wait()
		once.Fire(cb.Fn)
	}
}

// endEntry ends a call off the caller's thread (End waits for the leave to be written) and then
// releases its callbacks on the game's thread, in the next RunCallbacks: a free function never
// runs on a thread of the SDK's (a managed runtime would attach that thread and, like Mono, wait
// for it at exit). done runs after the release is queued.
func (c *Client) endEntry(e *callEntry, done func()) {
	release := func() {
		closeAll(e.audio) // the engine has stopped: no hook runs again
		for _, s := range []*callbacks.Scope{e.status.take(), e.participant.take(), e.speaking.take(), e.voiceState.take()} {
			if s != nil {
				s.Close()
			}
		}
	}
	if !c.start(func(context.Context) {
		e.call.End()
		// A one-shot whose release is the work: Run, Reset or the Client's close performs it,
		// each on the game's thread.
		c.scope.Once(nil, release).Fire(nil)
		done()
	}) {
		e.call.End() // the client is closing, on the game's thread
		release()
		done()
	}
}

// stopCalls ends every call; Close calls it before waiting for the client's goroutines.
func (c *Client) stopCalls() {
	c.calls.mu.Lock()
	entries := c.calls.calls
	c.calls.calls = nil
	c.calls.mu.Unlock()
	for _, e := range entries {
		e.call.End()
		closeAll(e.audio)
	}
}

// closeAll closes scopes.
func closeAll(scopes []*callbacks.Scope) {
	for _, s := range scopes {
		s.Close()
	}
}

// SetVoiceParticipantChangedCallback sets the handler of participants joining and leaving any of
// the player's calls.
func (c *Client) SetVoiceParticipantChangedCallback(cb Callback[ClientVoiceParticipantChangedCallback]) {
	setHandler(c, &c.calls.participant, cb)
}

// forEachCall applies fn to every call.
func (c *Client) forEachCall(fn func(*voice.Call)) {
	for _, call := range c.liveCalls() {
		fn(call)
	}
}

// SetSelfMuteAll mutes or unmutes the player in every call, present and future.
func (c *Client) SetSelfMuteAll(mute bool) {
	c.calls.mu.Lock()
	c.calls.muteAll = mute
	c.calls.mu.Unlock()
	c.forEachCall(func(v *voice.Call) { v.SetSelfMute(mute) })
}

// GetSelfMuteAll reports the SetSelfMuteAll setting.
func (c *Client) GetSelfMuteAll() bool {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	return c.calls.muteAll
}

// SetSelfDeafAll deafens or undeafens the player in every call, present and future.
func (c *Client) SetSelfDeafAll(deaf bool) {
	c.calls.mu.Lock()
	c.calls.deafAll = deaf
	c.calls.mu.Unlock()
	c.forEachCall(func(v *voice.Call) { v.SetSelfDeaf(deaf) })
}

// GetSelfDeafAll reports the SetSelfDeafAll setting.
func (c *Client) GetSelfDeafAll() bool {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	return c.calls.deafAll
}

// SetInputVolume sets the microphone volume of every call (0..100).
func (c *Client) SetInputVolume(inputVolume float32) {
	v := min(max(inputVolume, 0), 100)
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.inVol = v
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetInputVolume(v) })
}

// GetInputVolume returns the microphone volume (0..100).
func (c *Client) GetInputVolume() float32 {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	c.calls.initLocked()
	return c.calls.inVol
}

// SetOutputVolume sets the playback volume of every call (0..200).
func (c *Client) SetOutputVolume(outputVolume float32) {
	v := min(max(outputVolume, 0), 200)
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.outVol = v
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetOutputVolume(v) })
}

// GetOutputVolume returns the playback volume (0..200).
func (c *Client) GetOutputVolume() float32 {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	c.calls.initLocked()
	return c.calls.outVol
}

// SetNoAudioInputThreshold sets the level (dBFS) below which the input counts as silent.
func (c *Client) SetNoAudioInputThreshold(dBFSThreshold float32) {
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.noInput = dBFSThreshold
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetNoInputThreshold(dBFSThreshold) })
}

// SetNoAudioInputCallback sets the handler of the input going silent and coming back.
func (c *Client) SetNoAudioInputCallback(cb Callback[ClientNoAudioInputCallback]) {
	setHandler(c, &c.calls.noInputCb, cb)
}

// SetDeviceChangeCallback sets the handler of devices appearing and disappearing.
func (c *Client) SetDeviceChangeCallback(cb Callback[ClientDeviceChangeCallback]) {
	setHandler(c, &c.calls.devices, cb)
}

// SetEchoCancellation turns echo cancellation on or off in every call (default on).
func (c *Client) SetEchoCancellation(on bool) {
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.settings.aec = on
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetEchoCancellation(on) })
}

// SetNoiseSuppression turns noise suppression on or off in every call (default on).
func (c *Client) SetNoiseSuppression(on bool) {
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.settings.ns = on
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetNoiseSuppression(on) })
}

// SetNoiseCancellation turns noise cancellation on or off in every call (default off): the noise
// suppressor at its strongest (-45 dB instead of -15 dB). While on, it replaces noise suppression.
func (c *Client) SetNoiseCancellation(on bool) {
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.settings.nc = on
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetNoiseCancellation(on) })
}

// SetAutomaticGainControl turns automatic gain control on or off in every call (default on).
func (c *Client) SetAutomaticGainControl(on bool) {
	c.calls.mu.Lock()
	c.calls.initLocked()
	c.calls.settings.agc = on
	c.calls.mu.Unlock()
	c.forEachCall(func(call *voice.Call) { call.Engine().SetAutoGain(on) })
}

// SetSpeakerMode is deprecated (rule VER-4): routing is automatic on the desktop platforms sdkpp
// runs on. It still works (it does nothing there and reports false) and logs a warning once.
func (c *Client) SetSpeakerMode(speakerMode bool) bool {
	c.calls.speakerWarned.Do(func() {
		c.logf(LoggingSeverityWarning, "SetSpeakerMode is deprecated: audio routing is automatic")
	})
	return false
}
