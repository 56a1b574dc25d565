// Package ptt is the gate between the capture path and the encoder: per frame it decides whether
// the frame is sent, sent as the last frame of a talk spurt (flagged end-of-speech so the far end
// fades out instead of concealing), or dropped.
//
// In push-to-talk mode the gate follows a key that any goroutine sets with SetActive: pressed,
// the very next frame is sent; released, frames keep going for the release delay and the last of
// them carries the end-of-speech flag; after that nothing leaves. In voice-activity mode the same
// logic follows the voice activity detector's decision for each frame instead of the key.
//
// The gate counts frames (pcm.FrameDurationMs each, or as SetFrameDuration says), never reads a
// clock, and allocates nothing.
package ptt

import (
	"sync/atomic"

	"sdkpp/audio/pcm"
)

// Decision is what to do with one captured frame.
type Decision uint8

const (
	// Drop means the frame is not sent.
	Drop Decision = iota
	// Send means the frame is encoded and sent.
	Send
	// SendEndOfSpeech means the frame is sent as the last frame of a talk spurt, flagged so
	// the far end fades out instead of concealing.
	SendEndOfSpeech
)

// String names the decision.
func (d Decision) String() string {
	switch d {
	case Drop:
		return "drop"
	case Send:
		return "send"
	case SendEndOfSpeech:
		return "send end of speech"
	}
	return "unknown"
}

// Sends reports whether the frame leaves (Send or SendEndOfSpeech).
func (d Decision) Sends() bool { return d == Send || d == SendEndOfSpeech }

// Mode selects what opens the gate.
type Mode uint8

const (
	// PushToTalk opens the gate while the key set by SetActive is down.
	PushToTalk Mode = iota
	// VoiceActivity opens the gate while the voice activity detector says speaking.
	VoiceActivity
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case PushToTalk:
		return "push to talk"
	case VoiceActivity:
		return "voice activity"
	}
	return "unknown"
}

// MaxReleaseDelayMs bounds the release delay (SetReleaseDelay clamps to it).
const MaxReleaseDelayMs = 2000

// Gate is the push-to-talk / voice-activity gate. Next runs on one goroutine (the capture path,
// once per frame); SetActive, SetReleaseDelay, SetMode and the getters may be called from any
// goroutine.
type Gate struct {
	active    atomic.Bool
	presses   atomic.Uint64 // counts SetActive(true) edges, so a tap between two frames is seen
	releaseMs atomic.Uint32
	frameMs   atomic.Uint32 // 0: pcm.FrameDurationMs
	mode      atomic.Uint32

	// Owned by the goroutine that calls Next.
	sending   bool   // inside a talk spurt
	left      int    // frames still to send after the opening input went away
	seen      uint64 // presses already acted on
	lastAbove bool   // the opening input was present on the previous frame
}

// New returns a closed gate in push-to-talk mode with no release delay.
func New() *Gate { return &Gate{} }

// SetActive presses (true) or releases (false) the push-to-talk key.
func (g *Gate) SetActive(on bool) {
	if on && !g.active.Swap(true) {
		g.presses.Add(1)
		return
	}
	if !on {
		g.active.Store(false)
	}
}

// Active reports whether the key is down.
func (g *Gate) Active() bool { return g.active.Load() }

// SetReleaseDelay sets how long frames keep being sent after the key is released (or the voice
// stops), in milliseconds, clamped to MaxReleaseDelayMs. It is honoured in whole frames, rounded
// up: after the release max(1, ceil(ms/frame)) frames leave, the last one flagged end-of-speech.
func (g *Gate) SetReleaseDelay(ms uint32) { g.releaseMs.Store(min(ms, MaxReleaseDelayMs)) }

// SetFrameDuration sets how long each frame Next decides on lasts, in milliseconds
// (pcm.FrameDurationMs until set; 10 in the engine's low-latency mode), so that the release
// delay keeps its duration.
func (g *Gate) SetFrameDuration(ms int) { g.frameMs.Store(uint32(max(ms, 1))) }

// ReleaseDelay returns the release delay in milliseconds.
func (g *Gate) ReleaseDelay() uint32 { return g.releaseMs.Load() }

// SetMode selects push-to-talk or voice activity; an unknown mode counts as PushToTalk.
func (g *Gate) SetMode(m Mode) {
	if m != VoiceActivity {
		m = PushToTalk
	}
	g.mode.Store(uint32(m))
}

// Mode returns the current mode.
func (g *Gate) Mode() Mode { return Mode(g.mode.Load()) }

// Next decides the fate of the next captured frame. speaking is the voice activity detector's
// decision for this frame; it is used in VoiceActivity mode and ignored in PushToTalk mode.
func (g *Gate) Next(speaking bool) Decision {
	open := speaking
	// A press since the last frame opens the gate even if the key is already up again;
	// presses made in voice-activity mode are forgotten.
	pressed := false
	if p := g.presses.Load(); p != g.seen {
		g.seen = p
		pressed = true
	}
	if g.Mode() == PushToTalk {
		open = pressed || g.active.Load()
	}
	if open {
		g.sending = true
		g.left = 0
		g.lastAbove = true
		return Send
	}
	if !g.sending {
		return Drop
	}
	if g.lastAbove {
		// The first frame after the release: count down the delay from here.
		g.lastAbove = false
		ms, frame := int(g.releaseMs.Load()), int(g.frameMs.Load())
		if frame == 0 {
			frame = pcm.FrameDurationMs
		}
		g.left = max(1, (ms+frame-1)/frame)
	}
	g.left--
	if g.left > 0 {
		return Send
	}
	g.sending = false
	return SendEndOfSpeech
}

// Idle reports whether the next frame will be dropped whatever its voice activity: push-to-talk
// mode, the key up and not pressed since the last frame, and no talk spurt to finish. Only the
// goroutine that calls Next may call it; a press after it returns opens the gate at the next
// frame as always.
func (g *Gate) Idle() bool {
	return g.Mode() == PushToTalk && !g.sending && !g.active.Load() && g.presses.Load() == g.seen
}

// Sending reports whether the gate is inside a talk spurt (the last Next returned Send).
// It belongs to the goroutine that calls Next.
func (g *Gate) Sending() bool { return g.sending }
