package core

import (
	"context"
	"encoding/json"

	"sdkpp/core/records"
	"sdkpp/core/rpc"
)

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
		w, err := rc.SettledVoiceSettings(ctx)
		switch {
		case ctx.Err() != nil: // the Client is closing: once reports ClientDestroyed
		case err != nil:
			c.logf(LoggingSeverityWarning, "GetVoiceSettings: %v", err)
			once.Fire(func() { cb.Fn(resultOf(err), nil) })
		case w == nil:
			once.Fire(func() { cb.Fn(success(), nil) })
		default:
			vs := records.VoiceSettingsOf(*w)
			once.Fire(func() { cb.Fn(success(), vs) })
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
		vs := records.VoiceSettingsOf(w)
		return func() { cb.Fn(vs) }
	})
}
