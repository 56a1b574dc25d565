// Package voicecall tests voice calls from Go end to end: three SDK clients (core.Client) in one
// lobby's call through the live service on loopback, each with the real voice engine
// (audio/engine) on in-memory sound devices that the test plays in real time
// (tests/internal/threecall).
package voicecall

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/tests/internal/threecall"
)

// rule VER-2: three players talk in an end-to-end encrypted call through the service's relay:
// each one's recorded voice, captured by its engine from its in-memory microphone, reaches both
// others, scored by log-spectral distance against the same voice through Opus alone
// (speechscore). Then, heard at the speakers: participant volume, local mute, deafen,
// push-to-talk and self mute do what they say.
func TestThreePlayersHearEachOther(t *testing.T) {
	env := servertest.Start(t)
	c := threecall.Start(t, [threecall.Players]*servertest.Env{env, env, env}, "voicecall-")
	c.Speak()
	ps, pump := c.Players, threecall.Pump

	// The controls, heard at the speakers: each player's tone is one frequency, so each speaker's
	// mix tells who is audible in it.
	level := c.Level                                            // dBFS
	audible := func(l, s int) bool { return level(l, s) > -30 } // the tones are sent at -12 dBFS
	silent := func(l, s int) bool { return level(l, s) < -60 }
	require.True(t, pump(30*time.Second, func() bool {
		for l := range ps {
			for s := range ps {
				if l != s && level(l, s) < -14 { // settled near the tones' -12 dBFS
					return false
				}
			}
		}
		return true
	}), "every speaker plays both others' tones")
	// Player 2 hears players 0 and 1 alike; at volume 50, player 0 is 6 dB below player 1.
	require.True(t, pump(10*time.Second, func() bool { return math.Abs(level(2, 0)-level(2, 1)) < 1 }),
		"players 0 and 1 equally loud at player 2's speaker (%.1f, %.1f dBFS)", level(2, 0), level(2, 1))
	ps[2].Call.SetParticipantVolume(ps[0].ID, 50)
	assert.True(t, pump(10*time.Second, func() bool { return math.Abs(level(2, 0)-level(2, 1)+6.02) < 1 }),
		"participant volume 50: player 0 is 6 dB below player 1 at player 2's speaker (%.1f, %.1f dBFS)", level(2, 0), level(2, 1))
	ps[2].Call.SetParticipantVolume(ps[0].ID, 100)

	ps[1].Call.SetLocalMute(ps[0].ID, true)
	assert.True(t, pump(10*time.Second, func() bool { return silent(1, 0) }), "local mute: player 1 no longer plays player 0")
	assert.True(t, audible(1, 2), "local mute: player 1 still plays player 2")
	ps[1].Call.SetLocalMute(ps[0].ID, false)
	assert.True(t, pump(10*time.Second, func() bool { return audible(1, 0) }), "local mute undone")

	ps[2].Call.SetSelfDeaf(true)
	assert.True(t, pump(10*time.Second, func() bool { return silent(2, 0) && silent(2, 1) }), "deafen: player 2's speaker plays no one")
	ps[2].Call.SetSelfDeaf(false)

	ps[0].Call.SetPTTActive(false)
	assert.True(t, pump(10*time.Second, func() bool { return silent(1, 0) && silent(2, 0) }),
		"push-to-talk released: no one hears player 0")
	assert.True(t, audible(0, 1) && audible(1, 2), "the others still talk")
	ps[0].Call.SetPTTActive(true)
	assert.True(t, pump(10*time.Second, func() bool { return audible(1, 0) }), "push-to-talk pressed: player 0 is heard again")

	ps[1].Call.SetSelfMute(true)
	assert.True(t, pump(10*time.Second, func() bool { return silent(0, 1) && silent(2, 1) }), "self mute: no one hears player 1")
	assert.True(t, pump(10*time.Second, func() bool { return audible(0, 2) }), "player 2 is still heard")

	c.End()
	c.Score()
}
