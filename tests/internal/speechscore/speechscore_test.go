package speechscore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
	"sdkpp/audio/quality"
)

// Speech heard as sent, or as Opus alone leaves it, is within the margin; speech heard as
// nothing, or as another voice, is not.
func TestCompare(t *testing.T) {
	sent := quality.SpeechLike(3*pcm.SampleRate, pcm.SampleRate, 1)
	other := quality.SpeechLike(3*pcm.SampleRate, pcm.SampleRate, 2)
	opus, err := OpusRoundTrip(sent)
	require.NoError(t, err)
	// A frame of silence inserted halfway, as a jitter buffer stretching its delay plays it.
	half := len(opus) / 2
	stretched := append(append(append([]int16(nil), opus[:half]...), make([]int16, pcm.FrameSamples)...), opus[half:]...)
	quiet := make([]int16, len(sent))
	for i := range quiet {
		quiet[i] = int16(i%7) - 3 // a faint hiss, where the speech should be
	}
	for _, tc := range []struct {
		name  string
		heard []int16
		ok    bool
	}{
		{"as sent", sent, true},
		{"through Opus", opus, true},
		{"through Opus, stretched by a frame", stretched, true},
		{"nothing", quiet, false},
		{"another voice", other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compare(sent, tc.heard)
			require.NoError(t, err)
			t.Log(s)
			assert.Equal(t, tc.ok, s.OK(), "%s", s)
		})
	}
}
