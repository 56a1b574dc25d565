package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// The raw PCM hooks of StartCallWithAudioCallbacks run on the engine's processing goroutine for
// every frame: they see and may edit the samples, the received hook may mute a sender, nothing
// allocates per frame, and each hook's game data is released exactly once, when the call ends.
func TestCallAudioHooks(t *testing.T) {
	env := servertest.Start(t)
	p1 := newCaller(t, env, "hooks-p1")
	lobby := lobbyOf(t, "hooks-secret", p1)

	var got struct {
		sender  uint64
		n       uint64
		rate    int32
		ch      uint64
		first   int16
		frames  int
		capture int
	}
	released := map[string]int{}
	received := Callback[ClientUserAudioReceivedCallback]{
		Fn: func(user uint64, data []int16, n uint64, rate int32, ch uint64, mute *bool) {
			got.sender, got.n, got.rate, got.ch, got.first = user, n, rate, ch, data[0]
			got.frames++
			data[0] = 7        // the game may edit the frame in place
			*mute = user == 42 // and keep a sender from being played
		},
		Release: func() { released["received"]++ },
	}
	captured := Callback[ClientUserAudioCapturedCallback]{
		Fn:      func(data []int16, n uint64, rate int32, ch uint64) { got.capture++; data[1] = 9 },
		Release: func() { released["captured"]++ },
	}
	call := p1.StartCallWithAudioCallbacks(lobby, received, captured)
	require.NotNil(t, call)
	cfg := p1.engine.cfg
	require.NotNil(t, cfg.Received)
	require.NotNil(t, cfg.Captured)

	frame := make([]int16, 960)
	frame[0] = 3
	assert.False(t, cfg.Received(5, frame), "sender 5 is played")
	assert.Equal(t, uint64(5), got.sender)
	assert.Equal(t, uint64(960), got.n)
	assert.Equal(t, int32(48000), got.rate)
	assert.Equal(t, uint64(1), got.ch)
	assert.Equal(t, int16(3), got.first)
	assert.Equal(t, int16(7), frame[0], "the hook's edit reaches the engine")
	assert.True(t, cfg.Received(42, frame), "the hook muted sender 42")
	assert.False(t, cfg.Received(5, frame), "the mute flag starts false for every frame")
	cfg.Captured(frame)
	assert.Equal(t, int16(9), frame[1])

	assert.Zero(t, testing.AllocsPerRun(200, func() { cfg.Received(5, frame) }), "received hook allocations per frame")
	assert.Zero(t, testing.AllocsPerRun(200, func() { cfg.Captured(frame) }), "captured hook allocations per frame")
	assert.Empty(t, released, "nothing is released while the call runs")

	// The release is queued with the end's callback and runs in that RunCallbacks, on the game's
	// thread: never on a thread of the SDK's, which a managed runtime would attach (Mono then
	// waits for it at exit).
	ended := false
	p1.EndCall(lobby, Func(func() { ended = true }))
	await(t, "the end queued", func() bool { return queue.Len() >= 2 })
	assert.Empty(t, released, "nothing is released before RunCallbacks")
	await(t, "EndCall", func() bool { RunCallbacks(); return ended })
	assert.Equal(t, map[string]int{"received": 1, "captured": 1}, released, "released once when the call ends")

	// A refused start (lobby id 0 names no lobby) releases the hooks at once.
	clear(released)
	assert.Nil(t, p1.StartCallWithAudioCallbacks(0, received, captured))
	assert.Equal(t, map[string]int{"received": 1, "captured": 1}, released, "released once when the call is refused")
}
