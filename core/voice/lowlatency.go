package voice

// LowLatencyEngine is an Engine with a low-latency mode (audio/engine's has one). A call on an
// engine without one keeps the setting and sends in the default mode.
type LowLatencyEngine interface {
	// SetLowLatency switches the mode; each path of the engine follows at its next frame.
	SetLowLatency(on bool)
}

// SetLowLatency switches the call's low-latency mode (off by default): the engine sends 10 ms
// frames instead of 20, in Opus's restricted low-delay mode (2.5 ms of look-ahead instead of 6.5,
// no in-band FEC: losses are concealed), and mixes 10 ms at a time. The others hear the player
// whatever their own mode: receivers follow each sender's frame size.
func (c *Call) SetLowLatency(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lowLatency = on
	if le, ok := c.engine.(LowLatencyEngine); ok {
		le.SetLowLatency(on)
	}
}

// LowLatency reports whether the call's low-latency mode is on.
func (c *Call) LowLatency() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lowLatency
}
