package voice

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The local player's position goes out with the first frame, the first frame of each talk
// spurt, whenever it moves, and every positionEvery frames otherwise; never once cleared.
func TestPositionCadence(t *testing.T) {
	p := newPositional()
	_, due := p.positionDueLocked(false)
	assert.False(t, due, "no position set")
	p.self, p.sendSelf = Vec3{X: 1}, true

	var sent []int
	for i := range 25 {
		if _, due := p.positionDueLocked(false); due {
			sent = append(sent, i)
		}
	}
	assert.Equal(t, []int{0, 10, 20}, sent, "the first frame, then every positionEvery frames")

	p.self = Vec3{X: 2}
	got, due := p.positionDueLocked(false)
	assert.True(t, due, "it moved")
	assert.Equal(t, Vec3{X: 2}, got)
	_, due = p.positionDueLocked(true) // the spurt ends
	assert.False(t, due)
	_, due = p.positionDueLocked(false)
	assert.True(t, due, "a new talk spurt starts with the position")

	p.sendSelf = false
	_, due = p.positionDueLocked(false)
	assert.False(t, due, "cleared")
}

func TestVec3Finite(t *testing.T) {
	assert.True(t, Vec3{1, -2, 3}.finite())
	assert.False(t, Vec3{X: float32(math.NaN())}.finite())
	assert.False(t, Vec3{Z: float32(math.Inf(-1))}.finite())
}
