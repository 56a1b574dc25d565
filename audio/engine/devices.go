package engine

import (
	"fmt"
	"sync"

	"sdkpp/audio/device"
	"sdkpp/core/voice"
)

// Devices is the sound system an engine opens its stream on: *device.Context for real devices,
// *MemoryDevices for tests.
type Devices interface {
	// Devices lists the capture and playback devices present.
	Devices() (device.List, error)
	// Open opens a stopped stream.
	Open(cfg device.Config) (device.Stream, error)
	// Events delivers device changes; it is closed when the Devices is closed.
	Events() <-chan device.Event
}

// MemoryDevices is a Devices of in-memory streams (device.Memory) for tests and benchmarks: the
// test plays the sound system by calling Period on the stream the engine opened last.
type MemoryDevices struct {
	mu     sync.Mutex
	stream *device.Memory
	opened int
	events chan device.Event
}

var _ Devices = (*MemoryDevices)(nil)

// NewMemoryDevices returns an in-memory sound system with one capture and one playback device.
func NewMemoryDevices() *MemoryDevices {
	return &MemoryDevices{events: make(chan device.Event)}
}

// Devices lists the two in-memory devices.
func (m *MemoryDevices) Devices() (device.List, error) {
	return device.List{
		Capture:  []device.Info{{ID: device.MemoryCaptureID, Name: "Memory capture", IsDefault: true}},
		Playback: []device.Info{{ID: device.MemoryPlaybackID, Name: "Memory playback", IsDefault: true}},
	}, nil
}

// Open opens a new in-memory stream; an ID other than empty or the memory device's is refused.
func (m *MemoryDevices) Open(cfg device.Config) (device.Stream, error) {
	if cfg.CaptureID != "" && cfg.CaptureID != device.MemoryCaptureID ||
		cfg.PlaybackID != "" && cfg.PlaybackID != device.MemoryPlaybackID {
		return nil, fmt.Errorf("memory devices: open %q/%q: %w", cfg.CaptureID, cfg.PlaybackID, device.ErrNoDevice)
	}
	s, err := device.NewMemory(cfg)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.stream = s
	m.opened++
	m.mu.Unlock()
	return s, nil
}

// Events never delivers anything: in-memory devices do not come and go.
func (m *MemoryDevices) Events() <-chan device.Event { return m.events }

// Stream returns the stream opened last (nil before the first Open).
func (m *MemoryDevices) Stream() *device.Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stream
}

// Opened returns how many streams were opened so far.
func (m *MemoryDevices) Opened() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.opened
}

// toVoice converts device descriptions to the call layer's.
func toVoice(infos []device.Info) []voice.Device {
	out := make([]voice.Device, len(infos))
	for i, d := range infos {
		out[i] = voice.Device{ID: d.ID, Name: d.Name, IsDefault: d.IsDefault}
	}
	return out
}
