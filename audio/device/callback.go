package device

import (
	"sync/atomic"
	"unsafe"

	"sdkpp/audio/pcm"
	"sdkpp/audio/ring"
)

// rings is the audio-thread side of a stream, shared by the malgo device and the in-memory one:
// the rings and the period counters. Its methods are the whole of what runs in a data callback.
type rings struct {
	capture  *ring.Ring
	playback *ring.Ring

	capturePeriods  atomic.Uint64
	captureSamples  atomic.Uint64
	playbackPeriods atomic.Uint64
	playbackSamples atomic.Uint64
}

func newRings(cfg Config) *rings {
	r := &rings{}
	if cfg.Capture {
		r.capture = ring.New(cfg.ringSamples())
	}
	if cfg.Playback {
		r.playback = ring.New(cfg.ringSamples())
	}
	return r
}

// captured copies what the device recorded into the capture ring (the ring drops what does not
// fit and wakes the engine).
func (r *rings) captured(in []int16) {
	r.capture.Write(in)
	r.capturePeriods.Add(1)
	r.captureSamples.Add(uint64(len(in)))
}

// play fills what the device will play from the playback ring, with silence for what the ring
// lacks.
func (r *rings) play(out []int16) {
	n := r.playback.Read(out)
	clear(out[n:])
	r.playbackPeriods.Add(1)
	r.playbackSamples.Add(uint64(len(out)))
}

// captureData is the malgo data callback of a capture device.
func (r *rings) captureData(_, in []byte, _ uint32) { r.captured(samples(in)) }

// playbackData is the malgo data callback of a playback device.
func (r *rings) playbackData(out, _ []byte, _ uint32) { r.play(samples(out)) }

func (r *rings) stats() Stats {
	s := Stats{
		CapturePeriods:  r.capturePeriods.Load(),
		CaptureSamples:  r.captureSamples.Load(),
		PlaybackPeriods: r.playbackPeriods.Load(),
		PlaybackSamples: r.playbackSamples.Load(),
	}
	if r.capture != nil {
		s.Capture = r.capture.Stats()
	}
	if r.playback != nil {
		s.Playback = r.playback.Stats()
	}
	return s
}

// samples views a device buffer of native-endian S16 samples as []int16 without copying.
// miniaudio's buffers are aligned for their sample format.
func samples(b []byte) []int16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*int16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// streamInfo is the format every stream runs at.
func streamInfo(capture, playback Info) StreamInfo {
	return StreamInfo{Capture: capture, Playback: playback, SampleRate: pcm.SampleRate, PeriodSamples: pcm.PeriodSamples}
}
