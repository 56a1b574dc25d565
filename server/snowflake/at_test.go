package snowflake

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sdkpp/internal/clock"
)

// At bounds the ids of a millisecond: an id made at t is at or above At(t), below At(t+1ms).
func TestAt(t *testing.T) {
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	g := New(clock.NewFake(at), 0)
	id := g.Next()
	assert.GreaterOrEqual(t, id, At(at))
	assert.Less(t, id, At(at.Add(time.Millisecond)))
	assert.Equal(t, at, Time(At(at)))
	assert.Zero(t, At(time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC)), "before the epoch")
}
