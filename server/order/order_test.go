package order

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/snowflake"
)

// A lock that records what its holders used: the next holder, on another node, makes ids above
// every id the previous one made, though its node's bits are lower.
func TestHoldCarriesTheLargestID(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	var recorded uint64
	held := false
	lock := Lock(func(context.Context, string) (uint64, func(uint64), error) {
		require.False(t, held)
		held = true
		return recorded, func(last uint64) { held, recorded = false, max(recorded, last) }, nil
	})
	hi, lo := snowflake.NewNode(c, 0, 7), snowflake.NewNode(c, 0, 1)
	release, err := Hold(context.Background(), lock, "k", hi)
	require.NoError(t, err)
	a := hi.Next()
	release()
	assert.Greater(t, recorded, a)
	release, err = Hold(context.Background(), lock, "k", lo)
	require.NoError(t, err)
	b := lo.Next()
	release()
	assert.Greater(t, b, a, "the second node's id is above the first's")
	// No lock: nothing held.
	release, err = Hold(context.Background(), nil, "k", lo)
	require.NoError(t, err)
	release()
}
