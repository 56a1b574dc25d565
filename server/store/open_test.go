package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Store URLs choose the database; SQLite stays the default.
func TestOpenChoosesTheStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct{ url, dataDir, file string }{
		{"", "", ""},
		{"", filepath.Join(dir, "a"), filepath.Join(dir, "a", DatabaseFile)},
		{"sqlite:", filepath.Join(dir, "b"), filepath.Join(dir, "b", DatabaseFile)},
		{"sqlite:" + filepath.Join(dir, "c"), "", filepath.Join(dir, "c", DatabaseFile)},
		{"sqlite://" + filepath.Join(dir, "d"), "ignored", filepath.Join(dir, "d", DatabaseFile)},
	} {
		s, err := Open(ctx, tc.url, tc.dataDir, 0)
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, "sqlite", s.Dialect())
		require.NoError(t, s.Close())
		if tc.file != "" {
			_, err := os.Stat(tc.file)
			assert.NoError(t, err, "%+v", tc)
		}
	}
	_, err := Open(ctx, "mysql://root:hunter2@db/x", "", 0)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://sdkpp:hunter2@db:5432/sdkpp?sslmode=require": "postgres://sdkpp:xxxxx@db:5432/sdkpp?sslmode=require",
		"postgres://db/sdkpp?user=u&password=hunter2":            "postgres://db/sdkpp?password=xxxxx&user=u",
		"host=db user=u password=hunter2 dbname=x":               "host=db user=u password=xxxxx dbname=x",
		"postgres://db/sdkpp":                                    "postgres://db/sdkpp",
	} {
		assert.Equal(t, want, RedactURL(in), in)
	}
}
