package core

import (
	"sdkpp/core/voice"
)

func (c *Client) listDevices(cb Callback[func([]*AudioDevice)], list func(voice.Engine) ([]voice.Device, error)) {
	once := c.scope.Once(func() { cb.Fn(nil) }, cb.Release)
	var ds []voice.Device
	if err := c.calls.reg.WithEngine(func(e voice.Engine) (err error) { ds, err = list(e); return err }); err != nil {
		c.logf(LoggingSeverityError, "listing audio devices: %v", err)
	}
	out := audioDevices(ds)
	once.Fire(func() { cb.Fn(out) })
}

func (c *Client) currentDevice(cb Callback[func(*AudioDevice)], cur func(voice.Engine) voice.Device) {
	once := c.scope.Once(func() { cb.Fn(&AudioDevice{}) }, cb.Release)
	var d voice.Device
	if err := c.calls.reg.WithEngine(func(e voice.Engine) error { d = cur(e); return nil }); err != nil {
		c.logf(LoggingSeverityError, "reading the audio device: %v", err)
	}
	once.Fire(func() { cb.Fn(audioDevices([]voice.Device{d})[0]) })
}

func (c *Client) setDevice(id string, cb Callback[func(*ClientResult)], input bool) {
	once := c.scope.Once(func() { cb.Fn(destroyed()) }, cb.Release)
	if err := c.calls.reg.SetDevice(input, id); err != nil {
		once.Fire(func() { cb.Fn(failure(ErrorTypeValidationError, "selecting device %q: %v", id, err)) })
		return
	}
	once.Fire(func() { cb.Fn(success()) })
}
