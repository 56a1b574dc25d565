package device

/*
#include "sides.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"sdkpp/audio/pcm"
	"sdkpp/audio/ring"
)

// rings is the audio-thread side of a stream, shared by the miniaudio devices and the in-memory
// one: the rings, and the C sides (sides.c) that the device callbacks run. A data callback only
// copies between the device buffer and a ring; when the engine waits on that ring, it claims the
// wake-up and signals the stream's notifier, a pipe (an event on Windows) whose reading end a
// goroutine of the stream, the pump, waits on: the pump delivers the wake-up on the ring's
// channel. No Go code runs on the sound system's threads: each return from Go to a foreign thread
// left a P for the runtime's sysmon to retake, after which it polled every 20 us, most of what a
// quiet call cost.
type rings struct {
	capture  *ring.Ring
	playback *ring.Ring

	n        *C.sdkpp_notifier
	fired    *atomic.Uint32 // the notifier's bits, in C memory
	cside    *C.sdkpp_side  // nil without a capture side
	pside    *C.sdkpp_side  // nil without a playback side
	pin      runtime.Pinner
	pumpDone chan struct{}
	// playbackChannels is the samples per frame of the playback side.
	playbackChannels int

	mu     sync.Mutex // guards the C sides against close while stats reads them
	closed bool
	final  Stats // the counts at close
}

func newRings(cfg Config) (*rings, error) {
	r := &rings{pumpDone: make(chan struct{})}
	r.n = C.sdkpp_notifier_new()
	if r.n == nil {
		return nil, fmt.Errorf("device: create the wake-up notifier: out of memory or descriptors")
	}
	r.fired = (*atomic.Uint32)(unsafe.Pointer(C.sdkpp_notifier_fired(r.n)))
	side := func(rg *ring.Ring, channels int) *C.sdkpp_side {
		st, buf := rg.Shared(&r.pin)
		return C.sdkpp_side_new(st, (*C.int16_t)(buf), C.uint64_t(rg.Cap()), C.uint32_t(channels), r.n)
	}
	if cfg.Capture {
		r.capture = ring.New(cfg.ringSamples())
		r.cside = side(r.capture, pcm.Channels)
	}
	if cfg.Playback {
		r.playback = ring.New(cfg.ringSamples())
		r.playbackChannels = max(cfg.PlaybackChannels, pcm.Channels)
		r.pside = side(r.playback, r.playbackChannels)
	}
	go r.pump() // after every field it reads is set
	if cfg.Capture && r.cside == nil || cfg.Playback && r.pside == nil {
		r.close()
		return nil, fmt.Errorf("device: allocate the ring sides: out of memory")
	}
	return r, nil
}

// deliver hands the wake-ups the C sides claimed to the rings' waiters.
func (r *rings) deliver() {
	bits := r.fired.Swap(0) // sdkpp_notifier_take, without a cgo call
	if bits&C.SDKPP_WAKE_DATA != 0 && r.capture != nil {
		r.capture.WakeData()
	}
	if bits&C.SDKPP_WAKE_SPACE != 0 && r.playback != nil {
		r.playback.WakeSpace()
	}
}

// captured copies what the device recorded into the capture ring, as the capture callback does
// (for the in-memory device).
func (r *rings) captured(in []int16) {
	if len(in) == 0 {
		return
	}
	C.sdkpp_side_captured(r.cside, (*C.int16_t)(unsafe.Pointer(unsafe.SliceData(in))), C.uint32_t(len(in)/pcm.Channels))
}

// play fills what the device will play from the playback ring, with silence for what the ring
// lacks, as the playback callback does (for the in-memory device).
func (r *rings) play(out []int16) {
	if len(out) == 0 {
		return
	}
	C.sdkpp_side_play(r.pside, (*C.int16_t)(unsafe.Pointer(unsafe.SliceData(out))), C.uint32_t(len(out)/r.playbackChannels))
}

func (r *rings) stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.final
	}
	return r.statsLocked()
}

func (r *rings) statsLocked() Stats {
	var s Stats
	var periods, samples C.uint64_t
	if r.cside != nil {
		C.sdkpp_side_counts(r.cside, &periods, &samples)
		s.CapturePeriods, s.CaptureSamples = uint64(periods), uint64(samples)
		s.Capture = r.capture.Stats()
	}
	if r.pside != nil {
		C.sdkpp_side_counts(r.pside, &periods, &samples)
		s.PlaybackPeriods, s.PlaybackSamples = uint64(periods), uint64(samples)
		s.Playback = r.playback.Stats()
	}
	return s
}

// close stops the pump and frees the C sides. The devices' callbacks must have ended for good
// (the devices uninitialized). The rings stay readable; Stats reports the final counts.
func (r *rings) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.final = r.statsLocked()
	r.closed = true
	r.mu.Unlock()
	C.sdkpp_notifier_close(r.n)
	<-r.pumpDone
	C.sdkpp_notifier_free(r.n)
	r.freeSides()
}

func (r *rings) freeSides() {
	if r.cside != nil {
		C.sdkpp_side_free(r.cside)
		r.cside = nil
	}
	if r.pside != nil {
		C.sdkpp_side_free(r.pside)
		r.pside = nil
	}
	r.pin.Unpin()
}

// streamInfo is the format every stream runs at.
func streamInfo(capture, playback Info) StreamInfo {
	return StreamInfo{Capture: capture, Playback: playback, SampleRate: pcm.SampleRate, PeriodSamples: pcm.PeriodSamples}
}

// samples views a device buffer of native-endian S16 samples as []int16 without copying.
// miniaudio's buffers are aligned for their sample format.
func samples(b []byte) []int16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*int16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}
