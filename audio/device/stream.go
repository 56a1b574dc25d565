package device

import (
	"errors"
	"fmt"
	"time"

	"sdkpp/audio/ring"
)

// stream is a Stream over miniaudio devices: a capture device, a playback device, or both, each
// with its own callback thread and ring. Its state is guarded by its Context's mutex.
type stream struct {
	ctx   *Context
	rings *rings
	info  StreamInfo

	devices []*cdevice
	closed  bool
}

var (
	_ Stream         = (*stream)(nil)
	_ CapturePauser  = (*stream)(nil)
	_ PlaybackPauser = (*stream)(nil)
	_ PlaybackClock  = (*stream)(nil)
)

// open adds a device of kind k to the stream, with the rings' C side of that kind as its data
// callback, and returns the Info of the device in use. The caller holds the Context's mutex.
func (s *stream) open(list List, k Kind, id string, channels int) (Info, error) {
	info, raw, err := lookup(list, k, id)
	if err != nil {
		return Info{}, err
	}
	cside := s.rings.pside
	if k == Capture {
		cside = s.rings.cside
	}
	d, err := s.ctx.openDevice(k, raw, channels, cside, nil)
	if err != nil {
		return Info{}, err
	}
	s.devices = append(s.devices, d)
	return info, nil
}

// release uninitializes whatever devices the stream has, then closes its rings' C sides.
func (s *stream) release() {
	for _, d := range s.devices {
		d.release()
	}
	s.devices = nil
	s.rings.close()
}

func (s *stream) Capture() *ring.Ring  { return s.rings.capture }
func (s *stream) Playback() *ring.Ring { return s.rings.playback }
func (s *stream) Info() StreamInfo     { return s.info }
func (s *stream) Stats() Stats         { return s.rings.stats() }

// PlaybackTakes reports the playback callback's take clock.
func (s *stream) PlaybackTakes() (uint64, time.Time) { return s.rings.playbackTakes() }

// Start starts the capture device, then the playback device.
func (s *stream) Start() error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	if s.closed {
		return fmt.Errorf("device: start: %w", ErrClosed)
	}
	for _, d := range s.devices {
		if err := d.start(); err != nil {
			return err
		}
	}
	return nil
}

// PauseCapture stops or restarts the capture device; the playback device runs on.
func (s *stream) PauseCapture(paused bool) error { return s.pause(Capture, paused) }

// PausePlayback stops or restarts the playback device; the capture device runs on.
func (s *stream) PausePlayback(paused bool) error { return s.pause(Playback, paused) }

// pause stops or restarts the stream's device of kind k.
func (s *stream) pause(k Kind, paused bool) error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	if s.closed {
		return fmt.Errorf("device: pause %s: %w", k, ErrClosed)
	}
	for _, d := range s.devices {
		if d.kind != k || d.started() != paused {
			continue
		}
		if paused {
			if err := d.stop(); err != nil {
				return fmt.Errorf("device: pause %s: %w", k, err)
			}
		} else if err := d.start(); err != nil {
			return fmt.Errorf("device: resume %s: %w", k, err)
		}
	}
	return nil
}

// Stop stops every device of the stream; their callbacks have returned when it does.
func (s *stream) Stop() error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	if s.closed {
		return fmt.Errorf("device: stop: %w", ErrClosed)
	}
	var errs []error
	for _, d := range s.devices {
		if d.started() {
			if err := d.stop(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops and releases the devices.
func (s *stream) Close() error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	s.closeLocked()
	return nil
}

func (s *stream) closeLocked() {
	if s.closed {
		return
	}
	s.closed = true
	s.release() // Uninit stops a running device first
	delete(s.ctx.streams, s)
}
