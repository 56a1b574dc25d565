package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lobbyMessagesOf returns n messages of lobby (application 1, author 7, no metadata), their ids
// from id, as a group commit's rows of one member's sends.
func lobbyMessagesOf(lobby, id uint64, n int, at time.Time) []*LobbyMessage {
	ms := make([]*LobbyMessage, n)
	for i := range ms {
		ms[i] = &LobbyMessage{ID: id + uint64(i), LobbyID: lobby, AppID: 1, AuthorID: 7, Content: "m" + string(rune('a'+i)),
			CreatedAt: at.Add(time.Duration(i) * time.Microsecond)}
	}
	return ms
}

// sqliteLobbyInsert binds once the columns every row of a group has the same value in, the lobby's
// and the defaults, whoever the authors; a group whose rows differ there, or has metadata, or a
// single row, is bound row by row as lobbyMessagesInsert does.
func TestSQLiteLobbyInsertShapes(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	oneAuthor := lobbyMessagesOf(5, 100, 3, at)
	oneAuthor[1].Nonce = "n1"
	twoAuthors := lobbyMessagesOf(5, 200, 3, at)
	twoAuthors[1].AuthorID = 8
	withMetadata := lobbyMessagesOf(5, 300, 2, at)
	withMetadata[1].Metadata = map[string]string{"k": "v"}
	flagged := lobbyMessagesOf(5, 400, 2, at)
	flagged[0].Flags = 4
	for _, tc := range []struct {
		name    string
		ms      []*LobbyMessage
		shared  uint
		perRow  int
		leading []any // the arguments bound once
	}{
		{"one author", oneAuthor, sharedCols, 5, []any{int64(5), int64(1), emptyProps, emptyProps, int64(0), ""}},
		{"two authors", twoAuthors, sharedCols, 5, []any{int64(5), int64(1), emptyProps, emptyProps, int64(0), ""}},
		{"metadata", withMetadata, 0, 11, nil},
		{"flags differ", flagged, 0, 11, nil},
		{"one row", oneAuthor[:1], 0, 11, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.shared, sharedColumns(tc.ms))
			q, args := sqliteLobbyInsert(5, tc.ms, true)
			require.Len(t, args, len(tc.leading)+tc.perRow*len(tc.ms)+1, "arguments")
			assert.Equal(t, int64(5), args[len(args)-1], "the lobby's check's, last")
			assert.Equal(t, len(args), strings.Count(q, "?"), "one parameter each: %s", q)
			assert.True(t, strings.HasSuffix(q, lobbyExists), q)
			if tc.shared == 0 {
				want, _ := lobbyMessagesInsert(`SELECT * FROM (VALUES `, lobbyMessageRow, tc.ms, `)`+lobbyExists, 1)
				assert.Equal(t, want, q)
				return
			}
			assert.Equal(t, tc.leading, args[:len(tc.leading)])
			for i, m := range tc.ms { // each row's own, in the columns' order
				row := args[len(tc.leading)+i*tc.perRow:][:tc.perRow]
				var want []any
				for c := range lobbyMessageCols {
					if tc.shared&(1<<c) == 0 {
						want = append(want, lobbyMessageValue(m, c))
					}
				}
				assert.Equal(t, want, row, "row %d", i)
			}
			again, _ := sqliteLobbyInsert(5, tc.ms, true)
			assert.Equal(t, q, again)
			unchecked, uargs := sqliteLobbyInsert(5, tc.ms, false) // a group's next statement
			want, wargs := lobbyMessagesInsert(`VALUES `, lobbyMessageRow, tc.ms, ``, 1)
			assert.Equal(t, want, unchecked)
			assert.Equal(t, wargs, uargs)
		})
	}
}

// Every shape of sqliteLobbyInsert stores each message whole, and none when the lobby is gone;
// the lobby's check finds the lobby through its primary key.
func TestSQLiteLobbyInsertStores(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: 5, AppID: 1, IdleTimeout: time.Hour, LastActivityAt: at,
		ExpiresAt: at.Add(time.Hour), CreatedAt: at}))

	oneAuthor := lobbyMessagesOf(5, 100, 3, at)
	oneAuthor[2].Nonce = "n2"
	oneAuthor[0].AdditionalName, oneAuthor[1].AdditionalName, oneAuthor[2].AdditionalName = "x", "x", "x"
	twoAuthors := lobbyMessagesOf(5, 200, 4, at)
	twoAuthors[1].AuthorID, twoAuthors[2].AuthorID = 8, 8
	mixed := lobbyMessagesOf(5, 300, 2, at)
	mixed[0].ModerationMetadata = map[string]string{"k": "v"}
	mixed[1].Flags = 2
	for _, ms := range [][]*LobbyMessage{oneAuthor, twoAuthors, mixed, lobbyMessagesOf(5, 400, 1, at)} {
		require.NoError(t, s.StoreLobbyMessages(ctx, 5, ms, nil, nil))
		for _, m := range ms {
			got, err := s.GetLobbyMessage(ctx, 5, m.ID)
			require.NoError(t, err)
			assert.Equal(t, m.ID, got.ID)
			assert.Equal(t, m.LobbyID, got.LobbyID)
			assert.Equal(t, m.AppID, got.AppID)
			assert.Equal(t, m.AuthorID, got.AuthorID)
			assert.Equal(t, m.Content, got.Content)
			assert.Equal(t, len(m.Metadata), len(got.Metadata))
			assert.Equal(t, m.ModerationMetadata["k"], got.ModerationMetadata["k"])
			assert.Equal(t, m.Flags, got.Flags)
			assert.Equal(t, m.AdditionalName, got.AdditionalName)
			assert.True(t, m.CreatedAt.Equal(got.CreatedAt))
		}
	}
	var nonces []*string
	rows, err := s.db.QueryContext(ctx, `SELECT nonce FROM lobby_messages WHERE id IN (100, 101, 102) ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var n *string
		require.NoError(t, rows.Scan(&n))
		nonces = append(nonces, n)
	}
	require.NoError(t, rows.Err())
	n2 := "n2"
	assert.Equal(t, []*string{nil, nil, &n2}, nonces, "an enforced nonce with its row, NULL for the others")

	gone := lobbyMessagesOf(6, 500, 3, at)
	require.ErrorIs(t, s.StoreLobbyMessages(ctx, 6, gone, nil, nil), ErrNotFound)
	_, err = s.GetLobbyMessage(ctx, 6, 500)
	require.ErrorIs(t, err, ErrNotFound, "nothing stored for a lobby that is gone")

	q, args := sqliteLobbyInsert(5, oneAuthor, true)
	rows, err = s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
	require.NoError(t, err)
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	assert.Contains(t, plan, "SEARCH lobbies EXISTS USING INTEGER PRIMARY KEY (rowid=?)", "the check's plan: %q", plan)
}
