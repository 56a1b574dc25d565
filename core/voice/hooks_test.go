package voice

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHooks(t *testing.T) {
	assert.Nil(t, ReceivedHook(nil))
	assert.Nil(t, CapturedHook(nil))

	var got []uint64
	recv := ReceivedHook(func(sender uint64, samples []int16, n uint64, rate int32, ch uint64, mute *bool) {
		got = append(got, sender, n, uint64(rate), ch)
		*mute = sender == 2
	})
	assert.False(t, recv(1, make([]int16, 960)))
	assert.True(t, recv(2, make([]int16, 960)), "the game muted sender 2")
	assert.False(t, recv(3, make([]int16, 960)), "the flag is reset for each frame")
	assert.Equal(t, []uint64{1, 960, 48000, 1, 2, 960, 48000, 1, 3, 960, 48000, 1}, got)

	var n uint64
	CapturedHook(func(_ []int16, spc uint64, _ int32, _ uint64) { n = spc })(make([]int16, 480))
	assert.Equal(t, uint64(480), n)
}
