package store

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A group commit's INSERT of lobby messages: its arguments are each row's, the ids the rows
// share boxed once, and its text is made once per number of rows.
func TestLobbyMessagesInsert(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := []*LobbyMessage{
		{ID: 1 << 40, LobbyID: 1 << 33, AppID: 1 << 34, AuthorID: 1 << 35, Content: "a", Nonce: "n", CreatedAt: at},
		{ID: 1<<40 + 1, LobbyID: 1 << 33, AppID: 1 << 34, AuthorID: 1 << 35, Content: "b", CreatedAt: at},
		{ID: 1<<40 + 2, LobbyID: 1 << 33, AppID: 1 << 34, AuthorID: 1 << 36, Content: "c", CreatedAt: at},
		{ID: 1<<40 + 3, LobbyID: 1 << 37, AppID: 1 << 34, AuthorID: 1 << 36, Content: "d", CreatedAt: at},
	}
	q, args := lobbyMessagesInsert(`VALUES `, lobbyMessageRow, ms, ` WHERE 1`, 1)
	var want []any
	for _, m := range ms {
		want = append(want, lobbyMessageArgs(nil, m, nil)...)
	}
	require.Equal(t, want, args, "each row's arguments")
	assert.Equal(t, 11*len(ms)+1, cap(args), "room for the tail's")
	assert.Equal(t, `INSERT INTO lobby_messages (`+lobbyMessageColumns+`, nonce) VALUES `+
		strings.TrimSuffix(strings.Repeat(lobbyMessageRow+",", len(ms)), ",")+` WHERE 1`, q)
	again, _ := lobbyMessagesInsert(`VALUES `, lobbyMessageRow, ms, ` WHERE 1`, 1)
	assert.Same(t, unsafe.StringData(q), unsafe.StringData(again), "the text is made once")

	same := make([]*LobbyMessage, 8)
	for i := range same {
		m := *ms[0]
		m.ID += uint64(i)
		same[i] = &m
	}
	allocs := testing.AllocsPerRun(100, func() { lobbyMessagesInsert(`VALUES `, lobbyMessageRow, same, ``, 0) })
	// The arguments' slice, the shared lobby, application and author, and per row its id,
	// content, nonce and time.
	assert.LessOrEqual(t, allocs, float64(1+3+4*len(same)), "allocations for %d rows of one lobby and author", len(same))
}
