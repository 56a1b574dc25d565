package ptt

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run calls Next n times with speaking and returns the decisions.
func run(g *Gate, n int, speaking bool) []Decision {
	out := make([]Decision, n)
	for i := range out {
		out[i] = g.Next(speaking)
	}
	return out
}

func repeat(d Decision, n int) []Decision {
	out := make([]Decision, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestReleasedSendsNothing(t *testing.T) {
	g := New()
	assert.Equal(t, repeat(Drop, 50), run(g, 50, true), "speaking is ignored in push-to-talk mode")
	assert.False(t, g.Sending())
}

func TestPressSendsTheVeryNextFrame(t *testing.T) {
	g := New()
	run(g, 3, false)
	g.SetActive(true)
	assert.True(t, g.Active())
	assert.Equal(t, Send, g.Next(false))
	assert.Equal(t, repeat(Send, 10), run(g, 10, false))
}

func TestReleaseDelay(t *testing.T) {
	tests := []struct {
		delayMs uint32
		after   int // frames that leave after the release, the last one the marker
		frameMs int // 0: the default 20 ms
	}{
		{0, 1, 0}, {1, 1, 0}, {20, 1, 0}, {21, 2, 0}, {100, 5, 0}, {110, 6, 0}, {300, 15, 0},
		{5000, MaxReleaseDelayMs / 20, 0},
		// The engine's low-latency mode: 10 ms frames.
		{0, 1, 10}, {10, 1, 10}, {11, 2, 10}, {100, 10, 10}, {105, 11, 10},
	}
	for _, tt := range tests {
		g := New()
		frameMs := uint32(20)
		if tt.frameMs != 0 {
			g.SetFrameDuration(tt.frameMs)
			frameMs = uint32(tt.frameMs)
		}
		g.SetReleaseDelay(tt.delayMs)
		g.SetActive(true)
		run(g, 5, false)
		g.SetActive(false)
		got := run(g, tt.after+20, false)
		want := append(repeat(Send, tt.after-1), SendEndOfSpeech)
		want = append(want, repeat(Drop, 20)...)
		assert.Equal(t, want, got, "delay %d ms", tt.delayMs)
		// Honoured to within one frame: the audio sent after the release covers the delay
		// and exceeds it by less than one frame.
		sentMs := uint32(tt.after) * frameMs
		delay := min(tt.delayMs, MaxReleaseDelayMs)
		assert.GreaterOrEqual(t, sentMs, delay)
		assert.Less(t, sentMs, delay+frameMs+1)
	}
}

func TestRepressDuringDelayContinuesTheSpurt(t *testing.T) {
	g := New()
	g.SetReleaseDelay(100)
	g.SetActive(true)
	g.Next(false)
	g.SetActive(false)
	assert.Equal(t, repeat(Send, 3), run(g, 3, false))
	g.SetActive(true)
	assert.Equal(t, repeat(Send, 10), run(g, 10, false), "no marker inside a continued spurt")
	g.SetActive(false)
	assert.Equal(t, append(repeat(Send, 4), SendEndOfSpeech, Drop), run(g, 6, false),
		"the delay starts again from the second release")
}

func TestTapBetweenFramesIsNotLost(t *testing.T) {
	g := New()
	g.SetActive(true)
	g.SetActive(false)
	assert.Equal(t, []Decision{Send, SendEndOfSpeech, Drop}, run(g, 3, false))
	g.SetActive(true)
	g.SetActive(true) // a repeated press is one press
	g.SetActive(false)
	assert.Equal(t, []Decision{Send, SendEndOfSpeech, Drop}, run(g, 3, false))
}

func TestVoiceActivityMode(t *testing.T) {
	g := New()
	g.SetMode(VoiceActivity)
	assert.Equal(t, VoiceActivity, g.Mode())
	g.SetActive(true) // the key does not matter in this mode
	assert.Equal(t, repeat(Drop, 3), run(g, 3, false))
	assert.Equal(t, repeat(Send, 5), run(g, 5, true))
	assert.Equal(t, []Decision{SendEndOfSpeech, Drop, Drop}, run(g, 3, false))

	g.SetReleaseDelay(40)
	run(g, 2, true)
	assert.Equal(t, []Decision{Send, SendEndOfSpeech, Drop}, run(g, 3, false))

	// Switching modes mid-spurt ends the spurt with a marker.
	g.SetReleaseDelay(0)
	g.SetActive(false)
	run(g, 2, true)
	g.SetMode(PushToTalk)
	assert.Equal(t, []Decision{SendEndOfSpeech, Drop}, run(g, 2, true))
	g.SetMode(Mode(7))
	assert.Equal(t, PushToTalk, g.Mode())
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "send end of speech", SendEndOfSpeech.String())
	assert.Equal(t, "drop", Drop.String())
	assert.Equal(t, "send", Send.String())
	assert.Equal(t, "unknown", Decision(9).String())
	assert.Equal(t, "voice activity", VoiceActivity.String())
	assert.Equal(t, "push to talk", PushToTalk.String())
	assert.Equal(t, "unknown", Mode(9).String())
	assert.True(t, Send.Sends())
	assert.True(t, SendEndOfSpeech.Sends())
	assert.False(t, Drop.Sends())
}

func TestNextDoesNotAllocate(t *testing.T) {
	g := New()
	g.SetReleaseDelay(60)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		g.SetActive(i%7 < 3)
		g.Next(i%5 == 0)
	})
	assert.Zero(t, allocs)
}

// TestConcurrentKey toggles the key from another goroutine while frames are decided, and checks
// that the decisions always form well-shaped spurts: every marker closes a spurt, nothing is sent
// outside one.
func TestConcurrentKey(t *testing.T) {
	g := New()
	g.SetReleaseDelay(40)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				g.SetActive(i%3 == 0)
			}
		}
	})
	inSpurt := false
	for range 20000 {
		switch g.Next(false) {
		case Send:
			inSpurt = true
		case SendEndOfSpeech:
			require.True(t, inSpurt, "a marker closes a spurt")
			inSpurt = false
		case Drop:
			require.False(t, inSpurt, "a spurt ends with a marker, never with a drop")
		}
	}
	close(stop)
	wg.Wait()
}
