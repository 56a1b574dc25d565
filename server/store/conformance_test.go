package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/store/pgtest"
)

// The store's tests are its conformance suite: each runs against SQLite and against PostgreSQL
// (package pgtest: skipped with the reason where there is none, failed under make test).
func TestMain(m *testing.M) { pgtest.Main(m) }

// forEachStore runs test on a fresh empty store of each dialect, SQLite both in memory (one
// connection) and in a data directory (a writer and its readers).
func forEachStore(t *testing.T, test func(t *testing.T, s *DB)) {
	t.Run("sqlite", func(t *testing.T) { test(t, openMemory(t)) })
	t.Run("sqlite-dir", func(t *testing.T) { test(t, openDir(t)) })
	t.Run("postgres", func(t *testing.T) { test(t, openPostgres(t)) })
}

// forEachDatabase runs test with a fresh database of each dialect, which open opens (again
// after a Close: a restart); the test closes what it opens.
func forEachDatabase(t *testing.T, test func(t *testing.T, open func() (*DB, error))) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		test(t, func() (*DB, error) { return OpenSQLite(context.Background(), dir) })
	})
	t.Run("postgres", func(t *testing.T) {
		u := postgresDatabase(t)
		test(t, func() (*DB, error) { return OpenPostgres(context.Background(), u, PostgresOptions{}) })
	})
}

// openMemory opens an in-memory SQLite store that the test closes when it ends.
func openMemory(t *testing.T) *DB {
	t.Helper()
	s, err := OpenSQLite(context.Background(), "")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// openDir opens a SQLite store in a fresh data directory that the test closes when it ends.
func openDir(t *testing.T) *DB {
	t.Helper()
	s, err := OpenSQLite(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// postgresDatabase returns the URL of a fresh migrated PostgreSQL database for t.
func postgresDatabase(t testing.TB) string {
	t.Helper()
	return pgtest.Database(t, "sdkpp_schema_"+PostgresSchemaID(), func(u string) error {
		s, err := OpenPostgres(context.Background(), u, PostgresOptions{})
		if err != nil {
			return err
		}
		return s.Close()
	})
}

// openPostgres opens a store on a fresh PostgreSQL database that the test closes when it ends.
func openPostgres(t testing.TB) *DB {
	t.Helper()
	s, err := OpenPostgres(context.Background(), postgresDatabase(t), PostgresOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}
