package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkStoreLobbyMessages commits groups of 8 messages of one lobby, as the lobbies
// service's writer does under load, in turn to 10 lobbies among 1000, and reports on SQLite the
// WAL frames a commit writes (the lobby's row is read, not written). sqlite-one-lobby commits
// them all to one lobby, as a fan-out bench's sender does, and sqlite-single each message in a
// commit of its own, as an idle service does.
func BenchmarkStoreLobbyMessages(b *testing.B) {
	sqlite := func(turns, group int) func(b *testing.B) {
		return func(b *testing.B) {
			dir := b.TempDir()
			s, err := OpenSQLite(context.Background(), dir)
			require.NoError(b, err)
			defer s.Close()
			benchLobbyMessages(b, s, filepath.Join(dir, DatabaseFile+"-wal"), turns, group)
		}
	}
	b.Run("sqlite", sqlite(10, 8))
	b.Run("sqlite-one-lobby", sqlite(1, 8))
	b.Run("sqlite-single", sqlite(1, 1))
	b.Run("postgres", func(b *testing.B) { benchLobbyMessages(b, openPostgres(b), "", 10, 8) })
}

// benchLobbyMessages runs BenchmarkStoreLobbyMessages on s, whose WAL file is wal ("" when it
// has none), its commits of group messages in turn to turns lobbies.
func benchLobbyMessages(b *testing.B, s *DB, wal string, turns, group int) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const lobbies = 1000
	require.NoError(b, s.WithTx(ctx, func(st Store) error {
		for i := range uint64(lobbies) {
			if err := st.CreateLobby(ctx, &Lobby{ID: 1 + i, AppID: 1, IdleTimeout: time.Hour, LastActivityAt: now,
				ExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}))
	var pageSize int64
	if wal != "" {
		s.checkpoints.commits.Store(-1 << 40) // no checkpoint: the WAL only grows
		_, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		require.NoError(b, err)
		require.NoError(b, s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize))
	}
	id := uint64(1 << 40)
	msgs := make([]*LobbyMessage, group)
	var lsn string // PostgreSQL's WAL position
	if s.d.name == "postgres" {
		require.NoError(b, s.db.QueryRowContext(ctx, `SELECT pg_current_wal_lsn()::TEXT`).Scan(&lsn))
	}
	cpu := processCPU(b)
	b.ResetTimer()
	for i := range b.N {
		lobby := uint64(1 + i%turns*97)
		at := now.Add(time.Duration(i) * time.Millisecond)
		for k := range msgs {
			id++
			msgs[k] = &LobbyMessage{ID: id, LobbyID: lobby, AppID: 1, AuthorID: 7, Content: "gg, one more round?", CreatedAt: at}
		}
		if err := s.StoreLobbyMessages(ctx, lobby, msgs, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/commit") // this process's, not a server's
	if lsn != "" {
		var bytes float64
		require.NoError(b, s.db.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)`, lsn).Scan(&bytes))
		b.ReportMetric(bytes/float64(b.N), "wal-bytes/commit")
	}
	if wal != "" {
		fi, err := os.Stat(wal)
		require.NoError(b, err)
		b.ReportMetric(float64(fi.Size())/float64(pageSize+24)/float64(b.N), "frames/commit") // a frame: a 24-byte header and a page
	}
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHeldLobbyMessage commits one lobby message at a time with its outbox row and the
// epoch check, on the lobby's order lock's connection, as a cluster node sends a message.
func BenchmarkHeldLobbyMessage(b *testing.B) {
	s := openPostgres(b)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(b, s.CreateLobby(ctx, &Lobby{ID: 1, AppID: 1, IdleTimeout: time.Hour, LastActivityAt: now,
		ExpiresAt: now.Add(time.Hour), CreatedAt: now}))
	id := uint64(1 << 40)
	h, err := s.OrderLock(ctx, "lobby:1", func() uint64 { return id + 1 })
	require.NoError(b, err)
	defer h.Unlock(nil)
	epoch, err := s.SharedEpoch(ctx, "lobbies")
	require.NoError(b, err)
	data := []byte(strings.Repeat("x", 600))
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		id++
		m := &LobbyMessage{ID: id, LobbyID: 1, AppID: 1, AuthorID: 7, Content: "gg, one more round?", CreatedAt: now}
		out := &OutboxRows{Key: "lobby:1", Data: [][]byte{data}, At: now, EpochKey: "lobbies", Epoch: epoch}
		if err := h.Store.StoreLobbyMessages(ctx, 1, []*LobbyMessage{m}, nil, out); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
}
