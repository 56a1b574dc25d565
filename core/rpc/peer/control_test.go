package peer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rpc"
)

// The "voice" line command changes one field of the voice settings, and refuses bad input
// without changing anything.
func TestExecVoice(t *testing.T) {
	p, err := Listen(Config{Dir: t.TempDir(), Index: 0})
	require.NoError(t, err)
	defer p.Close()

	for _, line := range []string{"voice mute true", "voice mode ptt", "voice ptt-key CTRL + ALT + T",
		"voice input-volume 42.5", "voice output-volume 200", "voice noise-cancellation 1", "voice agc false"} {
		reply, err := p.Exec(line)
		require.NoError(t, err, line)
		assert.Equal(t, "sent VOICE_SETTINGS_UPDATE to 0", reply, line)
	}
	want := rpc.DefaultVoiceSettings
	want.Mute, want.NoiseCancellation, want.AutomaticGainControl = true, true, false
	want.Mode = rpc.VoiceMode{Type: rpc.VoiceModePushToTalk, Shortcut: "CTRL + ALT + T"}
	want.Input.Volume, want.Output.Volume = 42.5, 200
	assert.Equal(t, want, p.VoiceSettings())

	for _, line := range []string{"voice", "voice mute maybe", "voice input-volume 101", "voice output-volume -1",
		"voice mode loud", "voice colour blue"} {
		_, err := p.Exec(line)
		assert.Error(t, err, line)
	}
	assert.Equal(t, want, p.VoiceSettings(), "refused lines change nothing")
}
