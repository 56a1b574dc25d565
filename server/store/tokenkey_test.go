package store

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/store/pgtest"
)

// The key of signed tokens is made once per database and read by every store that opens it
// afterwards: a restart (SQLite's file), and every node on one PostgreSQL, even nodes that open
// a fresh database at the same moment, sign and check with one key; another database has
// another key.
func TestTokenKeyIsTheDatabases(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		dsn  func(t *testing.T) string
		open func(dsn string, node int) (*DB, error)
	}{
		{"sqlite", func(t *testing.T) string { return t.TempDir() },
			func(dir string, _ int) (*DB, error) { return OpenSQLite(ctx, dir) }},
		{"postgres", func(t *testing.T) string { return pgtest.Database(t, "", nil) },
			func(dsn string, node int) (*DB, error) { return OpenPostgres(ctx, dsn, PostgresOptions{NodeID: node}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := tc.dsn(t)
			// Stores opening a fresh database together (one at a time on SQLite's file, which
			// one process opens).
			n := 3
			if tc.name == "sqlite" {
				n = 1
			}
			stores := make([]*DB, n)
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range stores {
				wg.Go(func() { stores[i], errs[i] = tc.open(dsn, i) })
			}
			wg.Wait()
			for i, s := range stores {
				require.NoError(t, errs[i])
				t.Cleanup(func() { _ = s.Close() })
			}
			key := append([]byte(nil), stores[0].TokenKey()...)
			require.Len(t, key, TokenKeySize)
			assert.NotEqual(t, make([]byte, TokenKeySize), key, "a key of zeros")
			for _, s := range stores[1:] {
				assert.Equal(t, key, s.TokenKey(), "two stores of one database")
			}
			if tc.name == "sqlite" { // a restart
				require.NoError(t, stores[0].Close())
			}
			again, err := tc.open(dsn, n)
			require.NoError(t, err)
			defer again.Close()
			assert.Equal(t, key, again.TokenKey(), "a store opened later")

			other, err := tc.open(tc.dsn(t), 0)
			require.NoError(t, err)
			defer other.Close()
			assert.NotEqual(t, key, other.TokenKey(), "another database")
		})
	}
}

// An in-memory SQLite store has a key of its own too.
func TestTokenKeyInMemory(t *testing.T) {
	s, err := OpenSQLite(context.Background(), "")
	require.NoError(t, err)
	defer s.Close()
	assert.Len(t, s.TokenKey(), TokenKeySize)
}

// InitSetting keeps the first value stored under a key: stores of one database that each
// propose their own at the same moment (nodes starting together) all get the one kept, and a
// later proposal changes nothing.
func TestInitSettingKeepsTheFirst(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		open  func(t *testing.T) func(node int) (*DB, error)
		nodes int
	}{
		{"sqlite", func(t *testing.T) func(int) (*DB, error) {
			s, err := OpenSQLite(ctx, t.TempDir())
			return func(int) (*DB, error) { return s, err } // one process opens the file: one store
		}, 1},
		{"postgres", func(t *testing.T) func(int) (*DB, error) {
			dsn := pgtest.Database(t, "", nil)
			return func(node int) (*DB, error) { return OpenPostgres(ctx, dsn, PostgresOptions{NodeID: node}) }
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := tc.open(t)
			stores := make([]*DB, tc.nodes)
			for i := range stores {
				s, err := open(i)
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				stores[i] = s
			}
			const workers = 6
			got := make([][]byte, workers)
			errs := make([]error, workers)
			var wg sync.WaitGroup
			for i := range workers {
				wg.Go(func() {
					got[i], errs[i] = stores[i%len(stores)].InitSetting(ctx, "test.key", []byte{byte('a' + i)})
				})
			}
			wg.Wait()
			for i := range workers {
				require.NoError(t, errs[i])
				assert.Equal(t, got[0], got[i], "every caller gets the value kept")
			}
			require.Len(t, got[0], 1)
			assert.Contains(t, "abcdef", string(got[0]), "the value kept is one proposed")
			again, err := stores[0].InitSetting(ctx, "test.key", []byte("later"))
			require.NoError(t, err)
			assert.Equal(t, got[0], again, "a later proposal changes nothing")
			kept, err := stores[len(stores)-1].GetSetting(ctx, "test.key")
			require.NoError(t, err)
			assert.Equal(t, got[0], kept)
		})
	}
}
