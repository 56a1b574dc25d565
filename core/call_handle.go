package core

import "sdkpp/core/voice"

// Call is a handle to one of the player's voice calls (API.md section 4). Once the call has
// ended its getters return defaults and its setters do nothing.
type Call struct {
	c     *Client
	lobby uint64
}

// CallStatus and CallError (generated from api/sdkpp.api) have the values of voice.Status and
// voice.Error, which the call layer reports: TestCallEnumsMatchTheCallLayer holds them together.

// Clone returns another handle to the same call.
func (h *Call) Clone() *Call { v := *h; return &v }

// v returns the live call, or nil.
func (h *Call) v() *voice.Call {
	if e := h.c.calls.reg.Get(h.lobby); e != nil {
		return e.Call
	}
	return nil
}

// get reads the live call with f, or returns def once the call has ended.
func get[T any](h *Call, def T, f func(*voice.Call) T) T {
	if v := h.v(); v != nil {
		return f(v)
	}
	return def
}

// do applies f to the live call, if the call has not ended.
func (h *Call) do(f func(*voice.Call)) {
	if v := h.v(); v != nil {
		f(v)
	}
}

// GetStatus returns the call's status; Disconnected once it has ended.
func (h *Call) GetStatus() CallStatus {
	if v := h.v(); v != nil {
		return CallStatus(v.Status())
	}
	return CallStatusDisconnected
}

// GetChannelId returns the lobby id of the call.
func (h *Call) GetChannelId() uint64 { return h.lobby }

// GetGuildId returns 0: calls are lobby calls.
func (h *Call) GetGuildId() uint64 { return 0 }

// GetParticipants returns the user ids in the call, the player's own included.
func (h *Call) GetParticipants() []uint64 { return get(h, nil, (*voice.Call).Participants) }

// GetVoiceStateHandle returns a participant's voice state, or nil if it is not in the call.
func (h *Call) GetVoiceStateHandle(userId uint64) *VoiceStateHandle {
	v := h.v()
	if v == nil {
		return nil
	}
	if _, _, ok := v.VoiceState(userId); !ok {
		return nil
	}
	return &VoiceStateHandle{call: h.Clone(), user: userId}
}

// GetAudioMode returns voice activity or push-to-talk.
func (h *Call) GetAudioMode() AudioModeType {
	v := h.v()
	switch {
	case v == nil:
		return AudioModeTypeMODE_UNINIT
	case v.Mode() == voice.ModePushToTalk:
		return AudioModeTypeMODE_PTT
	}
	return AudioModeTypeMODE_VAD
}

// SetAudioMode selects voice activity (MODE_VAD) or push-to-talk (MODE_PTT).
func (h *Call) SetAudioMode(audioMode AudioModeType) {
	if v := h.v(); v != nil {
		m := voice.ModeVoiceActivity
		if audioMode == AudioModeTypeMODE_PTT {
			m = voice.ModePushToTalk
		}
		v.SetMode(m)
	}
}

// GetPTTActive reports whether the game holds push-to-talk.
func (h *Call) GetPTTActive() bool { return get(h, false, (*voice.Call).PTTActive) }

// SetPTTActive presses or releases push-to-talk; the game calls it on its key (the SDK has no
// key bindings).
func (h *Call) SetPTTActive(active bool) { h.do(func(v *voice.Call) { v.SetPTTActive(active) }) }

// GetPTTReleaseDelay returns how long sending goes on after push-to-talk is released (ms).
func (h *Call) GetPTTReleaseDelay() uint32 { return get(h, 0, (*voice.Call).PTTReleaseDelay) }

// SetPTTReleaseDelay sets the push-to-talk release delay (ms).
func (h *Call) SetPTTReleaseDelay(releaseDelayMs uint32) {
	h.do(func(v *voice.Call) { v.SetPTTReleaseDelay(releaseDelayMs) })
}

// GetSelfMute reports whether the player is muted in this call.
func (h *Call) GetSelfMute() bool { return get(h, false, (*voice.Call).SelfMute) }

// SetSelfMute mutes or unmutes the player in this call; the others see it.
func (h *Call) SetSelfMute(mute bool) { h.do(func(v *voice.Call) { v.SetSelfMute(mute) }) }

// GetSelfDeaf reports whether the player is deafened in this call.
func (h *Call) GetSelfDeaf() bool { return get(h, false, (*voice.Call).SelfDeaf) }

// SetSelfDeaf deafens or undeafens the player in this call; the others see it.
func (h *Call) SetSelfDeaf(deaf bool) { h.do(func(v *voice.Call) { v.SetSelfDeaf(deaf) }) }

// GetLocalMute reports whether a participant is muted for this player only.
func (h *Call) GetLocalMute(userId uint64) bool {
	return get(h, false, func(v *voice.Call) bool { return v.LocalMute(userId) })
}

// SetLocalMute mutes a participant for this player only.
func (h *Call) SetLocalMute(userId uint64, mute bool) {
	h.do(func(v *voice.Call) { v.SetLocalMute(userId, mute) })
}

// GetParticipantVolume returns a participant's volume for this player (0..200, 100 default).
func (h *Call) GetParticipantVolume(userId uint64) float32 {
	return get(h, 100, func(v *voice.Call) float32 { return v.ParticipantVolume(userId) })
}

// SetParticipantVolume sets a participant's volume for this player (0..200).
func (h *Call) SetParticipantVolume(userId uint64, volume float32) {
	h.do(func(v *voice.Call) { v.SetParticipantVolume(userId, volume) })
}

// GetVADThreshold returns the voice activity threshold.
func (h *Call) GetVADThreshold() *VADThresholdSettings {
	s := &VADThresholdSettings{automatic: true, vadThreshold: -60}
	if v := h.v(); v != nil {
		s.automatic, s.vadThreshold = v.VADThreshold()
	}
	return s
}

// SetVADThreshold sets the voice activity threshold (dBFS, -100..0) or lets the SDK pick it.
func (h *Call) SetVADThreshold(automatic bool, threshold float32) {
	h.do(func(v *voice.Call) { v.SetVADThreshold(automatic, threshold) })
}

// GetVerificationCode (sdkpp) returns the call's end-to-end encryption verification code: 30
// digits in six groups, derived from every participant's public keys. Every participant sees the
// same code while they see the same participants; players compare it out of band to detect a
// service that substituted keys. It changes whenever someone joins or leaves. Empty once ended.
func (h *Call) GetVerificationCode() string { return get(h, "", (*voice.Call).VerificationCode) }

// setCallHandler sets one of the call's handler slots.
func setCallHandler[F any](h *Call, slot func(*callHooks) *handlerSlot[F], cb Callback[F]) {
	e := h.c.callEntry(h.lobby)
	if e == nil {
		if cb.Release != nil {
			cb.Release()
		}
		return
	}
	setHandler(h.c, slot(e), cb)
}

// SetStatusChangedCallback sets the handler of the call's status changes. It is called once at
// once (queued) with the current status, so that a change reported before the game set the
// handler (a refusal arrives quickly) is not missed.
func (h *Call) SetStatusChangedCallback(cb Callback[CallOnStatusChanged]) {
	setCallHandler(h, func(e *callHooks) *handlerSlot[CallOnStatusChanged] { return &e.status }, cb)
	if e := h.c.callEntry(h.lobby); e != nil {
		h.c.mu.Lock()
		last := e.last
		h.c.mu.Unlock()
		postHandler(h.c, &e.status, func(f CallOnStatusChanged) { f(last.status, last.err, last.detail) })
	}
}

// SetParticipantChangedCallback sets the handler of participants joining and leaving the call.
func (h *Call) SetParticipantChangedCallback(cb Callback[CallOnParticipantChanged]) {
	setCallHandler(h, func(e *callHooks) *handlerSlot[CallOnParticipantChanged] { return &e.participant }, cb)
}

// SetSpeakingStatusChangedCallback sets the handler of participants starting and stopping to be heard.
func (h *Call) SetSpeakingStatusChangedCallback(cb Callback[CallOnSpeakingStatusChanged]) {
	setCallHandler(h, func(e *callHooks) *handlerSlot[CallOnSpeakingStatusChanged] { return &e.speaking }, cb)
}

// SetOnVoiceStateChangedCallback sets the handler of participants' self mute and deafen changes.
func (h *Call) SetOnVoiceStateChangedCallback(cb Callback[CallOnVoiceStateChanged]) {
	setCallHandler(h, func(e *callHooks) *handlerSlot[CallOnVoiceStateChanged] { return &e.voiceState }, cb)
}

// VoiceStateHandle is a live view of a participant's voice state in a call.
type VoiceStateHandle struct {
	call *Call
	user uint64
}

// Clone returns another view of the same voice state.
func (h *VoiceStateHandle) Clone() *VoiceStateHandle { v := *h; return &v }

// SelfMute reports whether the participant muted itself.
func (h *VoiceStateHandle) SelfMute() bool {
	if v := h.call.v(); v != nil {
		m, _, _ := v.VoiceState(h.user)
		return m
	}
	return false
}

// SelfDeaf reports whether the participant deafened itself.
func (h *VoiceStateHandle) SelfDeaf() bool {
	if v := h.call.v(); v != nil {
		_, d, _ := v.VoiceState(h.user)
		return d
	}
	return false
}

// VADThresholdSettings is a call's voice activity threshold.
type VADThresholdSettings struct {
	vadThreshold float32
	automatic    bool
}

// AudioDevice is an audio input or output device.
type AudioDevice struct {
	id, name  string
	isDefault bool
}

// Clone returns a copy.
func (a *AudioDevice) Clone() *AudioDevice { v := *a; return &v }

// Equals reports whether two devices are the same.
func (a *AudioDevice) Equals(rhs *AudioDevice) bool { return rhs != nil && *a == *rhs }

// audioDevices converts the engine's devices.
func audioDevices(ds []voice.Device) []*AudioDevice {
	out := make([]*AudioDevice, len(ds))
	for i, d := range ds {
		out[i] = &AudioDevice{id: d.ID, name: d.Name, isDefault: d.IsDefault}
	}
	return out
}
