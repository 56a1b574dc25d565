package voice

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lowLatencyEngine is an Engine with a low-latency mode; the embedded Engine is nil, so a test
// fails on any method of it the call uses beyond the ones defined here.
type lowLatencyEngine struct {
	Engine
	low atomic.Bool
}

func (e *lowLatencyEngine) Start() error          { return nil }
func (e *lowLatencyEngine) Close() error          { return nil }
func (e *lowLatencyEngine) SetSelfMute(bool)      {}
func (e *lowLatencyEngine) SetSelfDeaf(bool)      {}
func (e *lowLatencyEngine) SetLowLatency(on bool) { e.low.Store(on) }

func TestLowLatencyReachesTheEngine(t *testing.T) {
	eng := &lowLatencyEngine{}
	c, err := Start(Config{
		LobbyID:   1,
		Send:      func(context.Context, int, any) error { return nil },
		NewEngine: func(EngineConfig) (Engine, error) { return eng, nil },
	})
	require.NoError(t, err)
	t.Cleanup(c.End)
	assert.False(t, c.LowLatency(), "off by default")
	c.SetLowLatency(true)
	assert.True(t, c.LowLatency())
	assert.True(t, eng.low.Load(), "the engine switched")
	c.SetLowLatency(false)
	assert.False(t, c.LowLatency())
	assert.False(t, eng.low.Load())
}
