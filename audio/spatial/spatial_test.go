package spatial

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func db(g float64) float64 { return 20 * math.Log10(g) }

// The fade models at Vivox's defaults and beside them: unity within the conversational distance,
// each curve's value half-way to the audible distance, silence beyond it.
func TestAttenuation(t *testing.T) {
	inv, lin, exp := DefaultProperties, DefaultProperties, DefaultProperties
	lin.Model, exp.Model = FadeLinear, FadeExponential
	strong := DefaultProperties
	strong.FadeIntensity = 2
	for _, tc := range []struct {
		name    string
		p       Properties
		d       float64
		want    float64
		audible bool
	}{
		{"inside the conversational distance", inv, 0.5, 1, true},
		{"at the conversational distance", inv, 1, 1, true},
		{"inverse, half the audible distance", inv, 16, 1.0 / 16, true},
		{"inverse, double intensity", strong, 16, 1.0 / 31, true},
		{"linear, half the audible distance", lin, 16, 1 - 15.0/31, true},
		{"exponential, half the audible distance", exp, 16, 1.0 / 16, true},
		{"at the audible distance", inv, 32, 1.0 / 32, true},
		{"beyond the audible distance", inv, 32.01, 0, false},
		{"NaN", inv, math.NaN(), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := tc.p.Attenuation(tc.d)
			assert.Equal(t, tc.audible, ok)
			assert.InDelta(t, tc.want, g, 1e-9)
		})
	}
	exp.FadeIntensity = 2
	g, _ := exp.Attenuation(4)
	assert.InDelta(t, 1.0/16, g, 1e-9, "exponential: the distance to the power of the intensity")
	lin.FadeIntensity = 2
	g, _ = lin.Attenuation(20)
	assert.Zero(t, g, "linear at double intensity is silent past half-way")
}

func TestPropertiesValid(t *testing.T) {
	assert.True(t, DefaultProperties.Valid())
	for _, p := range []Properties{
		{AudibleDistance: 0, Model: FadeInverse},
		{AudibleDistance: 10, ConversationalDistance: 11, Model: FadeInverse},
		{AudibleDistance: 10, ConversationalDistance: -1, Model: FadeInverse},
		{AudibleDistance: 10, FadeIntensity: -1, Model: FadeInverse},
		{AudibleDistance: 10, Model: 9},
		{AudibleDistance: float32(math.Inf(1)), Model: FadeInverse},
	} {
		assert.False(t, p.Valid(), "%+v", p)
	}
	zero := Properties{AudibleDistance: 10, Model: FadeInverse, FadeIntensity: 1}
	g, ok := zero.Attenuation(5)
	assert.True(t, ok)
	assert.InDelta(t, 0.01/(0.01+4.99), g, 1e-9, "a conversational distance of 0 is taken as a thousandth of the audible one")
}

// Equal-power panning: a speaker ahead is centred at its level in each ear; to the right the
// right ear is louder, hard right the left ear hears nothing; the two ears' power together does
// not depend on the direction.
func TestGainsPan(t *testing.T) {
	l := Listener{Position: Vec3{X: 5, Z: 5}, Forward: Vec3{Z: -1}, Up: Vec3{Y: 1}}
	p := Properties{AudibleDistance: 100, ConversationalDistance: 10, FadeIntensity: 1, Model: FadeInverse}
	at := func(x, z float32) Vec3 { return Vec3{X: l.Position.X + x, Z: l.Position.Z + z} }

	left, right, ok := Gains(l, p, at(0, -3))
	assert.True(t, ok)
	assert.InDelta(t, 1, left, 1e-6, "ahead: centred, unattenuated")
	assert.InDelta(t, 1, right, 1e-6)
	left, right, _ = Gains(l, p, at(0, 3))
	assert.InDelta(t, left, right, 1e-6, "behind: centred too")

	left, right, _ = Gains(l, p, at(3, 0))
	assert.InDelta(t, 0, left, 1e-6, "hard right")
	assert.InDelta(t, math.Sqrt2, right, 1e-6)
	left, right, _ = Gains(l, p, at(-3, 0))
	assert.InDelta(t, math.Sqrt2, left, 1e-6, "hard left")
	assert.InDelta(t, 0, right, 1e-6)

	left, right, _ = Gains(l, p, at(2, -2)) // 45 degrees to the right
	assert.GreaterOrEqual(t, db(float64(right))-db(float64(left)), 10.0)
	assert.InDelta(t, 2, left*left+right*right, 1e-5, "equal power")

	turned := l
	turned.Forward = Vec3{X: 1} // facing the speaker that was on the right
	left, right, _ = Gains(turned, p, at(3, 0))
	assert.InDelta(t, left, right, 1e-6, "the orientation counts")

	_, _, ok = Gains(l, p, at(0, -101))
	assert.False(t, ok, "beyond the audible distance")
	left, right, ok = Gains(l, p, l.Position)
	assert.True(t, ok)
	assert.InDelta(t, left, right, 1e-6, "at the listener's own place: centred")
	_, _, ok = Gains(l, p, Vec3{X: float32(math.NaN())})
	assert.False(t, ok)
}
