package store

import (
	"strconv"
	"strings"
	"sync"
)

// The columns of a lobby message's row (lobbyMessageColumns, then nonce), by their places.
const (
	colID = iota
	colLobby
	colApp
	colAuthor
	colContent
	colMetadata
	colModeration
	colFlags
	colAdditionalName
	colCreatedAt
	colNonce
	lobbyMessageCols
)

// sharedCols are the columns of a group's rows that sqliteLobbyInsert binds once when every row
// has the same value there: the lobby's and the defaults, which a group commit's messages of one
// lobby share. One shape only (the author, which differs in a lobby that several members talk
// in, is bound per row, an integer's binding costing little), so that the statements prepared
// stay one more per number of rows (the statement cache holds maxCachedStatements in all).
const sharedCols = 1<<colLobby | 1<<colApp | 1<<colMetadata | 1<<colModeration | 1<<colFlags | 1<<colAdditionalName

// sharedColumns returns the columns sqliteLobbyInsert binds once for ms, as a set of bits by
// their places: sharedCols or none, none for a single row (a row's arguments are as many either
// way).
func sharedColumns(ms []*LobbyMessage) uint {
	if len(ms) < 2 {
		return 0
	}
	first := ms[0]
	if len(first.Metadata) != 0 || len(first.ModerationMetadata) != 0 {
		return 0
	}
	for _, m := range ms[1:] {
		if m.LobbyID != first.LobbyID || m.AppID != first.AppID || len(m.Metadata) != 0 ||
			len(m.ModerationMetadata) != 0 || m.Flags != first.Flags || m.AdditionalName != first.AdditionalName {
			return 0
		}
	}
	return sharedCols
}

// lobbyMessageValue is m's argument for column col, as lobbyMessageArgs gives it.
func lobbyMessageValue(m *LobbyMessage, col int) any {
	switch col {
	case colID:
		return int64(m.ID)
	case colLobby:
		return int64(m.LobbyID)
	case colApp:
		return int64(m.AppID)
	case colAuthor:
		return int64(m.AuthorID)
	case colContent:
		return m.Content
	case colMetadata:
		return propsArg(m.Metadata)
	case colModeration:
		return propsArg(m.ModerationMetadata)
	case colFlags:
		return int64(m.Flags)
	case colAdditionalName:
		return m.AdditionalName
	case colCreatedAt:
		return ts(m.CreatedAt)
	default:
		if m.Nonce == "" {
			return nil // NULL unless enforced
		}
		return m.Nonce
	}
}

// sqliteLobbyInsert returns the INSERT of ms, messages of lobby id (at most maxRowsPerInsert),
// on SQLite, and its arguments; with check, it inserts only when the lobby exists
// (insertIntoLobby). The columns every row has the same value in (sharedColumns) are bound once,
// in a row of their own joined to each of the rows' VALUES: a group commit's rows of one lobby
// bind 5 arguments each instead of 11, and every argument costs the driver its conversion and
// its binding (a C string's copy for a text), the most of a commit's work outside SQLite's.
//
// Only a group's first statement (check) binds columns once: the next ones, of a group over
// maxRowsPerInsert rows, are rare, and their texts would be as many again.
func sqliteLobbyInsert(id uint64, ms []*LobbyMessage, check bool) (string, []any) {
	var shared uint
	if check {
		shared = sharedColumns(ms)
	}
	if shared == 0 {
		head, tail := `VALUES `, ``
		if check {
			head, tail = `SELECT * FROM (VALUES `, `)`+lobbyExists
		}
		q, args := lobbyMessagesInsert(head, lobbyMessageRow, ms, tail, 1)
		if check {
			args = append(args, int64(id))
		}
		return q, args
	}
	perRow := lobbyMessageCols
	for c := range lobbyMessageCols {
		if shared&(1<<c) != 0 {
			perRow--
		}
	}
	args := make([]any, 0, lobbyMessageCols-perRow+perRow*len(ms)+1)
	for c := range lobbyMessageCols {
		if shared&(1<<c) != 0 {
			args = append(args, lobbyMessageValue(ms[0], c))
		}
	}
	var prevAuthor any // the previous row's author, boxed once for the rows that share it
	for i, m := range ms {
		for c := range lobbyMessageCols {
			switch {
			case shared&(1<<c) != 0:
			case c == colAuthor && i > 0 && m.AuthorID == ms[i-1].AuthorID:
				args = append(args, prevAuthor)
			case c == colAuthor:
				prevAuthor = lobbyMessageValue(m, c)
				args = append(args, prevAuthor)
			default:
				args = append(args, lobbyMessageValue(m, c))
			}
		}
	}
	if check {
		args = append(args, int64(id))
	}
	return sharedInserts.get(sharedInsert{shared: shared, rows: len(ms), check: check}), args
}

// lobbyExists is the condition of sqliteLobbyInsert's check, its argument the lobby's id. The id
// is compared in a CAST: compared as a bare parameter, its value is one SQLite's planner looks at,
// so that a new one makes it prepare the statement again at its next step (measured: a seventh
// of a commit's CPU, BenchmarkStoreLobbyMessages, when the commits alternate between lobbies).
const lobbyExists = ` WHERE EXISTS (SELECT 1 FROM lobbies WHERE id=CAST(? AS INTEGER))`

// sharedInserts are the texts of sqliteLobbyInsert's statements that bind columns once, made
// once each.
var sharedInserts = sharedTexts{m: map[sharedInsert]string{}}

// sharedTexts holds the texts of sharedInsertText.
type sharedTexts struct {
	mu sync.Mutex
	m  map[sharedInsert]string
}

// get returns k's text.
func (c *sharedTexts) get(k sharedInsert) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	q, ok := c.m[k]
	if !ok {
		q = sharedInsertText(k)
		c.m[k] = q
	}
	return q
}

// sharedInsert identifies the text of an INSERT of rows lobby messages binding the columns of
// shared once, with the lobby's check when check.
type sharedInsert struct {
	shared uint
	rows   int
	check  bool
}

// sharedInsertText makes k's text: the shared values (s.cN, N the column's place) and each row's
// own (v.columnN, SQLite's names for a VALUES list's columns) selected in the table's order.
func sharedInsertText(k sharedInsert) string {
	var q strings.Builder
	q.WriteString(`INSERT INTO lobby_messages (` + lobbyMessageColumns + `, nonce) SELECT `)
	perRow := 0
	for c := range lobbyMessageCols {
		if c > 0 {
			q.WriteByte(',')
		}
		if k.shared&(1<<c) != 0 {
			q.WriteString(`s.c` + strconv.Itoa(c))
		} else {
			perRow++
			q.WriteString(`v.column` + strconv.Itoa(perRow))
		}
	}
	q.WriteString(` FROM (SELECT `)
	first := true
	for c := range lobbyMessageCols {
		if k.shared&(1<<c) != 0 {
			if !first {
				q.WriteByte(',')
			}
			first = false
			q.WriteString(`? AS c` + strconv.Itoa(c))
		}
	}
	q.WriteString(`) AS s, (VALUES `)
	row := `(` + strings.TrimSuffix(strings.Repeat(`?,`, perRow), `,`) + `)`
	for i := range k.rows {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(row)
	}
	q.WriteString(`) AS v`)
	if k.check {
		q.WriteString(lobbyExists)
	}
	return q.String()
}
