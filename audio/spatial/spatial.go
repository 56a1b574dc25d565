// Package spatial places voices around the listener for positional voice (proximity chat): it
// turns a speaker's position, the listener's position and orientation, and the call's distance
// properties into one gain per ear.
//
// The distance model is Vivox's (anchors.md 4c): an audible distance beyond which a speaker is not
// heard at all (and need not be decoded), a conversational distance within which the voice keeps
// its original level, a fade intensity, and one of three fade models between the two distances,
// the clamped curves Vivox names inverse, linear and exponential. With d the distance clamped to
// [conversational, audible], c the conversational distance, a the audible one and r the intensity:
//
//	inverse      gain = c / (c + r·(d − c))
//	linear       gain = max(0, 1 − r·(d − c) / (a − c))
//	exponential  gain = (d / c)^(−r)
//
// Direction is equal-power panning: the sine of the speaker's azimuth seen from the listener
// (−1 hard left, +1 hard right, 0 ahead or behind) sets an angle θ in [0, π/2], and the ears get
// cos θ and sin θ, scaled by √2 so that a speaker straight ahead reaches each ear at its original
// level, as a non-positional voice does. The power of the two ears together is the same wherever
// the speaker stands.
//
// Coordinates are right-handed, as OpenAL's: with the listener facing Forward and Up pointing up,
// Forward × Up points to the listener's right (forward −Z and up +Y put the right at +X). An engine
// with left-handed coordinates (Unity) passes its Z negated. Units are the game's; the distances
// of Properties are in the same units.
package spatial

import "math"

// FadeModel is the curve of the level between the conversational and the audible distance. Its
// values are Vivox's.
type FadeModel int32

// The fade models.
const (
	// FadeInverse fades quickly at first, then slower: the level falls in inverse proportion to
	// the distance (the most natural; the default).
	FadeInverse FadeModel = 1
	// FadeLinear fades slowly at first, then faster: the level falls in proportion to the
	// distance, reaching silence at the audible distance when the intensity is 1.
	FadeLinear FadeModel = 2
	// FadeExponential fades very quickly beyond the conversational distance: the level falls as
	// the distance raised to the power of the intensity.
	FadeExponential FadeModel = 3
)

// String names the model.
func (m FadeModel) String() string {
	switch m {
	case FadeInverse:
		return "inverse"
	case FadeLinear:
		return "linear"
	case FadeExponential:
		return "exponential"
	}
	return "unknown"
}

// Vec3 is a position or a direction.
type Vec3 struct{ X, Y, Z float32 }

func (v Vec3) sub(w Vec3) Vec3 { return Vec3{v.X - w.X, v.Y - w.Y, v.Z - w.Z} }
func (v Vec3) dot(w Vec3) float64 {
	return float64(v.X)*float64(w.X) + float64(v.Y)*float64(w.Y) + float64(v.Z)*float64(w.Z)
}
func (v Vec3) length() float64 { return math.Sqrt(v.dot(v)) }
func (v Vec3) cross(w Vec3) Vec3 {
	return Vec3{v.Y*w.Z - v.Z*w.Y, v.Z*w.X - v.X*w.Z, v.X*w.Y - v.Y*w.X}
}
func (v Vec3) finite() bool { return finite(v.X) && finite(v.Y) && finite(v.Z) }
func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// Listener is where the local player hears from: a position and an orientation (the direction
// faced and the direction of up; neither needs to be of unit length).
type Listener struct {
	Position, Forward, Up Vec3
}

// DefaultListener stands at the origin facing −Z with +Y up.
var DefaultListener = Listener{Forward: Vec3{Z: -1}, Up: Vec3{Y: 1}}

// Properties are a call's distance properties. Their defaults are Vivox's: audible distance 32,
// conversational distance 1, intensity 1, inverse fade.
type Properties struct {
	// AudibleDistance is the distance beyond which a speaker is not heard (> 0).
	AudibleDistance float32
	// ConversationalDistance is the distance within which a voice keeps its original level
	// (0 ..= AudibleDistance).
	ConversationalDistance float32
	// FadeIntensity scales the fade: 0.5 half strength, 1 normal, 2 double (>= 0).
	FadeIntensity float32
	// Model is the fade curve.
	Model FadeModel
}

// DefaultProperties are Vivox's defaults.
var DefaultProperties = Properties{AudibleDistance: 32, ConversationalDistance: 1, FadeIntensity: 1, Model: FadeInverse}

// Valid reports whether the properties can be used: a positive audible distance, a
// conversational distance between 0 and it, a non-negative intensity, a known model, all finite.
func (p Properties) Valid() bool {
	return finite(p.AudibleDistance) && finite(p.ConversationalDistance) && finite(p.FadeIntensity) &&
		p.AudibleDistance > 0 && p.ConversationalDistance >= 0 && p.ConversationalDistance <= p.AudibleDistance &&
		p.FadeIntensity >= 0 && (p.Model == FadeInverse || p.Model == FadeLinear || p.Model == FadeExponential)
}

// minReference stands for a conversational distance of 0 in the inverse and exponential models,
// whose curves divide by it: a thousandth of the audible distance.
const minReference = 1e-3

// Attenuation returns the gain (0..1) of a voice at distance d, and whether it is heard at all:
// beyond the audible distance it is not (gain 0).
func (p Properties) Attenuation(d float64) (gain float64, audible bool) {
	a, c, r := float64(p.AudibleDistance), float64(p.ConversationalDistance), float64(p.FadeIntensity)
	if !(d <= a) { // NaN counts as out of range
		return 0, false
	}
	if d <= c {
		return 1, true
	}
	switch p.Model {
	case FadeLinear:
		if a == c {
			return 1, true
		}
		return max(0, 1-r*(d-c)/(a-c)), true
	case FadeExponential:
		c = max(c, minReference*a)
		return math.Pow(d/c, -r), true
	default:
		c = max(c, minReference*a)
		return c / (c + r*(d-c)), true
	}
}

// Gains returns the gain of each ear for a speaker at position, and whether the speaker is
// heard at all. A speaker at the listener's own position is centred; a listener whose forward
// and up directions are parallel (or zero) hears every speaker centred.
func Gains(l Listener, p Properties, position Vec3) (left, right float32, audible bool) {
	if !position.finite() || !l.Position.finite() {
		return 0, 0, false
	}
	rel := position.sub(l.Position)
	d := rel.length()
	gain, audible := p.Attenuation(d)
	if !audible {
		return 0, 0, false
	}
	pan := 0.0 // sine of the azimuth: −1 left .. +1 right
	rightDir := l.Forward.cross(l.Up)
	if rl := rightDir.length(); rl > 0 && d > 0 && !math.IsNaN(rl) {
		pan = max(-1, min(1, rel.dot(rightDir)/(rl*d)))
	}
	theta := (pan + 1) * math.Pi / 4
	return float32(gain * math.Sqrt2 * math.Cos(theta)), float32(gain * math.Sqrt2 * math.Sin(theta)), true
}
