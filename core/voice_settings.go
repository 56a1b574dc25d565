package core

import (
	"context"
	"encoding/json"
	"errors"

	"sdkpp/core/rpc"
)

// voiceSettingsOf converts the desktop client's wire form.
func voiceSettingsOf(w rpc.VoiceSettings) *VoiceSettings {
	mode := VoiceInputModeTypeVoiceActivity
	if w.Mode.Type == rpc.VoiceModePushToTalk {
		mode = VoiceInputModeTypePushToTalk
	}
	return &VoiceSettings{
		selfMute: w.Mute, selfDeaf: w.Deaf, inputMode: mode, pttKey: w.Mode.Shortcut,
		inputVolume: w.Input.Volume, outputVolume: w.Output.Volume,
		echoCancellation: w.EchoCancellation, noiseSuppression: w.NoiseSuppression,
		noiseCancellation: w.NoiseCancellation, automaticGainControl: w.AutomaticGainControl,
	}
}

// GetVoiceSettings reads the voice settings of the locally running desktop client. It waits for
// the connection attempt under way; when no desktop client answers, cb gets a successful result
// and nil settings. A link lost while reading, or a refusal, fails the result.
func (c *Client) GetVoiceSettings(cb Callback[ClientGetVoiceSettingsCallback]) {
	once := resultOnce1(c, cb)
	rc, err := c.rpc.Client()
	if err != nil {
		once.Fire(func() { cb.Fn(resultOf(err), nil) })
		return
	}
	c.start(func(ctx context.Context) {
		st, err := rc.Settle(ctx)
		if err != nil {
			return // the Client is closing: once reports ClientDestroyed
		}
		if st != rpc.Connected {
			once.Fire(func() { cb.Fn(Success(), nil) })
			return
		}
		w, err := rc.GetVoiceSettings(ctx)
		switch {
		case errors.Is(err, rpc.ErrNotConnected): // dropped between Settle and the command
			once.Fire(func() { cb.Fn(Success(), nil) })
		case err != nil:
			c.logf(LoggingSeverityWarning, "GetVoiceSettings: %v", err)
			once.Fire(func() { cb.Fn(resultOf(err), nil) })
		default:
			vs := voiceSettingsOf(w)
			once.Fire(func() { cb.Fn(Success(), vs) })
		}
	})
}

// SetVoiceSettingsUpdatedCallback runs cb with the new settings each time the player changes a
// voice setting in the desktop client (VOICE_SETTINGS_UPDATE). The subscription lasts across
// restarts of the desktop client until Close; a new registration replaces the previous one.
func (c *Client) SetVoiceSettingsUpdatedCallback(cb Callback[ClientVoiceSettingsUpdatedCallback]) {
	c.subscribeRPC(subVoiceSettings, rpc.EvtVoiceSettingsUpdate, c.scope.NewScope(cb.Release), func(data json.RawMessage) func() {
		var w rpc.VoiceSettings
		if err := json.Unmarshal(data, &w); err != nil {
			c.logf(LoggingSeverityWarning, "dropped a malformed %s event: %v", rpc.EvtVoiceSettingsUpdate, err)
			return nil
		}
		vs := voiceSettingsOf(w)
		return func() { cb.Fn(vs) }
	})
}
