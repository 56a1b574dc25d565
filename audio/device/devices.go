package device

/*
#include "devices.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/gen2brain/malgo"

	"sdkpp/audio/pcm"
)

// maError turns a miniaudio result into an error (nil for MA_SUCCESS) that names it.
func maError(r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s (miniaudio result %d)", C.GoString(C.sdkpp_result_description(r)), int(r))
}

// cdevice is a miniaudio device opened by devices.c on the Context's own miniaudio context.
type cdevice struct {
	kind Kind
	p    *C.sdkpp_device
	// data is the handle of a Go data callback (loopback measurements), zero for a side's.
	data cgo.Handle
}

// dataProc is a data callback in Go: out and in are the device's buffers of S16 samples (nil for
// the direction the device does not have), frames their length in frames.
type dataProc func(out, in []byte, frames uint32)

// openDevice opens a device of kind k with the given ID (zero for the default) and channels (the
// playback side's 1 or 2; capture is always mono), stopped: 48 kHz S16, the low-latency profile
// with callbacks of exactly one 10 ms period. Its data callback is side's when side is set, else
// data, which then runs on the device thread. The caller holds the Context's mutex.
//
// On PulseAudio a 10 ms stream gets fragments of one period to capture and 7.5 ms of playback
// buffer requested 2.5 ms at a time, so miniaudio keeps up to a period of its own between the
// playback callback and the server to hand out whole periods. Measured on a null sink, letting
// playback callbacks take what the server asks instead cuts the loopback from 17.5 ms to 7.5 ms
// for an onset at the start of a period (12.5 to 9.5 ms at the median of onsets spread over a
// frame) but leaves an engine, which keeps one period in its playback ring, short: its speaker
// underran and its echo canceller lost alignment. That period is what the engine needs.
func (c *Context) openDevice(k Kind, id malgo.DeviceID, channels int, side *C.sdkpp_side, data dataProc) (*cdevice, error) {
	d := &cdevice{kind: k}
	p := C.sdkpp_device_params{
		sample_rate:   pcm.SampleRate,
		period_frames: pcm.PeriodSamples,
		channels:      C.uint32_t(pcm.Channels),
		side:          side,
	}
	if k == Capture {
		p.capture = 1
	} else {
		p.channels = C.uint32_t(max(channels, pcm.Channels))
	}
	var idp *C.uint8_t // copied by sdkpp_device_open
	if id != (malgo.DeviceID{}) {
		idp = (*C.uint8_t)(unsafe.Pointer(&id[0]))
	}
	if data != nil {
		d.data = cgo.NewHandle(data)
		p.go_data = C.uintptr_t(d.data)
	}
	if err := maError(C.sdkpp_device_open(c.cctx, &p, idp, C.uint32_t(len(id)), &d.p)); err != nil {
		d.deleteHandle()
		return nil, fmt.Errorf("device: init %s device: %w", k, err)
	}
	if got := uint32(C.sdkpp_device_sample_rate(d.p)); got != pcm.SampleRate {
		d.release()
		return nil, fmt.Errorf("device: %s device runs at %d Hz, want %d", k, got, pcm.SampleRate)
	}
	return d, nil
}

func (d *cdevice) start() error {
	if err := maError(C.sdkpp_device_start(d.p)); err != nil {
		return fmt.Errorf("device: start %s device: %w", d.kind, err)
	}
	return nil
}

func (d *cdevice) stop() error {
	if err := maError(C.sdkpp_device_stop(d.p)); err != nil {
		return fmt.Errorf("device: stop %s device: %w", d.kind, err)
	}
	return nil
}

func (d *cdevice) started() bool { return C.sdkpp_device_is_started(d.p) != 0 }

// release stops the device if it runs and uninitializes it: its callbacks have ended.
func (d *cdevice) release() {
	C.sdkpp_device_close(d.p)
	d.p = nil
	d.deleteHandle()
}

func (d *cdevice) deleteHandle() {
	if d.data != 0 {
		d.data.Delete()
		d.data = 0
	}
}

// sdkppDeviceData runs a Go data callback (the handle of a dataProc) on a device thread.
//
//export sdkppDeviceData
func sdkppDeviceData(h C.uintptr_t, out, in unsafe.Pointer, outBytes, inBytes, frames C.uint32_t) {
	var o, i []byte
	if out != nil {
		o = unsafe.Slice((*byte)(out), int(outBytes))
	}
	if in != nil {
		i = unsafe.Slice((*byte)(in), int(inBytes))
	}
	cgo.Handle(h).Value().(dataProc)(o, i, uint32(frames))
}

// sdkppDeviceLog hands a miniaudio log message to Options.Log (the handle of a func(string)).
//
//export sdkppDeviceLog
func sdkppDeviceLog(h C.uintptr_t, message *C.char) {
	cgo.Handle(h).Value().(func(string))(C.GoString(message))
}

const sdkppBackendDefault = C.SDKPP_BACKEND_DEFAULT

// maBackend is the miniaudio backend (ma_backend) b names, or SDKPP_BACKEND_DEFAULT.
func (b Backend) maBackend() (C.int, error) {
	switch b {
	case BackendDefault:
		return sdkppBackendDefault, nil
	case BackendPulseAudio:
		return C.sdkpp_backend_pulseaudio(), nil
	case BackendNull:
		// Not malgo.BackendNull, which is miniaudio's custom backend.
		return C.sdkpp_backend_null(), nil
	}
	return 0, fmt.Errorf("device: unknown backend %d", b)
}
