package core

import (
	"sdkpp/core/records"
	"sdkpp/core/voice"
)

// Call is a handle to one of the player's voice calls (API.md section 4). Once the call has
// ended its getters return defaults and its setters do nothing.
type Call struct {
	c     *Client
	lobby uint64
}

// CallStatus and CallError (generated from api/sdkpp.api) have the values of voice.Status and
// voice.Error, which the call layer reports: TestCallEnumsMatchTheCallLayer holds them together.

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

// GetVADThreshold returns the voice activity threshold.
func (h *Call) GetVADThreshold() *VADThresholdSettings {
	if v := h.v(); v != nil {
		return records.VADThresholdOf(v.VADThreshold())
	}
	return records.VADThresholdOf(true, -60)
}

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
		e.status.Post(func(f CallOnStatusChanged) { f(last.status, last.err, last.detail) })
	}
}

// VoiceStateHandle is a live view of a participant's voice state in a call.
type VoiceStateHandle struct {
	call *Call
	user uint64
}

// state reads the participant's voice state, all false once the call has ended.
func (h *VoiceStateHandle) state() (s struct{ selfMute, selfDeaf bool }) {
	if v := h.call.v(); v != nil {
		s.selfMute, s.selfDeaf, _ = v.VoiceState(h.user)
	}
	return s
}

// audioDevices converts the engine's devices.
func audioDevices(ds []voice.Device) []*AudioDevice {
	out := make([]*AudioDevice, len(ds))
	for i, d := range ds {
		out[i] = records.AudioDeviceOf(d.ID, d.Name, d.IsDefault)
	}
	return out
}
