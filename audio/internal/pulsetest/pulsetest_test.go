package pulsetest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStartMakesSinksAndPointsTheProcessAtThem(t *testing.T) {
	s := Start(t, "alice", "bob")
	assert.Equal(t, s.Address, os.Getenv("PULSE_SERVER"))

	sinks := s.Pactl(t, "list", "short", "sinks")
	assert.Contains(t, sinks, "alice")
	assert.Contains(t, sinks, "bob")
	assert.Contains(t, sinks, "s16le 1ch 48000Hz")
	assert.Contains(t, s.Pactl(t, "list", "short", "sources"), Monitor("alice"))
	assert.Contains(t, s.Pactl(t, "info"), "Default Sink: alice")

	idx := s.LoadNullSink(t, "carol")
	assert.Contains(t, s.Pactl(t, "list", "short", "sinks"), "carol")
	s.UnloadModule(t, idx)
	assert.False(t, strings.Contains(s.Pactl(t, "list", "short", "sinks"), "carol"))
}
