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

// An interaction's state past its answer: found by its token's hash; a deferral taken once; its
// original message; its messages, ephemeral ones kept whole and edited, each deleted once and
// swept with the interaction.
func TestInteractionResponseState(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		p := &PendingInteraction{ID: 20, AppID: 1, BotUserID: 2, UserID: 3, ChannelID: 4, Kind: 4,
			TokenHash: []byte{9, 8, 7}, Meta: `{}`, CreatedAt: t0, FocusType: 3}
		require.NoError(t, s.PutInteraction(ctx, p))
		require.NoError(t, s.PutInteraction(ctx, &PendingInteraction{ID: 21, TokenHash: []byte{1}, Meta: `{}`, CreatedAt: t0}))
		got, err := s.InteractionByToken(ctx, []byte{9, 8, 7})
		require.NoError(t, err)
		assert.Equal(t, p, got)
		_, err = s.InteractionByToken(ctx, []byte{9, 8})
		require.ErrorIs(t, err, ErrNotFound)

		require.ErrorIs(t, s.TakeDeferral(ctx, 20), ErrConflict, "not deferred")
		require.ErrorIs(t, s.TakeDeferral(ctx, 99), ErrNotFound)
		require.ErrorIs(t, s.DeferInteraction(ctx, 99, 0), ErrNotFound)
		require.NoError(t, s.DeferInteraction(ctx, 20, 64))
		got, err = s.GetInteraction(ctx, 20)
		require.NoError(t, err)
		assert.True(t, got.Deferred)
		assert.Equal(t, 64, got.DeferFlags)
		require.NoError(t, s.TakeDeferral(ctx, 20))
		require.ErrorIs(t, s.TakeDeferral(ctx, 20), ErrConflict, "taken once")

		require.NoError(t, s.SetInteractionOriginal(ctx, 20, 500))
		require.ErrorIs(t, s.SetInteractionOriginal(ctx, 99, 500), ErrNotFound)
		got, err = s.GetInteraction(ctx, 20)
		require.NoError(t, err)
		assert.Equal(t, uint64(500), got.OriginalID)
		assert.False(t, got.Deferred)

		require.NoError(t, s.PutInteractionMessage(ctx, &InteractionMessage{InteractionID: 20, MessageID: 500}))
		require.NoError(t, s.PutInteractionMessage(ctx, &InteractionMessage{InteractionID: 20, MessageID: 501, Ephemeral: `{"id":"501"}`}))
		require.NoError(t, s.PutInteractionMessage(ctx, &InteractionMessage{InteractionID: 21, MessageID: 600}))
		m, err := s.GetInteractionMessage(ctx, 20, 500)
		require.NoError(t, err)
		assert.Equal(t, &InteractionMessage{InteractionID: 20, MessageID: 500}, m)
		_, err = s.GetInteractionMessage(ctx, 21, 500)
		require.ErrorIs(t, err, ErrNotFound, "another interaction's message")
		require.ErrorIs(t, s.SetInteractionEphemeral(ctx, 20, 500, `{}`), ErrNotFound, "not ephemeral")
		require.NoError(t, s.SetInteractionEphemeral(ctx, 20, 501, `{"id":"501","content":"x"}`))
		m, err = s.GetInteractionMessage(ctx, 20, 501)
		require.NoError(t, err)
		assert.Equal(t, `{"id":"501","content":"x"}`, m.Ephemeral)
		require.NoError(t, s.DeleteInteractionMessage(ctx, 20, 500))
		require.ErrorIs(t, s.DeleteInteractionMessage(ctx, 20, 500), ErrNotFound, "deleted once")

		require.NoError(t, s.PutInteraction(ctx, &PendingInteraction{ID: 22, TokenHash: []byte{2}, Meta: `{}`, CreatedAt: t0.Add(time.Minute)}))
		require.NoError(t, s.PutInteractionMessage(ctx, &InteractionMessage{InteractionID: 22, MessageID: 700}))
		require.NoError(t, s.SweepInteractions(ctx, t0))
		_, err = s.GetInteractionMessage(ctx, 20, 501)
		require.ErrorIs(t, err, ErrNotFound, "swept with its interaction")
		_, err = s.GetInteractionMessage(ctx, 21, 600)
		require.ErrorIs(t, err, ErrNotFound, "swept with its interaction")
		_, err = s.GetInteractionMessage(ctx, 22, 700)
		require.NoError(t, err, "its interaction is kept")
	})
}
