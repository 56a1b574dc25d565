package core

import (
	"fmt"

	"sdkpp/core/voice"
)

// withEngine runs fn with an engine: a call's if there is one, else a temporary one that is not
// started (device lists and selection need no running engine).
func (c *Client) withEngine(fn func(voice.Engine) error) error {
	if calls := c.calls.reg.Calls(); len(calls) > 0 {
		return fn(calls[0].Engine())
	}
	c.calls.mu.Lock()
	mk := c.calls.newEngine
	c.calls.mu.Unlock()
	if mk == nil {
		mk = voice.NewEngine
	}
	eng, err := mk(voice.EngineConfig{})
	if err != nil {
		return fmt.Errorf("audio engine: %w", err)
	}
	defer eng.Close()
	return fn(eng)
}

// GetInputDevices lists the input devices; cb runs queued.
func (c *Client) GetInputDevices(cb Callback[ClientGetInputDevicesCallback]) {
	c.listDevices(cb, voice.Engine.InputDevices)
}

// GetOutputDevices lists the output devices; cb runs queued.
func (c *Client) GetOutputDevices(cb Callback[ClientGetOutputDevicesCallback]) {
	c.listDevices(cb, voice.Engine.OutputDevices)
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

// GetCurrentInputDevice reports the input device in use; cb runs queued.
func (c *Client) GetCurrentInputDevice(cb Callback[ClientGetCurrentInputDeviceCallback]) {
	c.currentDevice(cb, voice.Engine.CurrentInputDevice)
}

// GetCurrentOutputDevice reports the output device in use; cb runs queued.
func (c *Client) GetCurrentOutputDevice(cb Callback[ClientGetCurrentOutputDeviceCallback]) {
	c.currentDevice(cb, voice.Engine.CurrentOutputDevice)
}

func (c *Client) currentDevice(cb Callback[func(*AudioDevice)], cur func(voice.Engine) voice.Device) {
	once := c.scope.Once(func() { cb.Fn(&AudioDevice{}) }, cb.Release)
	var d voice.Device
	if err := c.withEngine(func(e voice.Engine) error { d = cur(e); return nil }); err != nil {
		c.logf(LoggingSeverityError, "reading the audio device: %v", err)
	}
	once.Fire(func() { cb.Fn(audioDevices([]voice.Device{d})[0]) })
}

// SetInputDevice selects the input device of every call, present and future; cb runs queued.
func (c *Client) SetInputDevice(deviceId string, cb Callback[ClientSetInputDeviceCallback]) {
	c.setDevice(deviceId, cb, true)
}

// SetOutputDevice selects the output device of every call, present and future; cb runs queued.
func (c *Client) SetOutputDevice(deviceId string, cb Callback[ClientSetOutputDeviceCallback]) {
	c.setDevice(deviceId, cb, false)
}

func (c *Client) setDevice(id string, cb Callback[func(*ClientResult)], input bool) {
	once := c.scope.Once(func() { cb.Fn(destroyed()) }, cb.Release)
	set := voice.Engine.SetOutputDevice
	if input {
		set = voice.Engine.SetInputDevice
	}
	var err error
	if calls := c.calls.reg.Calls(); len(calls) > 0 {
		for _, call := range calls {
			if e := set(call.Engine(), id); e != nil && err == nil {
				err = e
			}
		}
	} else {
		err = c.withEngine(func(e voice.Engine) error { return set(e, id) })
	}
	if err != nil {
		once.Fire(func() { cb.Fn(Failure(ErrorTypeValidationError, "selecting device %q: %v", id, err)) })
		return
	}
	c.setAll(func(s *voice.Settings) {
		if input {
			s.InputDevice = id
		} else {
			s.OutputDevice = id
		}
	}, nil)
	once.Fire(func() { cb.Fn(Success()) })
}
