package device

/*
#include "sides.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
	// take is the playback side's take clock, in C memory (nil without a playback side); epoch
	// is the time at which sdkpp_clock_ns read epochNs, to put the clock's stamps on time.Now's.
	take    *takeClock
	epoch   time.Time
	epochNs int64

	mu     sync.Mutex // guards the C sides against close while stats or the take clock read them
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
		if r.pside != nil {
			r.take = (*takeClock)(unsafe.Pointer(C.sdkpp_side_take_clock(r.pside)))
			r.epoch, r.epochNs = clockEpoch()
		}
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

// takeClock is sdkpp_take_clock, read in place.
type takeClock struct {
	seq    atomic.Uint64
	lastNs atomic.Int64
}

// clockEpoch pairs a reading of the C side's monotonic clock with time.Now: the reading taken
// between the two closest time.Now calls of a few tries, and the time halfway between those.
func clockEpoch() (time.Time, int64) {
	var at time.Time
	var ns int64
	best := time.Duration(math.MaxInt64)
	for range 5 {
		t0 := time.Now()
		c := int64(C.sdkpp_clock_ns())
		if d := time.Since(t0); d < best {
			best, at, ns = d, t0.Add(d/2), c
		}
	}
	return at, ns
}

// playbackTakes reads the take clock: the periods taken so far and the time of the last take
// (the zero Time before the first). Without a playback side, or once closed, it returns zeros.
func (r *rings) playbackTakes() (uint64, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.take == nil || r.closed {
		return 0, time.Time{}
	}
	for {
		seq := r.take.seq.Load()
		last := r.take.lastNs.Load()
		if seq%2 != 0 || r.take.seq.Load() != seq {
			runtime.Gosched() // the callback is writing: it takes a few instructions
			continue
		}
		if seq == 0 {
			return 0, time.Time{}
		}
		return seq / 2, r.epoch.Add(time.Duration(last - r.epochNs))
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
