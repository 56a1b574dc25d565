package device

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gen2brain/malgo"

	"sdkpp/audio/pcm"
	"sdkpp/audio/ring"
)

// stream is a Stream over malgo devices: a capture device, a playback device, or both, each with
// its own callback thread and ring. Its state is guarded by its Context's mutex.
type stream struct {
	ctx   *Context
	rings *rings
	info  StreamInfo

	sides  []*side
	closed bool
}

var (
	_ Stream        = (*stream)(nil)
	_ CapturePauser = (*stream)(nil)
)

// side is one open malgo device.
type side struct {
	kind Kind
	dev  *malgo.Device
	// id is miniaudio's ID of the device, pinned while the device lives because miniaudio reads it
	// through a pointer (nil for the default device).
	id  *malgo.DeviceID
	pin runtime.Pinner
}

// deviceConfig is the malgo configuration of every device: 48 kHz mono S16, LowLatency with 10 ms
// periods, and callbacks of exactly one period.
//
// On PulseAudio a 10 ms stream gets fragments of one period to capture and 7.5 ms of playback
// buffer requested 2.5 ms at a time, so miniaudio keeps up to a period of its own between the
// playback callback and the server to hand out whole periods. Measured on a null sink, letting
// playback callbacks take what the server asks instead cuts the loopback from 17.5 ms to 7.5 ms
// for an onset at the start of a period (12.5 to 9.5 ms at the median of onsets spread over a
// frame) but leaves an engine, which keeps one period in its playback ring, short: its speaker
// underran and its echo canceller lost alignment. That period is what the engine needs.
//
// channels is the playback side's channel count (1, or 2 for interleaved stereo); capture is
// always mono.
func deviceConfig(k Kind, channels int) malgo.DeviceConfig {
	cfg := malgo.DefaultDeviceConfig(malgoKind(k))
	cfg.SampleRate = pcm.SampleRate
	cfg.PerformanceProfile = malgo.LowLatency
	cfg.PeriodSizeInFrames = pcm.PeriodSamples
	cfg.Capture.Format = malgo.FormatS16
	cfg.Capture.Channels = pcm.Channels
	cfg.Playback.Format = malgo.FormatS16
	cfg.Playback.Channels = uint32(max(channels, pcm.Channels))
	cfg.Pulse.StreamNameCapture = "sdkpp voice capture"
	cfg.Pulse.StreamNamePlayback = "sdkpp voice playback"
	return cfg
}

// initDevice opens a malgo device of kind k with the given ID (zero for the default) and data
// callback. The caller holds the Context's mutex.
func initDevice(mctx *malgo.AllocatedContext, k Kind, id malgo.DeviceID, channels int, data malgo.DataProc) (*side, error) {
	sd := &side{kind: k}
	cfg := deviceConfig(k, channels)
	if id != (malgo.DeviceID{}) {
		sd.id = new(malgo.DeviceID)
		*sd.id = id
		sd.pin.Pin(sd.id)
		if k == Capture {
			cfg.Capture.DeviceID = unsafe.Pointer(sd.id)
		} else {
			cfg.Playback.DeviceID = unsafe.Pointer(sd.id)
		}
	}
	dev, err := malgo.InitDevice(mctx.Context, cfg, malgo.DeviceCallbacks{Data: data})
	if err != nil {
		sd.pin.Unpin()
		return nil, fmt.Errorf("device: init %s device: %w", k, err)
	}
	sd.dev = dev
	if got := dev.SampleRate(); got != pcm.SampleRate {
		sd.release()
		return nil, fmt.Errorf("device: %s device runs at %d Hz, want %d", k, got, pcm.SampleRate)
	}
	return sd, nil
}

func (sd *side) release() {
	sd.dev.Uninit()
	sd.pin.Unpin()
}

// open adds a device of kind k to the stream and returns the Info of the device in use.
func (s *stream) open(mctx *malgo.AllocatedContext, list List, k Kind, id string, channels int) (Info, error) {
	info, raw, err := lookup(list, k, id)
	if err != nil {
		return Info{}, err
	}
	// malgo's Go callback is replaced by the C one before the device starts: it never runs.
	sd, err := initDevice(mctx, k, raw, channels, func(_, _ []byte, _ uint32) {})
	if err != nil {
		return Info{}, err
	}
	s.sides = append(s.sides, sd)
	if err := s.rings.attach(sd.dev, k); err != nil {
		return Info{}, err
	}
	return info, nil
}

// release uninitializes whatever devices the stream has, then closes its rings' C sides.
func (s *stream) release() {
	for _, sd := range s.sides {
		sd.release()
	}
	s.sides = nil
	s.rings.close()
}

func (s *stream) Capture() *ring.Ring  { return s.rings.capture }
func (s *stream) Playback() *ring.Ring { return s.rings.playback }
func (s *stream) Info() StreamInfo     { return s.info }
func (s *stream) Stats() Stats         { return s.rings.stats() }

// Start starts the capture device, then the playback device.
func (s *stream) Start() error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	if s.closed {
		return fmt.Errorf("device: start: %w", ErrClosed)
	}
	for _, sd := range s.sides {
		if err := sd.dev.Start(); err != nil {
			return fmt.Errorf("device: start %s device: %w", sd.kind, err)
		}
	}
	return nil
}

// PauseCapture stops or restarts the capture device; the playback device runs on.
func (s *stream) PauseCapture(paused bool) error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	if s.closed {
		return fmt.Errorf("device: pause capture: %w", ErrClosed)
	}
	for _, sd := range s.sides {
		if sd.kind != Capture || sd.dev.IsStarted() != paused {
			continue
		}
		if paused {
			if err := sd.dev.Stop(); err != nil {
				return fmt.Errorf("device: pause capture: %w", err)
			}
		} else if err := sd.dev.Start(); err != nil {
			return fmt.Errorf("device: resume capture: %w", err)
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
	for _, sd := range s.sides {
		if sd.dev.IsStarted() {
			if err := sd.dev.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("device: stop %s device: %w", sd.kind, err))
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
