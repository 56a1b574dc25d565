// Package voice is the SDK's voice calls: the call state machine, its signaling over the gateway,
// its media over the service's UDP relay, end-to-end encryption (package e2ee), and the registry
// of a Client's calls with the settings that apply to all of them (registry.go) and the device
// selection (devices.go), and a Client's voice log file and diagnostics (diag.go). It is pure Go:
// the audio engine that captures, encodes, decodes and plays is reached through the Engine
// interface below, which capi wires to audio/engine (the only place with audio cgo).
package voice

import (
	"errors"
	"sync"
)

// Packet is one encoded voice frame (20 ms, or 10 in the low-latency mode) and the fields the far
// end's jitter buffer needs.
type Packet struct {
	Seq         uint16 // per sender, wrapping
	Timestamp   uint32 // in samples at 48 kHz, counting through silence
	EndOfSpeech bool   // the last frame of a talk spurt: fade out instead of concealing
	Payload     []byte // the Opus frame; valid only during the call that hands it over
}

// Mode is how the engine decides to send: voice activity or push-to-talk.
type Mode int

// The input modes.
const (
	ModeVoiceActivity Mode = iota
	ModePushToTalk
)

// Device is an audio input or output device.
type Device struct {
	ID        string
	Name      string
	IsDefault bool
}

// EngineConfig is what the call layer gives an engine. The callbacks run on the engine's
// processing goroutine (the "audio thread" of the C API) and must not block: copy and return.
type EngineConfig struct {
	// OnPacket takes each frame to send. Its Payload is valid only during the call.
	OnPacket func(Packet)
	// OnSpeaking reports a sender starting or stopping to be heard (sender 0: the local player).
	OnSpeaking func(sender uint64, speaking bool)
	// OnNoInput reports the input staying below the no-input threshold (true) and recovering.
	OnNoInput func(silent bool)
	// OnDevicesChanged reports devices appearing or disappearing.
	OnDevicesChanged func(inputs, outputs []Device)
	// Captured, if set, sees each captured frame (20 ms; 10 in the low-latency mode) after echo
	// cancellation and noise suppression, before voice activity detection and encoding, and may
	// edit it.
	Captured func(samples []int16)
	// Received, if set, sees each sender's decoded frame (the engine's: 20 ms, 10 in the
	// low-latency mode) before it is mixed and may edit it; returning true mutes that frame.
	Received func(sender uint64, samples []int16) (mute bool)
	// InputDevice and OutputDevice select devices by id; empty is the default device.
	InputDevice, OutputDevice string
	// AecDump, if set, is the path prefix of echo-cancellation diagnostics: while the engine
	// runs it writes the near (microphone, as the canceller gets it), far (playback reference)
	// and output (processed capture) PCM to AecDump+"-near.wav", "-far.wav" and "-out.wav".
	AecDump string
	// Logf, if set, receives the engine's diagnostics (the voice log).
	Logf func(format string, args ...any)
}

// Engine is one player's audio engine as a call drives it. Its methods may be called from any
// goroutine.
type Engine interface {
	// Start opens the devices and starts processing; Close stops and releases everything and
	// returns once the engine's goroutines have ended.
	Start() error
	Close() error

	// Receive hands a packet from sender to the engine (copying what it keeps).
	Receive(sender uint64, p Packet)
	// RemoveSender forgets a sender that left.
	RemoveSender(sender uint64)

	SetMode(Mode)
	SetPTTActive(bool)
	SetPTTReleaseDelay(ms uint32)
	SetVADThreshold(automatic bool, dbfs float32)
	SetSelfMute(bool)
	SetSelfDeaf(bool)
	SetInputVolume(percent float32)  // 0..100
	SetOutputVolume(percent float32) // 0..200
	SetSenderVolume(sender uint64, percent float32)
	SetLocalMute(sender uint64, mute bool)
	SetEchoCancellation(bool)
	SetNoiseSuppression(bool)
	SetNoiseCancellation(bool) // off by default; while on it replaces noise suppression
	SetAutoGain(bool)
	SetNoInputThreshold(dbfs float32)

	// SetExpectedLoss feeds the far ends' loss reports (percent) to the encoder's FEC.
	SetExpectedLoss(percent int)
	// LossReport is the loss fraction (0..1) the local jitter buffers measured, to report.
	LossReport() float64

	InputDevices() ([]Device, error)
	OutputDevices() ([]Device, error)
	SetInputDevice(id string) error
	SetOutputDevice(id string) error
	CurrentInputDevice() Device
	CurrentOutputDevice() Device
}

// ErrNoEngine is returned by NewEngine when no engine was registered: a build of the SDK
// without audio.
var ErrNoEngine = errors.New("voice: no audio engine in this build")

var factory struct {
	mu sync.Mutex
	fn func(EngineConfig) (Engine, error)
}

// SetEngineFactory registers the function that makes engines (capi registers audio/engine's).
func SetEngineFactory(fn func(EngineConfig) (Engine, error)) {
	factory.mu.Lock()
	factory.fn = fn
	factory.mu.Unlock()
}

// NewEngine makes an engine with the registered factory.
func NewEngine(cfg EngineConfig) (Engine, error) {
	factory.mu.Lock()
	fn := factory.fn
	factory.mu.Unlock()
	if fn == nil {
		return nil, ErrNoEngine
	}
	return fn(cfg)
}

// ReceivedHook adapts a game's hook of each participant's decoded 48 kHz mono frame, which may
// set its mute flag, to EngineConfig.Received; nil stays nil. The engine calls Received from its
// one processing goroutine, so one flag serves every frame.
func ReceivedHook(fn func(sender uint64, samples []int16, samplesPerChannel uint64, sampleRate int32, channels uint64, mute *bool)) func(uint64, []int16) bool {
	if fn == nil {
		return nil
	}
	mute := new(bool)
	return func(sender uint64, samples []int16) bool {
		*mute = false
		fn(sender, samples, uint64(len(samples)), 48000, 1, mute)
		return *mute
	}
}

// CapturedHook adapts a game's hook of each captured 48 kHz mono frame to
// EngineConfig.Captured; nil stays nil.
func CapturedHook(fn func(samples []int16, samplesPerChannel uint64, sampleRate int32, channels uint64)) func([]int16) {
	if fn == nil {
		return nil
	}
	return func(samples []int16) { fn(samples, uint64(len(samples)), 48000, 1) }
}
