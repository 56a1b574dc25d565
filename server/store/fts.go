package store

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// ftsDialect is the full-text index of guild messages in one database: FTS5 in SQLite, a
// tsvector with a GIN index in PostgreSQL. Both split text into runs of letters and digits,
// fold case and diacritics, match a message that has every word of a query (each word as a
// phrase of its runs), and rank by BM25 (k1 1.2, b 0.75) over the whole index.
type ftsDialect interface {
	// reindex replaces the guild's index entries with its messages and returns how many.
	reindex(ctx context.Context, q querier, guildID uint64) (int, error)
	// matches is a table of the messages matching the query in placeholder ?n, with their id
	// and rank (lower ranks are better matches).
	matches(n int) string
	// arg is the placeholder's value for a query FTSQuery made.
	arg(query string) any
}

// sqliteFTS is FTS5's table guild_message_fts (unicode61 tokenizer); its rowid is the message id.
type sqliteFTS struct{}

func (sqliteFTS) reindex(ctx context.Context, q querier, guildID uint64) (int, error) {
	if _, err := q.ExecContext(ctx, `DELETE FROM guild_message_fts WHERE rowid IN
		(SELECT id FROM guild_messages WHERE guild_id=?)`, guildID); err != nil {
		return 0, err
	}
	return affected(q.ExecContext(ctx, `INSERT INTO guild_message_fts (rowid, content)
		SELECT id, content FROM guild_messages WHERE guild_id=?`, guildID))
}

func (sqliteFTS) matches(n int) string {
	return `(SELECT rowid AS id, bm25(guild_message_fts) AS rank FROM guild_message_fts
		WHERE guild_message_fts MATCH ?` + strconv.Itoa(n) + `)`
}

func (sqliteFTS) arg(query string) any { return query }

// postgresFTS is the table guild_message_fts of PostgreSQL's migrations: each message's words
// (sdkpp_fts_words) and their tsvector, searched by the function sdkpp_fts_search.
type postgresFTS struct{}

func (postgresFTS) reindex(ctx context.Context, q querier, guildID uint64) (int, error) {
	if _, err := q.ExecContext(ctx, `DELETE FROM guild_message_fts WHERE id IN
		(SELECT id FROM guild_messages WHERE guild_id=?)`, guildID); err != nil {
		return 0, err
	}
	return affected(q.ExecContext(ctx, `INSERT INTO guild_message_fts (id, words, tsv)
		SELECT id, w, to_tsvector('simple', array_to_string(w, ' '))
		FROM (SELECT id, sdkpp_fts_words(content) AS w FROM guild_messages WHERE guild_id=?) AS x`, guildID))
}

func (postgresFTS) matches(n int) string { return `sdkpp_fts_search(?` + strconv.Itoa(n) + `)` }

// arg is the query's words as a JSON array of strings.
func (postgresFTS) arg(query string) any {
	raw, _ := json.Marshal(ftsWords(query)) // a slice of strings always marshals
	return string(raw)
}

// ftsWords returns the words of a query FTSQuery made: its quoted strings, unquoted.
func ftsWords(query string) []string {
	words := []string{}
	for i := 0; i < len(query); i++ {
		if query[i] != '"' {
			continue
		}
		var w strings.Builder
		for i++; i < len(query); i++ {
			if query[i] == '"' {
				if i+1 < len(query) && query[i+1] == '"' {
					w.WriteByte('"')
					i++
					continue
				}
				break
			}
			w.WriteByte(query[i])
		}
		words = append(words, w.String())
	}
	return words
}

// affected returns how many rows a statement changed.
func affected(res interface{ RowsAffected() (int64, error) }, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
