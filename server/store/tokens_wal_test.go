package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testToken is the access token of row id whose hash is the SHA-256 of id.
func testToken(id uint64, exp time.Time) *Token {
	h := sha256.Sum256(binary.BigEndian.AppendUint64(nil, id))
	return &Token{ID: id, Hash: h[:], Kind: AccessToken, AuthorizationID: 1, AppID: 1, UserID: 2,
		Scopes: []string{"identify"}, ExpiresAt: exp, CreatedAt: exp.Add(-time.Hour)}
}

// BenchmarkInsertTokens issues tokens from 8 goroutines at once, as the token endpoint's
// benchmark (bench/auth) does, into a table of 20000, and reports how many share a commit and
// the pages the WAL gets per token (the ids grow, as snowflakes do: the table and the
// authorization's index append to their last leaves).
func BenchmarkInsertTokens(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := OpenSQLite(ctx, dir)
	require.NoError(b, err)
	defer s.Close()
	exp := time.Now().Add(time.Hour)
	const table = 20000
	require.NoError(b, s.WithTx(ctx, func(st Store) error {
		for i := range uint64(table) {
			if err := st.InsertToken(ctx, testToken(1+i, exp)); err != nil {
				return err
			}
		}
		return nil
	}))
	s.checkpoints.commits.Store(-1 << 40) // no checkpoint: the WAL only grows
	_, err = s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	require.NoError(b, err)
	var pageSize int64
	require.NoError(b, s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize))
	var next atomic.Uint64
	next.Store(table)
	before := s.group.commits.Load()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= table+uint64(b.N); i = next.Add(1) {
				if err := s.InsertToken(ctx, testToken(i, exp)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	wal, err := os.Stat(filepath.Join(dir, DatabaseFile+"-wal"))
	require.NoError(b, err)
	b.ReportMetric(float64(b.N)/float64(s.group.commits.Load()-before), "tokens/commit")
	b.ReportMetric(float64(wal.Size())/float64(pageSize+24)/float64(b.N), "pages/token") // a frame: a 24-byte header and a page
}

// Tokens inserted at once share a statement on PostgreSQL and a commit on SQLite (the token writer);
// either way each caller gets its own token's outcome: a taken id fails alone.
func TestInsertTokensAtOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		require.NoError(t, s.InsertToken(ctx, testToken(7, exp)))
		const n = 200
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = s.InsertToken(ctx, testToken(uint64(i), exp)) })
		}
		wg.Wait()
		for i, err := range errs {
			if i == 7 {
				assert.Error(t, err, "the id was taken")
				continue
			}
			require.NoError(t, err, "token %d", i)
			got, err := s.GetToken(ctx, uint64(i))
			require.NoError(t, err)
			assert.Equal(t, AccessToken, got.Kind)
		}
	})
}

// A group of the token writer in which one id is taken stores the others and fails that one
// alone, on either store's flush.
func TestTokenGroupWithATakenID(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		require.NoError(t, s.InsertToken(ctx, testToken(2, exp)))
		flush := s.insertTokensPostgres
		if s.group != nil {
			flush = s.insertTokensSQLite
		}
		errs := make([]error, 3)
		require.NoError(t, flush(ctx, []*Token{testToken(1, exp), testToken(2, exp), testToken(3, exp)}, errs))
		assert.NoError(t, errs[0])
		assert.True(t, s.isUnique(errs[1]), "the taken id: %v", errs[1])
		assert.NoError(t, errs[2])
		for _, id := range []uint64{1, 3} {
			_, err := s.GetToken(ctx, id)
			assert.NoError(t, err, "token %d", id)
		}
	})
}

// On SQLite, a group of the token writer that meets no open transaction is stored as a
// statement of its own, without BEGIN and COMMIT statements; one that meets a group commit
// under way joins it, and is stored by its commit.
func TestTokenGroupAloneOrInAGroup(t *testing.T) {
	s := openDir(t)
	ctx := context.Background()
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	counts := countOps(s)

	errs := make([]error, 2)
	require.NoError(t, s.insertTokensSQLite(ctx, []*Token{testToken(1, exp), testToken(2, exp)}, errs))
	require.Equal(t, []error{nil, nil}, errs)
	assert.Zero(t, counts()["commit"], "alone: no COMMIT of its own")

	release := make(chan struct{})
	var wg sync.WaitGroup
	var txErr error
	wg.Go(func() {
		txErr = s.WithTx(ctx, func(st Store) error {
			<-release
			return st.PutAuthorization(ctx, &Authorization{ID: 9, AppID: 9, UserID: 2, Scopes: []string{"identify"}})
		})
	})
	require.Eventually(t, func() bool { return s.group.members() == 1 }, 10*time.Second, time.Millisecond)
	var flushErr error
	wg.Go(func() { flushErr = s.insertTokensSQLite(ctx, []*Token{testToken(3, exp), testToken(4, exp)}, errs) })
	require.Eventually(t, func() bool { return s.group.members() == 2 }, 10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	require.NoError(t, txErr)
	require.NoError(t, flushErr)
	require.Equal(t, []error{nil, nil}, errs)
	assert.Equal(t, 1, counts()["commit"], "in the group: stored by its one commit")
	for id := range uint64(4) {
		_, err := s.GetToken(ctx, id+1)
		assert.NoError(t, err, "token %d", id+1)
	}
}
