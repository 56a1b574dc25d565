package voice

import (
	"math"

	wvoice "sdkpp/wire/voice"
)

// This file is positional voice (proximity chat, an sdkpp addition in Vivox's model): the game
// sets where the local player hears from and where each participant stands, or lets each
// participant's client send its own position with its voice, inside the end-to-end encrypted
// frames (wire/voice's FlagPosition): the relay never learns where anyone stands. The engine
// renders each participant in stereo, attenuated with distance, and does not decode those beyond
// the audible distance. A participant marked non-positional (a team radio) is centred and
// unattenuated.

// FadeModel is the curve of the level between the conversational and the audible distance;
// its values are Vivox's.
type FadeModel int32

// The fade models.
const (
	FadeInverse     FadeModel = 1 // fades quickly at first, then slower (the default)
	FadeLinear      FadeModel = 2 // fades slowly at first, then faster
	FadeExponential FadeModel = 3 // fades very quickly beyond the conversational distance
)

// Vec3 is a position or a direction in the game's units and right-handed coordinates (with the
// listener facing Forward and Up up, Forward × Up points right).
type Vec3 struct{ X, Y, Z float32 }

// finite reports whether every component is a finite number.
func (v Vec3) finite() bool {
	for _, f := range [3]float32{v.X, v.Y, v.Z} {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}

// Listener is where the local player hears from: a position, the direction faced and up.
type Listener struct{ Position, Forward, Up Vec3 }

// DefaultListener stands at the origin facing -Z with +Y up.
var DefaultListener = Listener{Forward: Vec3{Z: -1}, Up: Vec3{Y: 1}}

// SpatialProperties are a call's distance properties (Vivox's Channel3DProperties).
type SpatialProperties struct {
	AudibleDistance        float32 // beyond it a participant is not heard (and not decoded)
	ConversationalDistance float32 // within it a voice keeps its level
	FadeIntensity          float32 // 0.5 half strength, 1 normal, 2 double
	Model                  FadeModel
}

// DefaultSpatialProperties are Vivox's defaults: 32, 1, 1, inverse.
var DefaultSpatialProperties = SpatialProperties{AudibleDistance: 32, ConversationalDistance: 1, FadeIntensity: 1, Model: FadeInverse}

// PositionalEngine is an Engine that renders positional voice (audio/engine's does). A call on an
// engine without it keeps every participant centred.
type PositionalEngine interface {
	SetPositional(on bool)
	SetListener(Listener)
	SetSpatialProperties(SpatialProperties) error
	SetSenderPosition(sender uint64, pos Vec3)
	ClearSenderPosition(sender uint64)
	SetSenderPositional(sender uint64, positional bool)
}

// positionEvery is how often, in frames sent, the local player's position goes out even when it
// has not moved (every 200 ms), so that a participant who missed it or joined late places the
// player soon; it also goes out with the first frame of each talk spurt and whenever it moves.
const positionEvery = 10

// positional is a call's positional voice state, guarded by the call's mutex.
type positional struct {
	on       bool
	props    SpatialProperties
	listener Listener
	self     Vec3
	sendSelf bool
	game     map[uint64]Vec3 // positions the game set: they win over what clients send
	sent     map[uint64]Vec3 // positions participants' clients sent
	radio    map[uint64]bool // participants marked non-positional

	// The sender's side (the media sender goroutine, under the mutex).
	lastSent  Vec3
	since     int  // frames sent since the position last went out
	newSpurt  bool // the next frame starts a talk spurt
	sentOnce  bool
	positions uint64 // positions sent, for tests and diagnostics
}

func newPositional() positional {
	return positional{props: DefaultSpatialProperties, listener: DefaultListener, game: map[uint64]Vec3{},
		sent: map[uint64]Vec3{}, radio: map[uint64]bool{}, newSpurt: true}
}

// engine returns the call's engine as a PositionalEngine, or nil.
func (c *Call) positionalEngine() PositionalEngine {
	pe, _ := c.engine.(PositionalEngine)
	return pe
}

// SetPositionalVoice switches positional voice for the local player (off by default).
func (c *Call) SetPositionalVoice(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos.on = on
	if pe := c.positionalEngine(); pe != nil {
		pe.SetPositional(on)
	}
}

// PositionalVoice reports whether positional voice is on.
func (c *Call) PositionalVoice() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pos.on
}

// SetPositionalProperties sets the distance properties; it reports false, and changes nothing,
// for invalid ones (an audible distance not above 0, a conversational distance outside 0 to it,
// a negative intensity, an unknown model).
func (c *Call) SetPositionalProperties(p SpatialProperties) bool {
	ok := p.AudibleDistance > 0 && p.ConversationalDistance >= 0 && p.ConversationalDistance <= p.AudibleDistance &&
		p.FadeIntensity >= 0 && (p.Model == FadeInverse || p.Model == FadeLinear || p.Model == FadeExponential) &&
		Vec3{p.AudibleDistance, p.ConversationalDistance, p.FadeIntensity}.finite()
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pe := c.positionalEngine(); pe != nil && pe.SetSpatialProperties(p) != nil {
		return false
	}
	c.pos.props = p
	return true
}

// PositionalProperties returns the distance properties.
func (c *Call) PositionalProperties() SpatialProperties {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pos.props
}

// SetListenerPosition sets where the local player hears from; non-finite values are ignored.
func (c *Call) SetListenerPosition(l Listener) {
	if !l.Position.finite() || !l.Forward.finite() || !l.Up.finite() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos.listener = l
	if pe := c.positionalEngine(); pe != nil {
		pe.SetListener(l)
	}
}

// SetSelfPosition sets where the local player stands: the call sends it, end-to-end encrypted,
// with the player's voice, so that the others place it without their game's help. Non-finite
// values are ignored.
func (c *Call) SetSelfPosition(p Vec3) {
	if !p.finite() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos.self, c.pos.sendSelf = p, true
}

// ClearSelfPosition stops sending the local player's position.
func (c *Call) ClearSelfPosition() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos.sendSelf = false
}

// SetParticipantPosition places a participant where the game knows it stands; it wins over what
// the participant's client sends until ClearParticipantPosition. Non-finite values are ignored.
func (c *Call) SetParticipantPosition(userID uint64, p Vec3) {
	if !p.finite() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos.game[userID] = p
	if pe := c.positionalEngine(); pe != nil {
		pe.SetSenderPosition(userID, p)
	}
}

// ClearParticipantPosition forgets the position the game set: the participant is placed where
// its client says, or centred until it says.
func (c *Call) ClearParticipantPosition(userID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pos.game, userID)
	pe := c.positionalEngine()
	if pe == nil {
		return
	}
	if p, ok := c.pos.sent[userID]; ok {
		pe.SetSenderPosition(userID, p)
	} else {
		pe.ClearSenderPosition(userID)
	}
}

// SetParticipantPositional marks a participant positional (the default) or not: a
// non-positional participant (a team radio beside proximity chat) is centred and unattenuated.
func (c *Call) SetParticipantPositional(userID uint64, positional bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if positional {
		delete(c.pos.radio, userID)
	} else {
		c.pos.radio[userID] = true
	}
	if pe := c.positionalEngine(); pe != nil {
		pe.SetSenderPositional(userID, positional)
	}
}

// ParticipantPositional reports whether a participant is positional.
func (c *Call) ParticipantPositional(userID uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.pos.radio[userID]
}

// ParticipantPosition returns where a participant is placed: the game's position, else the one
// its client sent; ok is false when neither is known.
func (c *Call) ParticipantPosition(userID uint64) (p Vec3, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok = c.pos.game[userID]; ok {
		return p, true
	}
	p, ok = c.pos.sent[userID]
	return p, ok
}

// receivedPosition takes the position a participant's client sent with its voice.
func (c *Call) receivedPosition(userID uint64, p Vec3) {
	if !p.finite() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parts[userID] == nil {
		return
	}
	c.pos.sent[userID] = p
	if _, set := c.pos.game[userID]; set {
		return
	}
	if pe := c.positionalEngine(); pe != nil {
		pe.SetSenderPosition(userID, p)
	}
}

// forgetLocked drops what is known of a participant that left.
func (p *positional) forgetLocked(userID uint64) {
	delete(p.game, userID)
	delete(p.sent, userID)
	delete(p.radio, userID)
}

// positionDueLocked reports whether the next frame sent carries the local player's position,
// and updates the sender's bookkeeping for a frame that ends a talk spurt or not (eos).
func (p *positional) positionDueLocked(eos bool) (Vec3, bool) {
	due := p.sendSelf && (!p.sentOnce || p.newSpurt || p.self != p.lastSent || p.since+1 >= positionEvery)
	p.newSpurt = eos
	if !due {
		p.since++
		return Vec3{}, false
	}
	p.lastSent, p.since, p.sentOnce = p.self, 0, true
	p.positions++
	return p.self, true
}

// appendPlain appends a frame's plaintext to dst: the position when due, then the voice frame.
func appendPlain(dst []byte, pos Vec3, withPos bool, frame []byte) []byte {
	if withPos {
		dst = wvoice.AppendPosition(dst, pos.X, pos.Y, pos.Z)
	}
	return append(dst, frame...)
}
