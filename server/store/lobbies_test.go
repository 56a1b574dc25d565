package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/snowflake"
)

func TestLobbyStore(t *testing.T) { forEachStore(t, testLobbyStore) }

func testLobbyStore(t *testing.T, s *DB) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := &Lobby{ID: 100, AppID: 1, SecretHash: []byte("h"), SecretExpiresAt: now.Add(time.Hour), FromSecret: true,
		Metadata: map[string]string{"mode": "ctf"}, IdleTimeout: 5 * time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(5 * time.Minute), CreatedAt: now}
	require.NoError(t, s.CreateLobby(ctx, l))
	// One secret, one lobby per application; lobbies without a secret never collide.
	require.ErrorIs(t, s.CreateLobby(ctx, &Lobby{ID: 101, AppID: 1, SecretHash: []byte("h"), ExpiresAt: now}), ErrConflict, "same secret, same app")
	for _, x := range []*Lobby{{ID: 102, AppID: 2, SecretHash: []byte("h")}, {ID: 103, AppID: 1}, {ID: 104, AppID: 1}} {
		x.ExpiresAt = now.Add(time.Minute)
		require.NoError(t, s.CreateLobby(ctx, x), "lobby %d", x.ID)
	}
	got, err := s.GetLobbyBySecret(ctx, 1, []byte("h"))
	require.NoError(t, err, "by secret: %+v", got)
	require.Equal(t, uint64(100), got.ID, "by secret: %+v", got)
	require.Equal(t, "ctf", got.Metadata["mode"], "by secret: %+v", got)
	require.Equal(t, 5*time.Minute, got.IdleTimeout, "by secret: %+v", got)
	require.True(t, got.FromSecret, "by secret: %+v", got)
	require.True(t, got.ExpiresAt.Equal(l.ExpiresAt), "by secret: %+v", got)
	got, err = s.GetLobby(ctx, 103)
	require.NoError(t, err, "no secret, no metadata: %+v", got)
	require.Nil(t, got.SecretHash, "no secret, no metadata: %+v", got)
	require.Nil(t, got.Metadata, "no secret, no metadata: %+v", got)

	// Members: upsert, join order, count of the user's live lobbies of one app.
	for i, uid := range []uint64{7, 8} {
		require.NoError(t, s.PutLobbyMember(ctx, &LobbyMember{LobbyID: 100, UserID: uid, JoinedAt: now.Add(time.Duration(i) * time.Second)}))
	}
	require.NoError(t, s.PutLobbyMember(ctx, &LobbyMember{LobbyID: 100, UserID: 7, Flags: 1, AdditionalName: "Sir", Metadata: map[string]string{"k": "v"}, JoinedAt: now}))
	require.NoError(t, s.PutLobbyMember(ctx, &LobbyMember{LobbyID: 103, UserID: 7, JoinedAt: now}))
	members, err := s.ListLobbyMembers(ctx, 100)
	require.NoError(t, err, "members: %+v", members)
	require.Len(t, members, 2, "members: %+v", members)
	require.Equal(t, uint64(7), members[0].UserID, "members: %+v", members)
	require.Equal(t, "Sir", members[0].AdditionalName, "members: %+v", members)
	require.Equal(t, 1, members[0].Flags, "members: %+v", members)
	require.Equal(t, "v", members[0].Metadata["k"], "members: %+v", members)
	require.Nil(t, members[1].Metadata, "members: %+v", members)
	ids, err := s.ListLobbyMemberIDs(ctx, 100)
	require.NoError(t, err, "member ids %v %v, want those of %+v in the same order", ids, err, members)
	require.Len(t, ids, 2, "member ids %v %v, want those of %+v in the same order", ids, err, members)
	require.Equal(t, members[0].UserID, ids[0], "member ids %v %v, want those of %+v in the same order", ids, err, members)
	require.Equal(t, members[1].UserID, ids[1], "member ids %v %v, want those of %+v in the same order", ids, err, members)
	n, err := s.CountUserLobbies(ctx, 1, 7, now)
	require.NoError(t, err, "count now: %d", n)
	require.Equal(t, 2, n, "count now: %d", n)
	n, _ = s.CountUserLobbies(ctx, 1, 7, now.Add(2*time.Minute))
	require.Equal(t, 1, n, "an expired lobby still counts: %d", n)
	list, err := s.ListUserLobbies(ctx, 1, 7)
	require.NoError(t, err, "user lobbies: %+v", list)
	require.Len(t, list, 2, "user lobbies: %+v", list)
	require.Equal(t, uint64(100), list[0].ID, "user lobbies: %+v", list)
	require.Equal(t, uint64(103), list[1].ID, "user lobbies: %+v", list)
	require.NoError(t, s.DeleteLobbyMember(ctx, 100, 8))
	require.ErrorIs(t, s.DeleteLobbyMember(ctx, 100, 8), ErrNotFound, "second delete")

	// Messages: newest first, since, limit, other lobby's message not found.
	var batch []*LobbyMessage
	for i := range 5 {
		m := &LobbyMessage{ID: uint64(200 + i), LobbyID: 100, AppID: 1, AuthorID: 7, Content: "m",
			CreatedAt: now.Add(time.Duration(i) * time.Hour)}
		if i < 2 {
			require.NoError(t, s.InsertLobbyMessage(ctx, m))
		} else {
			batch = append(batch, m)
		}
	}
	require.NoError(t, s.InsertLobbyMessages(ctx, batch), "several at once")
	msgs, err := s.ListLobbyMessages(ctx, 100, now.Add(2*time.Hour), 2)
	require.NoError(t, err, "list: %+v", msgs)
	require.Len(t, msgs, 2, "list: %+v", msgs)
	require.Equal(t, uint64(204), msgs[0].ID, "list: %+v", msgs)
	require.Equal(t, uint64(203), msgs[1].ID, "list: %+v", msgs)
	// After an id: the oldest messages above it, newest first; since still applies.
	for _, c := range []struct {
		after uint64
		since time.Time
		limit int
		want  []uint64
	}{
		{201, now, 2, []uint64{203, 202}},
		{201, now, 10, []uint64{204, 203, 202}},
		{0, now.Add(3 * time.Hour), 10, []uint64{204, 203}},
		{204, now, 10, nil},
	} {
		msgs, err := s.ListLobbyMessagesAfter(ctx, 100, c.after, c.since, c.limit)
		var got []uint64
		for _, m := range msgs {
			got = append(got, m.ID)
		}
		require.NoError(t, err, "after %d since %v limit %d: %v %v, want %v", c.after, c.since, c.limit, got, err, c.want)
		require.True(t, slices.Equal(got, c.want), "after %d since %v limit %d: %v %v, want %v", c.after, c.since, c.limit, got, err, c.want)
	}
	m, err := s.GetLobbyMessage(ctx, 100, 202)
	require.NoError(t, err)
	m.ModerationMetadata = map[string]string{"action": "hide"}
	require.NoError(t, s.UpdateLobbyMessage(ctx, m))
	m, err = s.GetLobbyMessage(ctx, 100, 202)
	require.NoError(t, err, "moderation metadata: %+v", m)
	require.Equal(t, "hide", m.ModerationMetadata["action"], "moderation metadata: %+v", m)
	_, err = s.GetLobbyMessage(ctx, 103, 202)
	require.ErrorIs(t, err, ErrNotFound, "message of another lobby")
	max, _ := s.MaxID(ctx)
	require.Equal(t, uint64(204), max, "MaxID must cover lobby messages: %d", max)

	// Expiry order, and deleting a lobby deletes its members and messages.
	next, ok, err := s.NextLobbyExpiry(ctx)
	require.NoError(t, err, "next expiry: %v %v", next, ok)
	require.True(t, ok, "next expiry: %v %v", next, ok)
	require.True(t, next.Equal(now.Add(time.Minute)), "next expiry: %v %v", next, ok)
	due, err := s.ExpiredLobbies(ctx, now.Add(2*time.Minute), 10)
	require.NoError(t, err, "expired: %d", len(due))
	require.Len(t, due, 3, "expired: %d", len(due))
	l.SecretHash, l.Metadata = nil, nil
	require.NoError(t, s.UpdateLobby(ctx, l))
	_, err = s.GetLobbyBySecret(ctx, 1, []byte("h"))
	require.ErrorIs(t, err, ErrNotFound, "cleared secret still found")
	require.NoError(t, s.DeleteLobby(ctx, 100))
	require.ErrorIs(t, s.DeleteLobby(ctx, 100), ErrNotFound, "second delete")
	members, _ = s.ListLobbyMembers(ctx, 100)
	require.Empty(t, members, "members survived their lobby: %+v", members)
	msgs, _ = s.ListLobbyMessages(ctx, 100, time.Time{}, 10)
	require.Empty(t, msgs, "messages survived their lobby: %+v", msgs)
}

// A message's enforced nonce is found by lobby, author and nonce within a time; the time of the
// newest such message since a time comes from the messages of the ids since then, not a scan of
// the messages.
func TestLobbyMessageNonces(t *testing.T) { forEachStore(t, testLobbyMessageNonces) }

func testLobbyMessageNonces(t *testing.T, s *DB) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at, err := s.LatestNonceMessageAt(ctx, now.Add(-2*time.Hour))
	require.NoError(t, err, "no messages")
	require.True(t, at.IsZero(), "no messages: %v", at)
	id := func(t time.Time, n uint64) uint64 { return snowflake.At(t) + n } // as the service makes them
	old, first, second, plain := id(now.Add(-time.Hour), 1), id(now, 1), id(now, 2), id(now.Add(time.Minute), 1)
	for _, m := range []LobbyMessage{
		{ID: old, LobbyID: 10, AuthorID: 7, Content: "a", Nonce: "n", CreatedAt: now.Add(-time.Hour)},
		{ID: first, LobbyID: 10, AuthorID: 7, Content: "b", Nonce: "n", CreatedAt: now},
		{ID: second, LobbyID: 10, AuthorID: 8, Content: "c", Nonce: "m", CreatedAt: now},
		{ID: plain, LobbyID: 11, AuthorID: 7, Content: "d", CreatedAt: now.Add(time.Minute)}, // no nonce
	} {
		require.NoError(t, s.InsertLobbyMessage(ctx, &m))
	}
	for _, tc := range []struct {
		lobby, author uint64
		nonce         string
		since         time.Time
		want          uint64 // 0: none
	}{
		{10, 7, "n", now.Add(-2 * time.Hour), old}, {10, 7, "n", now.Add(-time.Minute), first},
		{10, 8, "n", now.Add(-2 * time.Hour), 0}, {11, 7, "n", now.Add(-2 * time.Hour), 0}, {10, 8, "m", now, second},
	} {
		m, err := s.FindLobbyMessageByNonce(ctx, tc.lobby, tc.author, tc.nonce, tc.since)
		if tc.want == 0 {
			assert.ErrorIs(t, err, ErrNotFound, "%+v: found %+v", tc, m)
			continue
		}
		if assert.NoError(t, err, "%+v", tc) {
			assert.Equal(t, tc.want, m.ID, "%+v: %+v", tc, m)
			assert.Empty(t, m.Nonce, "%+v: %+v", tc, m)
		}
	}
	for _, tc := range []struct {
		since, want time.Time // want zero: none
	}{
		{now.Add(-2 * time.Hour), now},
		{now.Add(-5 * time.Minute), now},
		{now, now},
		{now.Add(time.Millisecond), time.Time{}}, // the later message has no nonce
		{now.Add(-time.Hour - time.Millisecond), now},
	} {
		at, err = s.LatestNonceMessageAt(ctx, tc.since)
		require.NoError(t, err, "newest with a nonce since %v", tc.since)
		assert.True(t, at.Equal(tc.want), "newest with a nonce since %v: %v, want %v", tc.since, at, tc.want)
	}
	// Of the messages with the ids since then, only those sent since then count.
	require.NoError(t, s.InsertLobbyMessage(ctx, &LobbyMessage{ID: id(now.Add(time.Hour), 1), LobbyID: 10,
		AuthorID: 7, Content: "e", Nonce: "o", CreatedAt: now.Add(time.Minute)}))
	at, err = s.LatestNonceMessageAt(ctx, now.Add(2*time.Minute))
	require.NoError(t, err)
	assert.True(t, at.IsZero(), "a message sent before since: %v", at)
	if s.Dialect() != "sqlite" {
		// PostgreSQL's planner chooses by the table's statistics (a small table is scanned): with
		// many lobbies' messages, half of them in the window, a nonce is looked up through the
		// lobby's index, bounded by the ids. There is no index of the nonces either for a commit
		// to write. (The ids, 3 modulo 4, are none of the messages' above.)
		_, err := s.db.ExecContext(ctx, `INSERT INTO lobby_messages (id, lobby_id, app_id, author_id, content,
			created_at, nonce) SELECT $1::BIGINT + 4 * g, 1000 + g % 500, 1, g % 97, 'x', $2::BIGINT, md5(g::TEXT)
			FROM generate_series(1, 50000) AS g`, int64(snowflake.At(now))-4*25000+3, ts(now))
		require.NoError(t, err)
		_, err = s.db.ExecContext(ctx, `ANALYZE lobby_messages`)
		require.NoError(t, err)
		var plan []string
		rows, err := s.db.QueryContext(ctx, `EXPLAIN `+s.d.text(nonceMessage), 1005, int64(snowflake.At(now)), 7, "n", ts(now))
		require.NoError(t, err)
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		assert.Contains(t, strings.Join(plan, "\n"), "lobby_messages_lobby", "a nonce's lookup: %s", strings.Join(plan, "\n"))
		var names []string
		rows, err = s.db.QueryContext(ctx, `SELECT indexname FROM pg_indexes
			WHERE schemaname = current_schema() AND tablename = 'lobby_messages' ORDER BY 1`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, []string{"lobby_messages_lobby", "lobby_messages_pkey"}, names, "lobby_messages' indexes")
		return
	}
	plan := queryPlan(t, s, latestNonceMessage, snowflake.At(now), ts(now))
	assert.Contains(t, plan, "USING INTEGER PRIMARY KEY (rowid>?)", "the newest nonce is not read from the ids since: %s", plan)
	// A nonce: the lobby's messages of the ids since the window's start, from the lobby's index;
	// no index of the nonces is left for a commit to write.
	plan = queryPlan(t, s, nonceMessage, 10, snowflake.At(now), 7, "n", ts(now))
	assert.Contains(t, plan, "USING INDEX lobby_messages_lobby (lobby_id=? AND id>?)", plan)
	var indexes int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master
		WHERE type='index' AND tbl_name='lobby_messages' AND sql IS NOT NULL`).Scan(&indexes))
	assert.Equal(t, 1, indexes, "lobby_messages' indexes: the lobby's alone")
}

// queryPlan returns SQLite's plan of query with args, its steps joined.
func queryPlan(t *testing.T, s *DB, query string, args ...any) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var plan string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan += detail + "; "
	}
	require.NoError(t, rows.Err())
	return plan
}

// StoreLobbyMessages stores a lobby's messages, their webhook deliveries and its activity times
// together, and nothing when the lobby is gone.
func TestStoreLobbyMessages(t *testing.T) { forEachStore(t, testStoreLobbyMessages) }

func testStoreLobbyMessages(t *testing.T, s *DB) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: 100, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	later := now.Add(time.Hour)
	id := snowflake.At(later) // the messages' ids as the service makes them: not older than they are
	ms := []*LobbyMessage{
		{ID: id, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "a", Metadata: map[string]string{"k": "v"}, CreatedAt: later},
		{ID: id + 1, LobbyID: 100, AppID: 1, AuthorID: 8, Content: "b", Flags: 4, AdditionalName: "Sir", Nonce: "n", CreatedAt: later},
	}
	hooks := []*WebhookDelivery{{ID: 300, AppID: 1, EventType: "LOBBY_MESSAGE_CREATE", Body: []byte(`{"x":1}`),
		State: WebhookPending, NextAttemptAt: later, CreatedAt: later}}
	out := &OutboxRows{Key: "lobby:100", Data: [][]byte{[]byte(`{"m":200}`), []byte(`{"m":201}`)}, At: later}
	require.NoError(t, s.StoreLobbyMessages(ctx, 100, ms, hooks, out))
	require.Len(t, out.IDs, 2)
	staged, err := s.ListOutbox(ctx, "lobby:100")
	require.NoError(t, err)
	require.Equal(t, []OutboxEvent{
		{ID: out.IDs[0], Key: "lobby:100", Data: out.Data[0], CreatedAt: later},
		{ID: out.IDs[1], Key: "lobby:100", Data: out.Data[1], CreatedAt: later},
	}, staged, "the events in the outbox, their ids in their order")
	require.NoError(t, s.DeleteOutboxes(ctx, out.IDs))
	staged, err = s.ListOutbox(ctx, "lobby:100")
	require.NoError(t, err)
	require.Empty(t, staged, "deleted together")
	one := &OutboxRows{Key: "lobby:100", Data: [][]byte{[]byte(`{"m":202}`)}, At: later}
	require.NoError(t, s.StoreLobbyMessages(ctx, 100, []*LobbyMessage{{ID: id + 2, LobbyID: 100, AppID: 1, AuthorID: 7,
		Content: "c", CreatedAt: later}}, nil, one))
	require.Len(t, one.IDs, 1)
	require.Greater(t, one.IDs[0], out.IDs[1], "an event stored alone: its id after the earlier ones")
	staged, err = s.ListOutbox(ctx, "lobby:100")
	require.NoError(t, err)
	require.Equal(t, []OutboxEvent{{ID: one.IDs[0], Key: "lobby:100", Data: one.Data[0], CreatedAt: later}}, staged,
		"an event stored alone, with its id")
	for _, want := range ms {
		got, err := s.GetLobbyMessage(ctx, 100, want.ID)
		require.NoError(t, err, "message %d", want.ID)
		require.Equal(t, want.Content, got.Content)
		require.Equal(t, want.Metadata, got.Metadata)
		require.Equal(t, want.Flags, got.Flags)
		require.Equal(t, want.AdditionalName, got.AdditionalName)
		require.True(t, got.CreatedAt.Equal(want.CreatedAt), "message %d: %+v", want.ID, got)
	}
	found, err := s.FindLobbyMessageByNonce(ctx, 100, 8, "n", now)
	require.NoError(t, err, "the nonce")
	require.Equal(t, id+1, found.ID)
	l, err := s.GetLobby(ctx, 100)
	require.NoError(t, err)
	require.True(t, l.LastActivityAt.Equal(later) && l.ExpiresAt.Equal(later.Add(time.Minute)), "activity: %+v", l)
	d, err := s.GetWebhook(ctx, 300)
	require.NoError(t, err, "the webhook delivery")
	require.Equal(t, `{"x":1}`, string(d.Body))

	// A lobby that is gone: nothing stored.
	err = s.StoreLobbyMessages(ctx, 999, []*LobbyMessage{{ID: 203, LobbyID: 999, AppID: 1, AuthorID: 7,
		Content: "c", CreatedAt: later}}, []*WebhookDelivery{{ID: 301, AppID: 1, EventType: "E", Body: []byte("{}"),
		State: WebhookPending, NextAttemptAt: later, CreatedAt: later}},
		&OutboxRows{Key: "lobby:999", Data: [][]byte{[]byte(`{"m":202}`)}, At: later})
	require.ErrorIs(t, err, ErrNotFound)
	staged, err = s.ListOutbox(ctx, "lobby:999")
	require.NoError(t, err)
	require.Empty(t, staged, "an event of a lobby that is gone was stored")
	_, err = s.GetLobbyMessage(ctx, 999, 203)
	require.ErrorIs(t, err, ErrNotFound, "a message of a lobby that is gone was stored")
	_, err = s.GetWebhook(ctx, 301)
	require.ErrorIs(t, err, ErrNotFound, "a webhook of a lobby that is gone was stored")
}

// StoreLobbyMessages with an epoch check stores while the shared epoch is the one given, and
// nothing once it moved.
func TestStoreLobbyMessagesEpochCheck(t *testing.T) {
	forEachStore(t, testStoreLobbyMessagesEpochCheck)
}

// More messages than one INSERT takes are stored in several, all of them or, when the lobby is
// gone, none.
func TestStoreLobbyMessagesChunks(t *testing.T) { forEachStore(t, testStoreLobbyMessagesChunks) }

func testStoreLobbyMessagesChunks(t *testing.T, s *DB) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: 100, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	messages := func(lobby, first uint64) []*LobbyMessage {
		ms := make([]*LobbyMessage, maxRowsPerInsert+maxRowsPerInsert/2)
		for i := range ms {
			ms[i] = &LobbyMessage{ID: first + uint64(i), LobbyID: lobby, AppID: 1, AuthorID: 7, Content: "m", CreatedAt: now}
		}
		return ms
	}
	ms := messages(100, 1000)
	require.NoError(t, s.StoreLobbyMessages(ctx, 100, ms, nil, nil))
	stored, err := s.ListLobbyMessages(ctx, 100, time.Time{}, 2*len(ms))
	require.NoError(t, err)
	require.Len(t, stored, len(ms), "every chunk stored")
	require.ErrorIs(t, s.StoreLobbyMessages(ctx, 999, messages(999, 5000), nil, nil), ErrNotFound)
	for _, id := range []uint64{5000, 5000 + maxRowsPerInsert} { // the first chunk's, the second's
		_, err := s.GetLobbyMessage(ctx, 999, id)
		require.ErrorIs(t, err, ErrNotFound, "message %d of a lobby that is gone was stored", id)
	}
}

func testStoreLobbyMessagesEpochCheck(t *testing.T, s *DB) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: 100, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	message := func(id uint64) []*LobbyMessage {
		return []*LobbyMessage{{ID: id, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "a", CreatedAt: now}}
	}
	epoch, err := s.SharedEpoch(ctx, "lobbies")
	require.NoError(t, err)
	for _, events := range [][][]byte{{[]byte(`{"m":200}`)}, nil} { // with events, and none to stage
		out := &OutboxRows{Key: "lobby:100", Data: events, At: now, EpochKey: "lobbies", Epoch: epoch}
		id := uint64(200 + len(events))
		require.NoError(t, s.StoreLobbyMessages(ctx, 100, message(id), nil, out))
		_, err = s.GetLobbyMessage(ctx, 100, id)
		require.NoError(t, err, "stored under the epoch it was read at (events %d)", len(events))
	}
	// A user changes: the epoch moves.
	u := &User{ID: 7, Username: "u7", CreatedAt: now}
	require.NoError(t, s.CreateUser(ctx, u))
	u.GlobalName = "Seven"
	require.NoError(t, s.UpdateUser(ctx, u))
	moved, err := s.SharedEpoch(ctx, "lobbies")
	require.NoError(t, err)
	require.NotEqual(t, epoch, moved)
	for _, events := range [][][]byte{{[]byte(`{"m":300}`)}, nil} {
		out := &OutboxRows{Key: "lobby:100", Data: events, At: now, EpochKey: "lobbies", Epoch: epoch}
		id := uint64(300 + len(events))
		err := s.StoreLobbyMessages(ctx, 100, message(id), nil, out)
		require.ErrorIs(t, err, ErrEpochMoved, "events %d", len(events))
		_, err = s.GetLobbyMessage(ctx, 100, id)
		require.ErrorIs(t, err, ErrNotFound, "stored after the epoch moved (events %d)", len(events))
	}
	staged, err := s.ListOutbox(ctx, "lobby:100")
	require.NoError(t, err)
	require.Len(t, staged, 1, "only the event stored under its epoch")
	// A lobby that is gone is still ErrNotFound under an epoch that did not move.
	err = s.StoreLobbyMessages(ctx, 999, message(400), nil,
		&OutboxRows{Key: "lobby:999", Data: [][]byte{[]byte(`{}`)}, At: now, EpochKey: "lobbies", Epoch: moved})
	require.ErrorIs(t, err, ErrNotFound)
}

// A lobby's activity is its newest message's as much as its own changes: StoreLobbyMessages
// leaves the lobby's row alone, every read of the lobby counts its messages, and the idle
// sweep's TouchLobby carries the stored expiry forward only when it is behind.
func TestLobbyActivityFromMessages(t *testing.T) { forEachStore(t, testLobbyActivityFromMessages) }

func testLobbyActivityFromMessages(t *testing.T, s *DB) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []uint64{100, 101} {
		require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: id, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
			ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
		require.NoError(t, s.PutLobbyMember(ctx, &LobbyMember{LobbyID: id, UserID: 7, JoinedAt: now}))
	}
	stored := func(id uint64) (last, exp int64) {
		t.Helper()
		require.NoError(t, s.q.QueryRowContext(ctx, `SELECT last_activity_at, expires_at FROM lobbies WHERE id=?`, id).Scan(&last, &exp))
		return last, exp
	}
	// Lobby 100 gets messages, the newest 50 s in; 101 none.
	sent := now.Add(50 * time.Second)
	require.NoError(t, s.StoreLobbyMessages(ctx, 100, []*LobbyMessage{
		{ID: 200, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "a", CreatedAt: now.Add(10 * time.Second)},
		{ID: 201, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "b", CreatedAt: sent},
	}, nil, nil))
	last, exp := stored(100)
	require.Equal(t, ts(now), last, "a message wrote its lobby's activity")
	require.Equal(t, ts(now.Add(time.Minute)), exp, "a message wrote its lobby's expiry")

	reads := map[string]func() (*Lobby, error){
		"GetLobby": func() (*Lobby, error) { return s.GetLobby(ctx, 100) },
		"ListUserLobbies": func() (*Lobby, error) {
			list, err := s.ListUserLobbies(ctx, 1, 7)
			if err != nil || len(list) != 2 {
				return nil, err
			}
			return &list[0], nil
		},
		"ListLobbies": func() (*Lobby, error) {
			list, err := s.ListLobbies(ctx, 10)
			if err != nil || len(list) != 2 {
				return nil, err
			}
			return &list[0], nil // the most recently active first
		},
	}
	for name, read := range reads {
		l, err := read()
		require.NoError(t, err, name)
		require.NotNil(t, l, name)
		assert.Equal(t, uint64(100), l.ID, name)
		assert.True(t, l.LastActivityAt.Equal(sent), "%s: last activity %v, want the newest message's %v", name, l.LastActivityAt, sent)
		assert.True(t, l.ExpiresAt.Equal(sent.Add(time.Minute)), "%s: expires %v", name, l.ExpiresAt)
	}

	// After the stored expiry, before the message's: 100 still counts, 101 does not; both are
	// due by their stored expiry, 100 with its later ExpiresAt.
	at := now.Add(90 * time.Second)
	n, err := s.CountUserLobbies(ctx, 1, 7, at)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "lobbies alive at %v", at)
	due, err := s.ExpiredLobbies(ctx, at, 10)
	require.NoError(t, err)
	require.Len(t, due, 2)
	byID := map[uint64]Lobby{due[0].ID: due[0], due[1].ID: due[1]}
	assert.True(t, byID[100].ExpiresAt.Equal(sent.Add(time.Minute)), "due 100: %+v", byID[100])
	assert.True(t, byID[101].ExpiresAt.Equal(now.Add(time.Minute)), "due 101: %+v", byID[101])

	// TouchLobby carries 100's stored expiry forward; not back, and not again.
	require.NoError(t, s.TouchLobby(ctx, 100, sent, sent.Add(time.Minute)))
	last, exp = stored(100)
	assert.Equal(t, ts(sent), last)
	assert.Equal(t, ts(sent.Add(time.Minute)), exp)
	require.NoError(t, s.TouchLobby(ctx, 100, now, now.Add(time.Minute)))
	_, exp = stored(100)
	assert.Equal(t, ts(sent.Add(time.Minute)), exp, "TouchLobby took the stored expiry back")
	require.NoError(t, s.TouchLobby(ctx, 999, now, now), "a lobby that is gone")
	due, err = s.ExpiredLobbies(ctx, at, 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
	assert.Equal(t, uint64(101), due[0].ID)
	next, ok, err := s.NextLobbyExpiry(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, next.Equal(now.Add(time.Minute)), "next expiry %v", next)

	// Past the message's idle timeout 100 counts no more.
	n, err = s.CountUserLobbies(ctx, 1, 7, sent.Add(time.Minute))
	require.NoError(t, err)
	assert.Zero(t, n)
}

// On PostgreSQL a lobby's messages stored alone (no webhook rows, outbox rows or epoch: as one
// node stores them) are one INSERT that locks the lobby's row FOR KEY SHARE: it waits for a
// deletion of the lobby in progress in another session, then finds the lobby gone and stores
// nothing; a lobby that is gone stores nothing either.
func TestPostgresLobbyMessagesAloneWaitForADeletion(t *testing.T) {
	s := openPostgres(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: 100, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	id := snowflake.At(now)
	msgs := func(lobby uint64, ns ...uint64) []*LobbyMessage {
		var ms []*LobbyMessage
		for _, n := range ns {
			ms = append(ms, &LobbyMessage{ID: id + n, LobbyID: lobby, AppID: 1, AuthorID: 7, Content: "m", Nonce: "n",
				CreatedAt: now})
		}
		return ms
	}
	require.NoError(t, s.StoreLobbyMessages(ctx, 100, msgs(100, 1, 2), nil, nil))
	require.ErrorIs(t, s.StoreLobbyMessages(ctx, 999, msgs(999, 3), nil, nil), ErrNotFound, "a lobby that is gone")
	_, err := s.GetLobbyMessage(ctx, 999, id+3)
	require.ErrorIs(t, err, ErrNotFound, "nothing stored for a lobby that is gone")

	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `DELETE FROM lobbies WHERE id = 100`)
	require.NoError(t, err)
	stored := make(chan error, 1)
	go func() { stored <- s.StoreLobbyMessages(ctx, 100, msgs(100, 4, 5), nil, nil) }()
	require.Eventually(t, func() bool { return lockWaiters(t, s) == 1 }, 10*time.Second, time.Millisecond,
		"the messages wait for the deletion in progress")
	_, err = tx.ExecContext(ctx, `DELETE FROM lobby_messages WHERE lobby_id = 100`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.ErrorIs(t, <-stored, ErrNotFound, "the lobby was deleted meanwhile")
	var left int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM lobby_messages WHERE lobby_id = 100`).Scan(&left))
	assert.Zero(t, left, "messages stored for a deleted lobby")
}
