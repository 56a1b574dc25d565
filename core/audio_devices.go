package core

import (
	"sdkpp/core/voice"
)

// withEngine runs fn with a call's engine, or a temporary one (core/voice.Registry.WithEngine).
func (c *Client) withEngine(fn func(voice.Engine) error) error {
	return c.calls.reg.WithEngine(c.engineFactory(), fn)
}

// engineFactory is the test hook that makes engines, nil for voice.NewEngine.
func (c *Client) engineFactory() func(voice.EngineConfig) (voice.Engine, error) {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	return c.calls.newEngine
}

func (c *Client) listDevices(cb Callback[func([]*AudioDevice)], list func(voice.Engine) ([]voice.Device, error)) {
	once := c.scope.Once(func() { cb.Fn(nil) }, cb.Release)
	var ds []voice.Device
	if err := c.withEngine(func(e voice.Engine) (err error) { ds, err = list(e); return err }); err != nil {
		c.logf(LoggingSeverityError, "listing audio devices: %v", err)
	}
	out := audioDevices(ds)
	once.Fire(func() { cb.Fn(out) })
}

func (c *Client) currentDevice(cb Callback[func(*AudioDevice)], cur func(voice.Engine) voice.Device) {
	once := c.scope.Once(func() { cb.Fn(&AudioDevice{}) }, cb.Release)
	var d voice.Device
	if err := c.withEngine(func(e voice.Engine) error { d = cur(e); return nil }); err != nil {
		c.logf(LoggingSeverityError, "reading the audio device: %v", err)
	}
	once.Fire(func() { cb.Fn(audioDevices([]voice.Device{d})[0]) })
}

func (c *Client) setDevice(id string, cb Callback[func(*ClientResult)], input bool) {
	once := c.scope.Once(func() { cb.Fn(destroyed()) }, cb.Release)
	if err := c.calls.reg.SetDevice(c.engineFactory(), input, id); err != nil {
		once.Fire(func() { cb.Fn(Failure(ErrorTypeValidationError, "selecting device %q: %v", id, err)) })
		return
	}
	once.Fire(func() { cb.Fn(Success()) })
}
