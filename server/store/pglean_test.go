package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/snowflake"
)

// Messages stored alone, as the single node's writer stores them (leanInsert on PostgreSQL):
// every field as given, a nonce or none, text PostgreSQL cannot hold made to fit as everywhere
// else, one statement reported to the observer under StoreLobbyMessages, and nothing stored in a
// lobby that is gone.
func TestStoreLobbyMessagesAlone(t *testing.T) { forEachStore(t, testStoreLobbyMessagesAlone) }

func testStoreLobbyMessagesAlone(t *testing.T, s *DB) {
	ctx, now := context.Background(), lobby100(t, s)
	id := snowflake.At(now) // as the service makes them, which the nonce's lookup relies on
	ms := []*LobbyMessage{
		{ID: id, LobbyID: 100, AppID: 1 << 35, AuthorID: 7, Content: "gg", Metadata: map[string]string{"k": "v"},
			Flags: 4, AdditionalName: "Sir", Nonce: "n-1", CreatedAt: now},
		{ID: id + 1, LobbyID: 100, AppID: 1 << 35, AuthorID: 1<<63 - 1, Content: "", CreatedAt: now.Add(time.Nanosecond)},
		{ID: id + 2, LobbyID: 100, AppID: 1 << 35, AuthorID: 7, Content: "bad \xff and \x00 bytes, long enough to move",
			AdditionalName: "\x00", CreatedAt: now},
	}
	ops := observeOps(s)
	for _, group := range [][]*LobbyMessage{ms[:1], ms[1:]} { // one row, and two
		require.NoError(t, s.StoreLobbyMessages(ctx, 100, group, nil, nil))
	}
	s.ObserveQueries(nil)
	assert.Contains(t, ops(), "StoreLobbyMessages")
	assert.NotContains(t, ops(), "other", "every statement reported under its method")
	for _, want := range ms {
		got, err := s.GetLobbyMessage(ctx, 100, want.ID)
		require.NoError(t, err, "message %d", want.ID)
		w := *want
		if s.d.name == "postgres" {
			w.Content, w.AdditionalName = pgText(w.Content), pgText(w.AdditionalName)
		}
		w.Nonce = got.Nonce // not read back: FindLobbyMessageByNonce below
		require.True(t, got.CreatedAt.Equal(w.CreatedAt), "message %d: %+v", want.ID, got)
		got.CreatedAt = w.CreatedAt
		require.Equal(t, w, *got)
	}
	found, err := s.FindLobbyMessageByNonce(ctx, 100, 7, "n-1", now.Add(-time.Minute))
	require.NoError(t, err, "the nonce")
	require.Equal(t, ms[0].ID, found.ID)
	_, err = s.FindLobbyMessageByNonce(ctx, 100, 7, "", now.Add(-time.Minute))
	require.ErrorIs(t, err, ErrNotFound, "a message without a nonce has none")

	gone := []*LobbyMessage{{ID: id + 9, LobbyID: 999, AppID: 1, AuthorID: 7, Content: "x", CreatedAt: now}}
	require.ErrorIs(t, s.StoreLobbyMessages(ctx, 999, gone, nil, nil), ErrNotFound)
	_, err = s.GetLobbyMessage(ctx, 999, gone[0].ID)
	require.ErrorIs(t, err, ErrNotFound, "a message of a lobby that is gone was stored")
}

// Messages whose statement is sent before its result is read (StartLobbyMessages, PostgreSQL
// only): stored as StoreLobbyMessages stores them while the store serves other statements
// meanwhile, the result read by wait, ErrNotFound with nothing stored in a lobby that is gone,
// and nothing sent where the store cannot (SQLite, a transaction, no messages).
func TestStartLobbyMessages(t *testing.T) { forEachStore(t, testStartLobbyMessages) }

func testStartLobbyMessages(t *testing.T, s *DB) {
	ctx, now := context.Background(), lobby100(t, s)
	id := snowflake.At(now)
	msg := func(i uint64, lobby uint64) *LobbyMessage {
		return &LobbyMessage{ID: id + i, LobbyID: lobby, AppID: 1, AuthorID: 7, Content: fmt.Sprint("m", i),
			Nonce: fmt.Sprint("n", i), CreatedAt: now}
	}
	require.NoError(t, s.WithTx(ctx, func(tx Store) error {
		assert.False(t, tx.(*DB).StartsLobbyMessages(), "in a transaction")
		_, ok := tx.(*DB).StartLobbyMessages(ctx, 100, []*LobbyMessage{msg(0, 100)})
		assert.False(t, ok, "in a transaction")
		return nil
	}))
	if s.d.name != "postgres" {
		assert.False(t, s.StartsLobbyMessages())
		_, ok := s.StartLobbyMessages(ctx, 100, []*LobbyMessage{msg(0, 100)})
		assert.False(t, ok, "on %s", s.d.name)
		return
	}
	require.True(t, s.StartsLobbyMessages())
	_, ok := s.StartLobbyMessages(ctx, 100, nil)
	require.False(t, ok, "no messages")

	ops := observeOps(s)
	group := []*LobbyMessage{msg(1, 100), msg(2, 100), msg(3, 100)}
	wait, ok := s.StartLobbyMessages(ctx, 100, group)
	require.True(t, ok)
	_, err := s.GetLobby(ctx, 100) // on another connection, while the statement is in flight
	require.NoError(t, err)
	require.NoError(t, wait())
	one, ok := s.StartLobbyMessages(ctx, 100, []*LobbyMessage{msg(4, 100)})
	require.True(t, ok)
	require.NoError(t, one())
	gone, ok := s.StartLobbyMessages(ctx, 999, []*LobbyMessage{msg(5, 999)})
	require.True(t, ok)
	require.ErrorIs(t, gone(), ErrNotFound)
	s.ObserveQueries(nil)
	assert.Contains(t, ops(), "StartLobbyMessages")
	assert.NotContains(t, ops(), "other", "every statement reported under its method")

	for i := uint64(1); i <= 4; i++ {
		got, err := s.GetLobbyMessage(ctx, 100, id+i)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, fmt.Sprint("m", i), got.Content)
	}
	found, err := s.FindLobbyMessageByNonce(ctx, 100, 7, "n2", now.Add(-time.Minute))
	require.NoError(t, err, "the nonce")
	require.Equal(t, id+2, found.ID)
	_, err = s.GetLobbyMessage(ctx, 999, id+5)
	require.ErrorIs(t, err, ErrNotFound, "a message of a lobby that is gone was stored")
}

// observeOps observes s's statements and returns the operations they were reported under so far.
func observeOps(s *DB) func() []string {
	var mu sync.Mutex
	var ops []string
	s.ObserveQueries(func(op string, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, op)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ops...)
	}
}

// lobby100 creates lobby 100 in s and returns the time it was created at.
func lobby100(t *testing.T, s *DB) time.Time {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(context.Background(), &Lobby{ID: 100, AppID: 1, IdleTimeout: time.Minute,
		LastActivityAt: now, ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	return now
}

// leanValues encodes a message's parameters as lobbyMessageArgs gives them, for the types
// leanTypes accepts, whose formats leanFormats gives.
func TestLeanValues(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := []*LobbyMessage{
		{ID: 1 << 40, LobbyID: 5, AppID: 6, AuthorID: 7, Content: "a\x00b", Metadata: map[string]string{"k": "v"},
			Flags: -2, AdditionalName: "Sir", Nonce: "n", CreatedAt: at},
		{ID: 1<<40 + 1, LobbyID: 5, AppID: 6, AuthorID: 8, Content: "", CreatedAt: at},
	}
	values := leanValues(ms, 5)
	args := append(lobbyMessageArgs(lobbyMessageArgs(nil, ms[0], nil), ms[1], ms[0]), int64(5))
	require.Len(t, values, len(args))
	require.True(t, leanTypes(leanOIDs(len(ms)), len(ms)))
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			require.Equal(t, pgtype.BinaryFormatCode, int(leanFormats[i]), "parameter %d", i)
			require.Len(t, values[i], 8, "parameter %d", i)
			require.Equal(t, v, int64(binary.BigEndian.Uint64(values[i])), "parameter %d", i)
		case string:
			require.Equal(t, pgtype.TextFormatCode, int(leanFormats[i]), "parameter %d", i)
			require.Equal(t, pgText(v), string(values[i]), "parameter %d", i)
		case nil:
			require.Nil(t, values[i], "parameter %d: NULL", i)
		default:
			t.Fatalf("parameter %d: %T", i, a)
		}
	}
	assert.Equal(t, "a\uFFFDb", string(values[4]), "text made to fit")

	assert.False(t, leanTypes(leanOIDs(2), 1), "a row more")
	assert.False(t, leanTypes(leanOIDs(1)[1:], 1), "a parameter fewer")
	other := leanOIDs(1)
	other[4] = pgtype.VarcharOID
	assert.False(t, leanTypes(other, 1), "another type")
	assert.False(t, leanTypes(leanOIDs(maxRowsPerInsert+1), maxRowsPerInsert+1), "more rows than leanFormats has")
}

// leanOIDs are the parameter types of the INSERT of rows messages.
func leanOIDs(rows int) []uint32 {
	var oids []uint32
	for range rows {
		oids = append(oids, leanRow[:]...)
	}
	return append(oids, pgtype.Int8OID)
}

// StartLobbyMessages returns once the statement is sent, without waiting for its result: here the
// server cannot run it until a transaction holding the lobby's row ends, which the test ends only
// after StartLobbyMessages returned; wait then reads the stored rows.
func TestStartLobbyMessagesSendsWithoutWaiting(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		if s.d.name != "postgres" {
			t.Skip("StartLobbyMessages sends nothing on " + s.d.name)
		}
		ctx, now := context.Background(), lobby100(t, s)
		m := &LobbyMessage{ID: snowflake.At(now) + 1, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "held", CreatedAt: now}
		var wait func() error
		require.NoError(t, s.WithTx(ctx, func(tx Store) error {
			var id int64
			if err := tx.(*DB).q.QueryRowContext(ctx, `SELECT id FROM lobbies WHERE id=100 FOR UPDATE`).Scan(&id); err != nil {
				return err
			}
			started := make(chan func() error, 1)
			go func() {
				w, ok := s.StartLobbyMessages(ctx, 100, []*LobbyMessage{m})
				assert.True(t, ok)
				started <- w
			}()
			select {
			case wait = <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("StartLobbyMessages waited for its statement's result")
			}
			_, err := s.GetLobbyMessage(ctx, 100, m.ID)
			require.ErrorIs(t, err, ErrNotFound, "stored while the lobby's row was locked")
			return nil
		}))
		require.NoError(t, wait())
		got, err := s.GetLobbyMessage(ctx, 100, m.ID)
		require.NoError(t, err)
		require.Equal(t, "held", got.Content)

		// A statement the server refuses (the id is taken) gives its error; the connections
		// serve the next statements.
		for range 3 {
			again, ok := s.StartLobbyMessages(ctx, 100, []*LobbyMessage{m})
			require.True(t, ok)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, again(), &pgErr)
			require.Equal(t, "23505", pgErr.Code, "a unique violation")
		}
		next := *m
		next.ID++
		wait, ok := s.StartLobbyMessages(ctx, 100, []*LobbyMessage{&next})
		require.True(t, ok)
		require.NoError(t, wait())
	})
}
