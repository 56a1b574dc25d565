// Package mixer mixes the decoded 20 ms frames of several senders into the one frame the
// speakers play: per-sender volume (0..200 percent) and local mute, an output volume, deafen, and
// a soft limiter instead of hard wrap-around when the sum exceeds full scale. It also keeps each
// sender's speaking state (from the level of the sender's frames, with a short hangover) and
// reports its changes as edge events.
//
// Mix allocates nothing.
package mixer

import (
	"math"
	"sync/atomic"

	"sdkpp/audio/pcm"
	"sdkpp/audio/vad"
)

const (
	// UnityVolume is the volume that leaves samples unchanged (percent).
	UnityVolume = 100
	// MaxVolume is the largest volume (percent); volumes are clamped to 0..MaxVolume.
	MaxVolume = 200
	// SpeakingThresholdDBFS is the frame level at or above which a sender counts as speaking.
	SpeakingThresholdDBFS = -50
	// SpeakingHangoverFrames is how long a sender stays speaking after its level drops (8
	// frames, 160 ms).
	SpeakingHangoverFrames = 8
	// Knee is the share of full scale up to which the mix passes unchanged; above it the soft
	// limiter bends the curve smoothly towards full scale.
	Knee = 0.8
)

// Channel is one sender's place in the mixer. Its setters and getters may be called from any
// goroutine.
type Channel struct {
	id       uint64
	volume   atomic.Int32
	muted    atomic.Bool
	speaking atomic.Bool

	// Owned by the goroutine that calls Mix.
	detector *vad.Detector
	mixedAt  uint64
	gain     float32
}

// ID returns the identifier given to Mixer.Add.
func (c *Channel) ID() uint64 { return c.id }

// SetVolume sets the sender's volume in percent, clamped to 0..MaxVolume.
func (c *Channel) SetVolume(percent int) { c.volume.Store(int32(clampVolume(percent))) }

// Volume returns the sender's volume in percent.
func (c *Channel) Volume() int { return int(c.volume.Load()) }

// SetMuted mutes or unmutes the sender locally: a muted sender is not heard but its speaking
// state is still tracked.
func (c *Channel) SetMuted(muted bool) { c.muted.Store(muted) }

// Muted reports whether the sender is muted locally.
func (c *Channel) Muted() bool { return c.muted.Load() }

// Speaking reports the sender's speaking state after the last Mix.
func (c *Channel) Speaking() bool { return c.speaking.Load() }

// Level returns the level in dBFS of the sender's frame in the last Mix (before volume and
// mute; pcm.MinDBFS when it had none).
func (c *Channel) Level() float64 { return c.detector.Level() }

func clampVolume(percent int) int { return min(max(percent, 0), MaxVolume) }

// Input is one sender's decoded frame for one Mix.
type Input struct {
	// Channel is the sender, from this mixer's Add.
	Channel *Channel
	// Samples is the decoded frame; samples beyond its length count as silence.
	Samples []int16
	// Positional says that Left and Right place the sender (MixStereo); otherwise it is
	// centred at its own level in both ears, as in a mono mix.
	Positional bool
	// Left and Right are the sender's gain in each ear (package spatial), on top of its volume.
	Left, Right float32
}

// Event is a change of a sender's speaking state.
type Event struct {
	Channel  *Channel
	Speaking bool
}

// Mixer mixes senders' frames. Add, Remove, Mix and Events run on one goroutine (the engine's
// playback path); SetVolume, SetDeafened and their getters may be called from any goroutine.
type Mixer struct {
	volume   atomic.Int32
	deafened atomic.Bool

	channels []*Channel
	events   []Event
	tick     uint64
	hangover int // frames a speaking state is held (SpeakingHangoverFrames at 20 ms)
}

// New returns a mixer at unity output volume, not deafened, with no channels.
func New() *Mixer {
	m := &Mixer{hangover: SpeakingHangoverFrames}
	m.volume.Store(UnityVolume)
	return m
}

// SetFrameDuration sets how long each mixed frame lasts, in milliseconds (pcm.FrameDurationMs
// until set; 10 in the engine's low-latency mode), so that a speaking state's hangover keeps its
// duration. It runs on the mixing goroutine, like Mix.
func (m *Mixer) SetFrameDuration(ms int) {
	m.hangover = SpeakingHangoverFrames * pcm.FrameDurationMs / max(ms, 1)
	for _, c := range m.channels {
		c.detector.SetHangover(m.hangover)
	}
}

// Add registers a sender with the caller's identifier, at unity volume and unmuted.
func (m *Mixer) Add(id uint64) *Channel {
	d := vad.New()
	d.SetThreshold(false, SpeakingThresholdDBFS)
	d.SetHangover(m.hangover)
	c := &Channel{id: id, detector: d}
	c.volume.Store(UnityVolume)
	m.channels = append(m.channels, c)
	m.events = append(make([]Event, 0, len(m.channels)), m.events...)
	return c
}

// Remove unregisters a sender; it reports no event for it. Removing a channel twice, or one
// from another mixer, does nothing.
func (m *Mixer) Remove(c *Channel) {
	for i, x := range m.channels {
		if x == c {
			last := len(m.channels) - 1
			m.channels[i] = m.channels[last]
			m.channels[last] = nil
			m.channels = m.channels[:last]
			return
		}
	}
}

// Len returns the number of registered channels.
func (m *Mixer) Len() int { return len(m.channels) }

// SetVolume sets the output volume in percent, clamped to 0..MaxVolume.
func (m *Mixer) SetVolume(percent int) { m.volume.Store(int32(clampVolume(percent))) }

// Volume returns the output volume in percent.
func (m *Mixer) Volume() int { return int(m.volume.Load()) }

// SetDeafened makes the output silent (true) or audible again; speaking states are still
// tracked while deafened.
func (m *Mixer) SetDeafened(deafened bool) { m.deafened.Store(deafened) }

// Deafened reports whether the output is silenced.
func (m *Mixer) Deafened() bool { return m.deafened.Load() }

// Mix writes the mix of inputs into dst (one frame, normally pcm.FrameSamples samples) and
// updates every registered channel's speaking state; a channel without an input counts as
// silent. The changes are available from Events until the next Mix.
//
// A positional input keeps, in mono, the level its two ears share: its distance attenuation.
func (m *Mixer) Mix(dst []int16, inputs []Input) {
	if !m.prepare(inputs) {
		clear(dst)
		return
	}
	for _, in := range inputs {
		if in.Positional {
			in.Channel.gain *= float32(math.Sqrt(float64(in.Left*in.Left+in.Right*in.Right) / 2))
		}
	}
	for i := range dst {
		var acc float32
		for _, in := range inputs {
			if i < len(in.Samples) {
				acc += float32(in.Samples[i]) * in.Channel.gain
			}
		}
		dst[i] = SoftClip(acc)
	}
}

// MixStereo is Mix into interleaved stereo (left, right; len(dst)/2 samples a channel): each
// input is placed by its ear gains when positional, and centred at its level otherwise.
func (m *Mixer) MixStereo(dst []int16, inputs []Input) {
	if !m.prepare(inputs) {
		clear(dst)
		return
	}
	for i := 0; i+1 < len(dst); i += 2 {
		var accL, accR float32
		for _, in := range inputs {
			if k := i / 2; k < len(in.Samples) {
				v := float32(in.Samples[k]) * in.Channel.gain
				if in.Positional {
					accL += v * in.Left
					accR += v * in.Right
				} else {
					accL += v
					accR += v
				}
			}
		}
		dst[i], dst[i+1] = SoftClip(accL), SoftClip(accR)
	}
}

// prepare updates every channel's speaking state and gain for one mix, and reports whether
// anything can be heard.
func (m *Mixer) prepare(inputs []Input) (audible bool) {
	m.tick++
	m.events = m.events[:0]
	out := float32(m.volume.Load()) / UnityVolume
	deaf := m.deafened.Load()
	for _, in := range inputs {
		c := in.Channel
		c.mixedAt = m.tick
		m.track(c, pcm.LevelDBFS(in.Samples))
		c.gain = 0
		if !deaf && !c.muted.Load() {
			c.gain = float32(c.volume.Load()) / UnityVolume * out
		}
		audible = audible || c.gain != 0
	}
	for _, c := range m.channels {
		if c.mixedAt != m.tick {
			m.track(c, pcm.MinDBFS)
		}
	}
	return audible
}

// track feeds one frame's level into the channel's speaking state.
func (m *Mixer) track(c *Channel, dbfs float64) {
	speaking := c.detector.ProcessLevel(dbfs)
	if speaking != c.speaking.Load() {
		c.speaking.Store(speaking)
		m.events = append(m.events, Event{Channel: c, Speaking: speaking})
	}
}

// Events returns the speaking changes of the last Mix. The slice is reused by the next Mix.
func (m *Mixer) Events() []Event { return m.events }

// SoftClip converts a mixed sample (int16 scale, possibly beyond it) to int16: unchanged up to
// Knee of full scale, above it bent along a tanh-like curve that approaches full scale smoothly
// (continuous, with continuous slope) instead of wrapping or clipping hard. The result is
// symmetric, within ±32767.
func SoftClip(v float32) int16 {
	const fs = 32768
	a := v
	if a < 0 {
		a = -a
	}
	if a > Knee*fs {
		a = (Knee + (1-Knee)*tanh((a/fs-Knee)/(1-Knee))) * fs
	}
	r := int16(min(a+0.5, math.MaxInt16)) // -32768 is never produced
	if v < 0 {
		r = -r
	}
	return r
}

// tanh approximates math.Tanh for x >= 0 by the Pade form x(27+x²)/(27+9x²), which rises
// monotonically to exactly 1 with zero slope at x = 3 and stays there: within 2.5% of tanh, and
// about ten times cheaper, which matters when a loud mix sends every sample through it.
func tanh(x float32) float32 {
	if x >= 3 {
		return 1
	}
	y := float64(x) // float32 rounding would break monotonicity by an ulp near 3
	y2 := y * y
	return float32(y * (27 + y2) / (27 + 9*y2))
}
