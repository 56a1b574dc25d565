package device

import (
	"fmt"
	"sync"
	"sync/atomic"

	"sdkpp/audio/ring"
)

// Memory is an in-memory Stream for unit tests. Nothing runs on its own: the test plays the sound
// system by calling Period, which hands the stream one period of "microphone" samples and takes
// one period of "speaker" samples through the same callback code as a real device (the C sides,
// with their wake-ups through the notifier). Period must be called from one goroutine at a time
// (it stands for the device's audio thread).
type Memory struct {
	rings *rings
	info  StreamInfo

	mu      sync.Mutex // orders Start, Stop and Close
	started atomic.Bool
	closed  bool
	// capturePaused is what the engine asked for last. Period delivers its input all the same:
	// a test's microphone is never lost to a pause (a real device's restart takes time anyway).
	capturePaused atomic.Bool
	// playbackPaused is what the engine asked for last: while it holds, Period's speaker plays
	// silence and takes nothing from the playback ring, as a stopped device calls back no more.
	playbackPaused atomic.Bool
}

var (
	_ Stream         = (*Memory)(nil)
	_ CapturePauser  = (*Memory)(nil)
	_ PlaybackPauser = (*Memory)(nil)
)

// MemoryCaptureID and MemoryPlaybackID are the IDs of an in-memory stream's devices.
const (
	MemoryCaptureID  = "memory-capture"
	MemoryPlaybackID = "memory-playback"
)

// NewMemory returns a stopped in-memory stream with the sides cfg asks for. The IDs in cfg are
// ignored; Info reports MemoryCaptureID and MemoryPlaybackID.
func NewMemory(cfg Config) (*Memory, error) {
	if !cfg.Capture && !cfg.Playback {
		return nil, fmt.Errorf("memory device: %w", ErrNothingToOpen)
	}
	var capture, playback Info
	if cfg.Capture {
		capture = Info{ID: MemoryCaptureID, Name: "Memory capture", IsDefault: true}
	}
	if cfg.Playback {
		playback = Info{ID: MemoryPlaybackID, Name: "Memory playback", IsDefault: true}
	}
	rg, err := newRings(cfg)
	if err != nil {
		return nil, err
	}
	return &Memory{rings: rg, info: streamInfo(capture, playback)}, nil
}

// Period runs one device period while the stream is started: in (what the microphone heard) goes
// into the capture ring, and out (what the speaker plays) is filled from the playback ring, with
// silence where the ring runs dry. Either may be nil to leave that side out of this period, and
// each must be nil when its side is absent. It reports whether the period ran; a stopped stream
// runs none, as a stopped device calls back no more.
func (m *Memory) Period(in, out []int16) bool {
	// Unlike a device callback, Period takes the mutex: Close frees the C sides it runs, so it
	// waits for a Period under way as a device's Stop waits for its callback.
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started.Load() {
		return false
	}
	if in != nil {
		m.rings.captured(in)
	}
	if out != nil {
		if m.playbackPaused.Load() {
			clear(out)
		} else {
			m.rings.play(out)
		}
	}
	return true
}

// Capture returns the ring Period fills from in, or nil without a capture side.
func (m *Memory) Capture() *ring.Ring { return m.rings.capture }

// Playback returns the ring Period drains into out, or nil without a playback side.
func (m *Memory) Playback() *ring.Ring { return m.rings.playback }

// Start lets Period run.
func (m *Memory) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("memory device start: %w", ErrClosed)
	}
	m.started.Store(true)
	m.capturePaused.Store(false)
	m.playbackPaused.Store(false)
	return nil
}

// PauseCapture records whether the capture side is paused (CapturePaused reports it); Period
// keeps delivering its input.
func (m *Memory) PauseCapture(paused bool) error { return m.pause(&m.capturePaused, "capture", paused) }

// CapturePaused reports whether the capture side is paused (since the last PauseCapture or
// Start).
func (m *Memory) CapturePaused() bool { return m.capturePaused.Load() }

// PausePlayback pauses or resumes the playback side (PlaybackPaused reports it): while paused,
// Period plays silence without taking from the playback ring.
func (m *Memory) PausePlayback(paused bool) error {
	return m.pause(&m.playbackPaused, "playback", paused)
}

// PlaybackPaused reports whether the playback side is paused (since the last PausePlayback or
// Start).
func (m *Memory) PlaybackPaused() bool { return m.playbackPaused.Load() }

func (m *Memory) pause(flag *atomic.Bool, side string, paused bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("memory device pause %s: %w", side, ErrClosed)
	}
	flag.Store(paused)
	return nil
}

// Stop makes Period a no-op until the next Start.
func (m *Memory) Stop() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("memory device stop: %w", ErrClosed)
	}
	m.started.Store(false)
	return nil
}

// Close stops the stream for good.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started.Store(false)
	if !m.closed {
		m.closed = true
		m.rings.close()
	}
	return nil
}

// Info reports the in-memory devices and the stream format.
func (m *Memory) Info() StreamInfo { return m.info }

// Stats reports the periods run and the rings' counters.
func (m *Memory) Stats() Stats { return m.rings.stats() }
