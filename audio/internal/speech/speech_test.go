package speech

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
)

func TestFixturesAreSecondsOfSpeech(t *testing.T) {
	for _, name := range Names {
		s, err := Load(name)
		require.NoError(t, err, name)
		seconds := float64(len(s)) / pcm.SampleRate
		assert.InDelta(t, 5, seconds, 1.5, "%s lasts %.2f s", name, seconds)
		level := pcm.LevelDBFS(s)
		assert.Greater(t, level, -35.0, "%s is speech, not silence", name)
		assert.Less(t, level, -3.0, "%s leaves headroom", name)
	}
}

func TestFixturesDiffer(t *testing.T) {
	a, b := MustLoad(Alice), MustLoad(Bob)
	assert.NotEqual(t, a[:len(b)/2], b[:len(b)/2])
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("nobody")
	assert.Error(t, err)
}
