// Package device moves samples between the sound system and the voice engine: capture and
// playback at 48 kHz mono signed 16-bit through miniaudio with 10 ms periods, device listing and
// hot-plug events (through malgo), and an in-memory device for unit tests.
//
// The engine sees only Stream: a capture ring the device fills and a playback ring the device
// drains, each a lock-free single-producer single-consumer ring (package ring). The device's data
// callback is C (sides.c), set in the configuration of a device that C code opens through
// miniaudio's public API (devices.c) and called on a sound-system thread: it copies between the device buffer and a ring and returns, and when the engine waits
// on that ring it writes a byte to a pipe that a goroutine of the stream turns into the engine's
// wake-up. It never allocates, locks, runs Go code or calls anything that can wait.
package device

import (
	"errors"
	"time"

	"sdkpp/audio/ring"
)

// Kind says which way a device moves sound.
type Kind int

const (
	// Capture devices record (microphones, monitors of sinks).
	Capture Kind = iota + 1
	// Playback devices play (speakers, headsets, sinks).
	Playback
)

// String returns "capture" or "playback".
func (k Kind) String() string {
	switch k {
	case Capture:
		return "capture"
	case Playback:
		return "playback"
	}
	return "unknown"
}

// Info describes one device.
type Info struct {
	// ID identifies the device to Open. It is printable (lower-case hex) and stable for as long as
	// the sound system keeps the device's own identifier (for PulseAudio: the sink or source name).
	ID string
	// Name is the name the sound system shows to people.
	Name string
	// IsDefault reports whether the sound system uses this device when none is chosen.
	IsDefault bool
}

// List is the set of devices a Context sees at one moment.
type List struct {
	// Capture lists the capture devices.
	Capture []Info
	// Playback lists the playback devices.
	Playback []Info
}

// Of returns the devices of one kind.
func (l List) Of(k Kind) []Info {
	if k == Capture {
		return l.Capture
	}
	return l.Playback
}

// Stream is what the engine drives: one device or a capture and playback pair, with a ring for
// each direction.
//
// The device is the only writer of Capture and the only reader of Playback; the engine must be the
// only reader of Capture and the only writer of Playback (one goroutine per ring side). The engine
// waits for captured samples with Capture().WaitData and for playback room with
// Playback().WaitSpace; the device callback wakes it. When the playback ring runs dry the device
// plays silence and the ring counts an underrun; when the capture ring is full the device drops the
// newest samples and the ring counts an overrun.
//
// Start, Stop and Close must not be called from a device callback. Close stops the stream and
// releases the device; a closed stream cannot start again.
type Stream interface {
	// Capture returns the ring of captured samples, or nil when the stream has no capture side.
	Capture() *ring.Ring
	// Playback returns the ring of samples to play, or nil when the stream has no playback side.
	Playback() *ring.Ring
	// Start starts the device(s): callbacks begin.
	Start() error
	// Stop stops the device(s) until the next Start; callbacks have ended when it returns.
	Stop() error
	// Close stops and releases the device(s). It is safe to call more than once.
	Close() error
	// Info reports the devices actually in use and the stream's format.
	Info() StreamInfo
	// Stats reports the periods the device(s) ran and the rings' overruns and underruns.
	Stats() Stats
}

// CapturePauser is a Stream whose capture device can stop while the rest of it runs. An engine
// with no use for the microphone (push-to-talk released, nothing playing) pauses it, so that the
// sound system's capture thread sleeps too instead of waking every period.
type CapturePauser interface {
	// PauseCapture stops (true) or restarts (false) the capture device of a started stream; Start
	// restarts it too. A stream without a capture side ignores it. Like Start, it must not be
	// called from a device callback.
	PauseCapture(paused bool) error
}

// PlaybackPauser is a Stream whose playback device can stop while the rest of it runs. An engine
// with nothing to play pauses it, so that the sound system's playback thread sleeps instead of
// waking every few milliseconds to take silence.
type PlaybackPauser interface {
	// PausePlayback stops (true) or restarts (false) the playback device of a started stream;
	// Start restarts it too. A restarted device first plays what the playback ring holds. A
	// stream without a playback side ignores it. Like Start, it must not be called from a device
	// callback.
	PausePlayback(paused bool) error
}

// PlaybackClock is a Stream whose playback callback stamps each period it takes from the playback
// ring, so that the engine can write the next period just before the device takes it rather than
// as soon as it took the last. The stamps are taken on the device thread with the monotonic clock
// and published with atomics: the callback neither allocates, locks nor calls into Go for them.
type PlaybackClock interface {
	// PlaybackTakes returns how many periods the playback device has taken from the playback
	// ring so far and when it took the last one, on time.Now's monotonic clock (the zero Time
	// before the first take). Playback().Len() read after it is no more than that take left
	// (plus what the engine wrote since). Without a playback side it returns zeros.
	PlaybackTakes() (takes uint64, last time.Time)
}

// StreamInfo reports what a Stream opened.
type StreamInfo struct {
	// Capture is the capture device in use (zero when the stream has no capture side).
	Capture Info
	// Playback is the playback device in use (zero when the stream has no playback side).
	Playback Info
	// SampleRate is the sample rate in Hz.
	SampleRate int
	// PeriodSamples is the number of samples the device asks for or delivers per callback.
	PeriodSamples int
}

// Stats counts a stream's device periods and ring glitches.
type Stats struct {
	// CapturePeriods is the number of capture callbacks so far.
	CapturePeriods uint64
	// CaptureSamples is the number of samples the capture callbacks delivered.
	CaptureSamples uint64
	// PlaybackPeriods is the number of playback callbacks so far.
	PlaybackPeriods uint64
	// PlaybackSamples is the number of samples the playback callbacks asked for.
	PlaybackSamples uint64
	// Capture is the capture ring's overruns (and the engine's own underruns, if it read short).
	Capture ring.Stats
	// Playback is the playback ring's underruns (and the engine's own overruns, if it wrote over).
	Playback ring.Stats
}

// DefaultRingSamples is each ring's capacity when Config leaves it zero: 8192 samples, 170 ms.
const DefaultRingSamples = 8192

// Config says what a Stream opens.
type Config struct {
	// Capture opens a capture device.
	Capture bool
	// CaptureID is the capture device's Info.ID; empty selects the default device.
	CaptureID string
	// Playback opens a playback device.
	Playback bool
	// PlaybackID is the playback device's Info.ID; empty selects the default device.
	PlaybackID string
	// RingSamples is the capacity of each ring, rounded up to a power of two;
	// zero means DefaultRingSamples.
	RingSamples int
	// PlaybackChannels is 2 for a stereo playback side, whose ring then holds interleaved
	// left and right samples (a period is twice as many samples); 0 or 1 is mono.
	PlaybackChannels int
}

func (c Config) ringSamples() int {
	if c.RingSamples > 0 {
		return c.RingSamples
	}
	return DefaultRingSamples
}

// Errors a Stream or Context reports.
var (
	// ErrNoDevice reports an ID that names no device of the kind asked for.
	ErrNoDevice = errors.New("device: no such device")
	// ErrClosed reports a call on a closed Stream or Context.
	ErrClosed = errors.New("device: closed")
	// ErrNothingToOpen reports a Config with neither capture nor playback.
	ErrNothingToOpen = errors.New("device: config opens neither capture nor playback")
)
