package voice

import "sdkpp/core/voice/e2ee"

// This file is the call's local controls: each is applied to the engine at once and read back
// from the call.

// SetSelfMute mutes or unmutes the local player in this call: the engine stops capturing, the
// call stops sending, and the others see the new voice state.
func (c *Call) SetSelfMute(mute bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.selfMute == mute {
		return
	}
	c.selfMute = mute
	c.engine.SetSelfMute(mute)
	c.gate.Store(c.selfMute || c.selfDeaf)
	c.sendStateIfJoinedLocked()
}

// SelfMute reports whether the local player is muted in this call.
func (c *Call) SelfMute() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.selfMute
}

// SetSelfDeaf deafens or undeafens the local player in this call (a deafened player hears
// nothing and sends nothing); the others see the new voice state.
func (c *Call) SetSelfDeaf(deaf bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.selfDeaf == deaf {
		return
	}
	c.selfDeaf = deaf
	c.engine.SetSelfDeaf(deaf)
	c.gate.Store(c.selfMute || c.selfDeaf)
	c.sendStateIfJoinedLocked()
}

// SelfDeaf reports whether the local player is deafened in this call.
func (c *Call) SelfDeaf() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.selfDeaf
}

// sendStateIfJoinedLocked publishes the voice state while the call is live.
func (c *Call) sendStateIfJoinedLocked() {
	if !c.ended && c.status != StatusDisconnected {
		c.sendStateLocked()
	}
}

// SetMode selects voice activity or push-to-talk.
func (c *Call) SetMode(m Mode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode = m
	c.engine.SetMode(m)
}

// Mode returns the input mode.
func (c *Call) Mode() Mode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode
}

// SetPTTActive presses (true) or releases the push-to-talk key; the game calls it.
func (c *Call) SetPTTActive(active bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ptt = active
	c.engine.SetPTTActive(active)
}

// PTTActive reports whether push-to-talk is pressed.
func (c *Call) PTTActive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ptt
}

// SetPTTReleaseDelay sets how long sending goes on after the push-to-talk key is released.
func (c *Call) SetPTTReleaseDelay(ms uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pttDelay = ms
	c.engine.SetPTTReleaseDelay(ms)
}

// PTTReleaseDelay returns the push-to-talk release delay in milliseconds.
func (c *Call) PTTReleaseDelay() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pttDelay
}

// SetVADThreshold sets the voice activity threshold (dBFS, clamped to -100..0), or lets the
// engine pick it.
func (c *Call) SetVADThreshold(automatic bool, dbfs float32) {
	dbfs = min(max(dbfs, -100), 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vadAuto, c.vadDBFS = automatic, dbfs
	c.engine.SetVADThreshold(automatic, dbfs)
}

// VADThreshold returns the voice activity threshold and whether the engine picks it.
func (c *Call) VADThreshold() (automatic bool, dbfs float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vadAuto, c.vadDBFS
}

// SetLocalMute mutes a participant for the local player only.
func (c *Call) SetLocalMute(userID uint64, mute bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.localMute[userID] = mute
	c.engine.SetLocalMute(userID, mute)
}

// LocalMute reports whether a participant is muted for the local player.
func (c *Call) LocalMute(userID uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.localMute[userID]
}

// SetParticipantVolume sets a participant's volume for the local player (0..200, 100 the default).
func (c *Call) SetParticipantVolume(userID uint64, percent float32) {
	percent = min(max(percent, 0), 200)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.volume[userID] = percent
	c.engine.SetSenderVolume(userID, percent)
}

// ParticipantVolume returns a participant's volume for the local player.
func (c *Call) ParticipantVolume(userID uint64) float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.volume[userID]; ok {
		return v
	}
	return 100
}

// PublicKeys returns the local player's public keys in this call.
func (c *Call) PublicKeys() e2ee.PublicKeys { return c.self.keys }
