package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// VER-1: a channel's slowmode and topic are kept; a channel never modified has none.
func TestChannelSettings(t *testing.T) { forEachStore(t, testChannelSettings) }

func testChannelSettings(t *testing.T, s *DB) {
	ctx := context.Background()
	c, err := s.GetChannelSettings(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, ChannelSettings{ChannelID: 10}, *c)
	require.NoError(t, s.PutChannelSettings(ctx, &ChannelSettings{ChannelID: 10, RateLimitPerUser: 30, Topic: "t"}))
	require.NoError(t, s.PutChannelSettings(ctx, &ChannelSettings{ChannelID: 10, RateLimitPerUser: 60, Topic: "u"}))
	c, err = s.GetChannelSettings(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, ChannelSettings{ChannelID: 10, RateLimitPerUser: 60, Topic: "u"}, *c)
}
