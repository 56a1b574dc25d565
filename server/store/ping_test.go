package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Ping answers while the database does, in and out of a transaction, and fails once the store
// is closed: the check /healthz and /readyz make.
func TestPing(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, open func() (*DB, error)) {
		ctx := context.Background()
		s, err := open()
		require.NoError(t, err)
		require.NoError(t, s.Ping(ctx))
		require.NoError(t, s.WithTx(ctx, func(tx Store) error { return tx.Ping(ctx) }))
		require.NoError(t, s.Close())
		err = s.Ping(ctx)
		require.Error(t, err)
		require.Contains(t, err.Error(), "store: ping")
	})
}
