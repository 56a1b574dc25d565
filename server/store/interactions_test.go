package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pending interaction is answered once and a modal closed once; the sweep forgets both.
func TestPendingInteractions(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		p := &PendingInteraction{ID: 10, AppID: 1, BotUserID: 2, UserID: 3, ChannelID: 4, Kind: 2,
			TokenHash: []byte{1, 2, 3}, Meta: `{"id":"10"}`, CreatedAt: t0}
		require.NoError(t, s.PutInteraction(ctx, p))
		got, err := s.GetInteraction(ctx, 10)
		require.NoError(t, err)
		assert.Equal(t, p, got)
		require.NoError(t, s.AnswerInteraction(ctx, 10))
		require.ErrorIs(t, s.AnswerInteraction(ctx, 10), ErrConflict, "answered once")
		require.ErrorIs(t, s.AnswerInteraction(ctx, 11), ErrNotFound)
		got, err = s.GetInteraction(ctx, 10)
		require.NoError(t, err)
		assert.True(t, got.Answered)

		m := &OpenModal{ID: 10, AppID: 1, UserID: 3, GuildID: 5, ChannelID: 4, CustomID: "fb", Fields: "[]", OpenedAt: t0.Add(time.Second)}
		require.NoError(t, s.PutModal(ctx, m))
		gm, err := s.GetModal(ctx, 10)
		require.NoError(t, err)
		assert.Equal(t, m, gm)
		require.NoError(t, s.DeleteModal(ctx, 10))
		require.ErrorIs(t, s.DeleteModal(ctx, 10), ErrNotFound, "closed once")

		require.NoError(t, s.PutModal(ctx, m))
		require.NoError(t, s.SweepInteractions(ctx, t0))
		_, err = s.GetInteraction(ctx, 10)
		require.ErrorIs(t, err, ErrNotFound, "swept")
		_, err = s.GetModal(ctx, 10)
		require.NoError(t, err, "opened after the sweep's time: kept")
	})
}
