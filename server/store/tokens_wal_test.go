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

// testToken is the access token whose hash is the SHA-256 of i.
func testToken(i int64, exp time.Time) *Token {
	h := sha256.Sum256(binary.BigEndian.AppendUint64(nil, uint64(i)))
	return &Token{Hash: h[:], Kind: AccessToken, AuthorizationID: 1, AppID: 1, UserID: 2,
		Scopes: []string{"identify"}, ExpiresAt: exp, CreatedAt: exp.Add(-time.Hour)}
}

// A token issued alone is a commit of its own: the pages it writes to the WAL are the endpoint's
// cost on SQLite. Its row and its hash's key are one b-tree (WITHOUT ROWID): besides the index
// of its authorization, about one page more when a leaf splits.
func TestTokenCommitPages(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	s.checkpoints.commits.Store(-1 << 40) // no checkpoint: the WAL only grows
	exp := time.Now().Add(time.Hour)
	const warm, n = 2000, 1000
	for i := range int64(warm) { // a table of some depth
		require.NoError(t, s.InsertToken(ctx, testToken(i, exp)))
	}
	wal := filepath.Join(dir, DatabaseFile+"-wal")
	before, err := os.Stat(wal)
	require.NoError(t, err)
	for i := range int64(n) {
		require.NoError(t, s.InsertToken(ctx, testToken(warm+i, exp)))
	}
	after, err := os.Stat(wal)
	require.NoError(t, err)
	var pageSize int64
	require.NoError(t, s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize))
	frames := float64(after.Size()-before.Size()) / float64(pageSize+24) / n // a frame: a 24-byte header and a page
	t.Logf("WAL pages per token: %.2f", frames)
	assert.Less(t, frames, 3.1, "a rowid table and the hash's index wrote about 3.5")
}

// BenchmarkInsertTokens issues tokens from 8 goroutines at once, as the token endpoint's
// benchmark (bench/auth) does, and reports how many share a commit.
func BenchmarkInsertTokens(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, b.TempDir())
	require.NoError(b, err)
	defer s.Close()
	exp := time.Now().Add(time.Hour)
	var next atomic.Int64
	before := s.group.commits.Load()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := s.InsertToken(ctx, testToken(i, exp)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/float64(s.group.commits.Load()-before), "tokens/commit")
}
