package core

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"sdkpp/core/callbacks"
	"sdkpp/core/voice"
)

// callState is the Client's voice calls and the settings that apply to all of them, in a
// registry of core/voice with its own lock (tests set its engine factory). Lock order: the
// registry's lock, then a voice.Call's lock, then Client.mu (call events post handlers); the
// registry's lock is never taken while holding a call's lock or Client.mu.
type callState struct {
	reg           voice.Registry[*callHooks]
	speakerWarned sync.Once
}

// callHooks are the game's callbacks for one call.
type callHooks struct {
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
	newEngine, tune := c.calls.reg.Factory()
	e := &callHooks{}
	e.last.status = CallStatusJoining // voice.Start returns the call Joining
	_, err := c.calls.reg.Start(lobbyID, func(set voice.Settings) (*voice.Entry[*callHooks], error) {
		c.voice.CallStarted.Store(true)
		cfg := c.callConfig(lobbyID, self, gw.Send, e, set, received, captured)
		cfg.NewEngine = newEngine
		if tune != nil {
			tune(&cfg)
		}
		call, err := voice.Start(cfg)
		if err != nil {
			return nil, err
		}
		set.ApplyTo(call.Engine())
		for _, r := range []func(){releaseOf(received), releaseOf(captured)} {
			if r != nil {
				e.audio = append(e.audio, c.scope.NewScope(r)) // endEntry closes them after End
			}
		}
		started = true
		return &voice.Entry[*callHooks]{Call: call, Hooks: e}, nil
	})
	switch {
	case errors.Is(err, voice.ErrInCall):
		c.logf(LoggingSeverityWarning, "StartCall(%d): already in that call", lobbyID)
		return nil
	case err != nil:
		c.logf(LoggingSeverityError, "StartCall(%d): %v", lobbyID, err)
		return nil
	}
	return &Call{c: c, lobby: lobbyID}
}

// callConfig is the configuration of a new call in lobbyID: the engine's hooks, the settings set
// applies and the events that post the game's handlers of e.
func (c *Client) callConfig(lobbyID, self uint64, send func(ctx context.Context, op int, d any) error, e *callHooks, set voice.Settings,
	received *Callback[ClientUserAudioReceivedCallback], captured *Callback[ClientUserAudioCapturedCallback]) voice.Config {
	ecfg := voice.EngineConfig{InputDevice: set.InputDevice, OutputDevice: set.OutputDevice,
		AecDump: c.voice.AecDumpPrefix(lobbyID, c.clock.Now()),
		Logf:    func(f string, a ...any) { c.voiceLogf(LoggingSeverityInfo, f, a...) },
		OnNoInput: func(silent bool) {
			c.handlers.noAudioInput.Post(func(f ClientNoAudioInputCallback) { f(!silent) })
		},
		OnDevicesChanged: func(in, out []voice.Device) {
			ins, outs := audioDevices(in), audioDevices(out)
			c.handlers.deviceChange.Post(func(f ClientDeviceChangeCallback) { f(ins, outs) })
		},
	}
	if received != nil {
		ecfg.Received = voice.ReceivedHook(received.Fn)
	}
	if captured != nil {
		ecfg.Captured = voice.CapturedHook(captured.Fn)
	}
	return voice.Config{
		LobbyID: lobbyID, UserID: self,
		Send:     send,
		Engine:   ecfg,
		Clock:    c.clock,
		Logf:     func(f string, a ...any) { c.voiceLogf(LoggingSeverityVerbose, f, a...) },
		SelfMute: set.SelfMute, SelfDeaf: set.SelfDeaf,
		Events: voice.Events{
			Status: func(st voice.Status, er voice.Error, d int32) {
				c.mu.Lock()
				e.last.status, e.last.err, e.last.detail = CallStatus(st), CallError(er), d
				c.mu.Unlock()
				e.status.Post(func(f CallOnStatusChanged) { f(CallStatus(st), CallError(er), d) })
			},
			Participant: func(user uint64, added bool) {
				e.participant.Post(func(f CallOnParticipantChanged) { f(user, added) })
				c.handlers.voiceParticipantChanged.Post(func(f ClientVoiceParticipantChangedCallback) { f(lobbyID, user, added) })
			},
			VoiceState: func(user uint64) {
				e.voiceState.Post(func(f CallOnVoiceStateChanged) { f(user) })
			},
			Speaking: func(user uint64, on bool) {
				e.speaking.Post(func(f CallOnSpeakingStatusChanged) { f(user, on) })
			},
		},
	}
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
	c.calls.reg.HandleDispatch(event, data)
}

// callEntry returns a call's hooks, or nil.
func (c *Client) callEntry(lobbyID uint64) *callHooks {
	if e := c.calls.reg.Get(lobbyID); e != nil {
		return e.Hooks
	}
	return nil
}

// GetCall returns the handle of the call in a lobby, or nil.
func (c *Client) GetCall(channelId uint64) *Call {
	if c.calls.reg.Get(channelId) == nil {
		return nil
	}
	return &Call{c: c, lobby: channelId}
}

// GetCalls returns the handles of every call, in lobby order.
func (c *Client) GetCalls() []*Call {
	var out []*Call
	for _, call := range c.calls.reg.Calls() {
		out = append(out, &Call{c: c, lobby: call.LobbyID()})
	}
	return out
}

// EndCall leaves a call and stops it; cb runs (queued) once it has stopped.
func (c *Client) EndCall(channelId uint64, cb Callback[ClientEndCallCallback]) {
	once := c.scope.Once(func() { cb.Fn() }, cb.Release)
	e := c.calls.reg.Take(channelId)
	if e == nil {
		once.Fire(cb.Fn)
		return
	}
	c.endEntry(e, func() { once.Fire(cb.Fn) })
}

// EndCalls leaves and stops every call; cb runs (queued) once all have stopped.
func (c *Client) EndCalls(cb Callback[ClientEndCallsCallback]) {
	once := c.scope.Once(func() { cb.Fn() }, cb.Release)
	var wg sync.WaitGroup
	for _, e := range c.calls.reg.TakeAll() {
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
func (c *Client) endEntry(e *voice.Entry[*callHooks], done func()) {
	h := e.Hooks
	release := func() {
		closeAll(h.audio) // the engine has stopped: no hook runs again
		for _, s := range []*callbacks.Scope{h.status.Take(), h.participant.Take(), h.speaking.Take(), h.voiceState.Take()} {
			if s != nil {
				s.Close()
			}
		}
	}
	if !c.start(func(context.Context) {
		e.Call.End()
		// A one-shot whose release is the work: Run, Reset or the Client's close performs it,
		// each on the game's thread.
		c.scope.Once(nil, release).Fire(nil)
		done()
	}) {
		e.Call.End() // the client is closing, on the game's thread
		release()
		done()
	}
}

// stopCalls ends every call; Close calls it before waiting for the client's goroutines.
func (c *Client) stopCalls() {
	for _, e := range c.calls.reg.TakeAll() {
		e.Call.End()
		closeAll(e.Hooks.audio)
	}
}

// closeAll closes scopes.
func closeAll(scopes []*callbacks.Scope) {
	for _, s := range scopes {
		s.Close()
	}
}

// SetSpeakerMode is deprecated (rule VER-4): routing is automatic on the desktop platforms sdkpp
// runs on. It still works (it does nothing there and reports false) and logs a warning once.
func (c *Client) SetSpeakerMode(speakerMode bool) bool {
	c.calls.speakerWarned.Do(func() {
		c.logf(LoggingSeverityWarning, "SetSpeakerMode is deprecated: audio routing is automatic")
	})
	return false
}
