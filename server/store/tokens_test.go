package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/store/pgtest"
)

// The tokens issued before tokens carried their id survive the migration that introduced ids:
// each is found by its hash (legacy), keeps its columns, gets an id below every snowflake, and
// can be used and deleted by that id; new tokens go in beside them.
func TestLegacyTokensSurviveTheirMigration(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		driver string
		dsn    func(t *testing.T) string
		d      func() *dialect
		open   func(dsn string) (*DB, error)
	}{
		{"sqlite", "sqlite",
			func(t *testing.T) string { return filepath.Join(t.TempDir(), DatabaseFile) },
			sqliteDialect,
			func(dsn string) (*DB, error) { return OpenSQLite(ctx, filepath.Dir(dsn)) }},
		{"postgres", "pgx",
			func(t *testing.T) string { return pgtest.Database(t, "", nil) },
			postgresDialect,
			func(dsn string) (*DB, error) { return OpenPostgres(ctx, dsn, PostgresOptions{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := tc.dsn(t)
			// The schema as it was before the migration of token ids, with two tokens in it.
			raw, err := sql.Open(tc.driver, dsn)
			require.NoError(t, err)
			d := tc.d()
			at := slices.IndexFunc(d.migrations, func(m string) bool { return strings.Contains(m, "tokens_legacy") })
			require.Positive(t, at, "the migration of token ids")
			d.migrations = d.migrations[:at]
			require.NoError(t, (&DB{db: raw, d: d}).migrate(ctx))
			exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, h := range []string{"old-access", "old-refresh"} {
				kind := AccessToken
				if h == "old-refresh" {
					kind = RefreshToken
				}
				_, err := raw.ExecContext(ctx, d.text(`INSERT INTO tokens (hash, kind, authorization_id, app_id, user_id, scopes, expires_at, created_at, grant_id, used_at)
					VALUES (?,?,?,?,?,?,?,?,?,?)`), []byte(h), kind, 9, 1, 2, "identify", ts(exp), ts(exp.Add(-time.Hour)), 5, 0)
				require.NoError(t, err)
			}
			require.NoError(t, raw.Close())

			s, err := tc.open(dsn)
			require.NoError(t, err)
			defer s.Close()
			access, err := s.GetLegacyToken(ctx, []byte("old-access"))
			require.NoError(t, err)
			assert.True(t, access.Legacy)
			assert.Equal(t, Token{ID: access.ID, Hash: []byte("old-access"), Legacy: true, Kind: AccessToken, AuthorizationID: 9,
				AppID: 1, UserID: 2, Scopes: []string{"identify"}, ExpiresAt: exp, CreatedAt: exp.Add(-time.Hour), GrantID: 5},
				*access)
			refresh, err := s.GetLegacyToken(ctx, []byte("old-refresh"))
			require.NoError(t, err)
			assert.NotEqual(t, access.ID, refresh.ID)
			byID, err := s.GetToken(ctx, refresh.ID)
			require.NoError(t, err)
			assert.Equal(t, []byte("old-refresh"), byID.Hash)
			require.NoError(t, s.UseToken(ctx, refresh.ID, exp.Add(-time.Minute)))

			// A new token: under a snowflake id, with the hash of its secret, which no legacy
			// lookup finds.
			fresh := &Token{ID: 1 << 60, Hash: []byte("old-access"), Kind: AccessToken, AuthorizationID: 9, AppID: 1, UserID: 2,
				Scopes: []string{"identify"}, ExpiresAt: exp, CreatedAt: exp}
			require.NoError(t, s.InsertToken(ctx, fresh))
			again, err := s.GetLegacyToken(ctx, []byte("old-access"))
			require.NoError(t, err)
			assert.Equal(t, access.ID, again.ID, "a new token with the same hash is no legacy token")
			max, err := s.MaxID(ctx)
			require.NoError(t, err)
			assert.Equal(t, fresh.ID, max, "token ids count for the id floor")
			require.NoError(t, s.DeleteToken(ctx, access.ID))
			_, err = s.GetLegacyToken(ctx, []byte("old-access"))
			assert.ErrorIs(t, err, ErrNotFound)
		})
	}
}
