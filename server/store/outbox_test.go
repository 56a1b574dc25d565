package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The outbox: events stored in a transaction are there once it commits and gone if it rolls
// back; a key lists its own in id order; a deleted event is gone; old ones give their keys.
func TestOutbox(t *testing.T) { forEachStore(t, testOutbox) }

func testOutbox(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var a1, a2 uint64
	require.NoError(t, s.WithTx(ctx, func(tx Store) error {
		var err error
		if a1, err = tx.AddOutbox(ctx, "lobby:1", []byte(`{"n":1}`), t0); err != nil {
			return err
		}
		a2, err = tx.AddOutbox(ctx, "lobby:1", []byte(`{"n":2}`), t0.Add(time.Second))
		return err
	}))
	require.Greater(t, a2, a1)
	require.Error(t, s.WithTx(ctx, func(tx Store) error {
		if _, err := tx.AddOutbox(ctx, "lobby:1", []byte(`{"n":3}`), t0); err != nil {
			return err
		}
		return context.Canceled // rolled back with its change
	}))
	b1, err := s.AddOutbox(ctx, "lobby:2", []byte(`{"n":9}`), t0.Add(time.Minute))
	require.NoError(t, err)
	got, err := s.ListOutbox(ctx, "lobby:1")
	require.NoError(t, err)
	require.Equal(t, []OutboxEvent{
		{ID: a1, Key: "lobby:1", Data: []byte(`{"n":1}`), CreatedAt: t0},
		{ID: a2, Key: "lobby:1", Data: []byte(`{"n":2}`), CreatedAt: t0.Add(time.Second)},
	}, got)
	keys, err := s.OutboxKeys(ctx, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, []string{"lobby:1"}, keys, "lobby:2's event is not old enough")
	require.NoError(t, s.DeleteOutbox(ctx, a1))
	require.NoError(t, s.DeleteOutbox(ctx, a1), "gone already")
	got, err = s.ListOutbox(ctx, "lobby:1")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, a2, got[0].ID)
	require.NoError(t, s.DeleteOutbox(ctx, a2))
	require.NoError(t, s.DeleteOutbox(ctx, b1))
	keys, err = s.OutboxKeys(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, keys)
}
