package store

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// GuildSearch selects guild messages for Search Guild Messages (rule GLD-3). Empty lists and nil
// pointers select everything.
type GuildSearch struct {
	GuildID uint64
	// ChannelIDs are the channels searched; none finds nothing.
	ChannelIDs []uint64
	// Query is a full-text query of guild_message_fts (FTSQuery makes one of words); "" matches
	// every message.
	Query     string
	AuthorIDs []uint64
	// Mentions selects messages that mention any of these users.
	Mentions []uint64
	// Pinned selects pinned (true) or unpinned (false) messages.
	Pinned *bool
	// AuthorBot selects messages by bots (true) or by users (false).
	AuthorBot *bool
	// HasLink selects messages with (true) or without (false) an http(s) link in the content.
	HasLink *bool
	// HasSnapshot selects forwards (true) or other messages (false).
	HasSnapshot *bool
	// MinID and MaxID bound the message ids, exclusive; 0 leaves a side open.
	MinID, MaxID uint64
	// ByRelevance orders by how well the content matches Query (then newest first); otherwise
	// by id, newest first unless Ascending.
	ByRelevance, Ascending bool
	Limit, Offset          int
}

// FTSQuery turns free text into a guild_message_fts query that matches messages containing
// every word of it, each taken literally; "" when the text has no word.
func FTSQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
	})
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(words, " ")
}

// GuildSearchStore keeps the search index of guild messages.
type GuildSearchStore interface {
	// GuildIndexedAt returns when the guild's messages were indexed, zero when they are not.
	GuildIndexedAt(ctx context.Context, guildID uint64) (time.Time, error)
	// IndexGuildMessages indexes the guild's messages at at, in one transaction, and returns how
	// many; from then on the index follows them. Indexing an indexed guild builds it again.
	IndexGuildMessages(ctx context.Context, guildID uint64, at time.Time) (int, error)
	// SearchGuildMessages returns a page of the messages q selects and how many it selects.
	SearchGuildMessages(ctx context.Context, q GuildSearch) (total int, page []GuildMessage, err error)
}

func (s *DB) GuildIndexedAt(ctx context.Context, guildID uint64) (time.Time, error) {
	var at int64
	err := notFound(s.q.QueryRowContext(ctx, `SELECT indexed_at FROM guild_search WHERE guild_id=?`, guildID).Scan(&at))
	if errors.Is(err, ErrNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return fromTS(at), nil
}

func (s *DB) IndexGuildMessages(ctx context.Context, guildID uint64, at time.Time) (int, error) {
	var n int
	err := s.WithTx(ctx, func(st Store) error {
		tx := st.(*DB)
		added, err := tx.d.search.reindex(ctx, tx.q, guildID)
		if err != nil {
			return err
		}
		n = int(added)
		_, err = tx.q.ExecContext(ctx, `INSERT INTO guild_search (guild_id, indexed_at) VALUES (?,?)
			ON CONFLICT (guild_id) DO UPDATE SET indexed_at=excluded.indexed_at`, guildID, ts(at))
		return err
	})
	return n, err
}

// guildSearchFilter is the WHERE clause of every search: ?1 guild, ?2 channels, ?3 authors,
// ?4 mentions (JSON arrays), ?5 pinned, ?6 author is a bot, ?7 has a link, ?8 is a forward
// (1 or 0; NULL: either), ?9 and ?10 the id bounds.
var guildSearchFilter = `m.guild_id=?1
	AND m.channel_id IN (SELECT value FROM json_each(?2))
	AND (?3='[]' OR m.author_id IN (SELECT value FROM json_each(?3)))
	AND (?4='[]' OR EXISTS (SELECT 1 FROM json_each(m.mentions) j WHERE j.value IN (SELECT value FROM json_each(?4))))
	AND (CAST(?5 AS INTEGER) IS NULL OR (CASE WHEN EXISTS (SELECT 1 FROM guild_pins p WHERE p.channel_id=m.channel_id AND p.message_id=m.id) THEN 1 ELSE 0 END)=?5)
	AND (CAST(?6 AS INTEGER) IS NULL OR (SELECT u.bot FROM users u WHERE u.id=m.author_id)=?6)
	AND (CAST(?7 AS INTEGER) IS NULL OR (CASE WHEN m.content LIKE '%http://%' OR m.content LIKE '%https://%' THEN 1 ELSE 0 END)=?7)
	AND (CAST(?8 AS INTEGER) IS NULL OR (CASE WHEN m.ref_type=` + strconv.Itoa(ReferenceForward) + ` THEN 1 ELSE 0 END)=?8)
	AND m.id>?9 AND m.id<?10`

func (s *DB) SearchGuildMessages(ctx context.Context, q GuildSearch) (int, []GuildMessage, error) {
	ids := func(v []uint64) string {
		if v == nil {
			v = []uint64{}
		}
		raw, _ := json.Marshal(v) // a slice of integers always marshals
		return string(raw)
	}
	flag := func(b *bool) any {
		if b == nil {
			return nil
		}
		return b2i(*b)
	}
	maxID := uint64(1<<63 - 1)
	if q.MaxID != 0 {
		maxID = min(q.MaxID, maxID)
	}
	args := []any{q.GuildID, ids(q.ChannelIDs), ids(q.AuthorIDs), ids(q.Mentions), flag(q.Pinned), flag(q.AuthorBot),
		flag(q.HasLink), flag(q.HasSnapshot), min(q.MinID, 1<<63-1), maxID}
	from := `guild_messages m`
	order := `m.id DESC`
	if q.Ascending {
		order = `m.id ASC`
	}
	if q.Query != "" {
		from = `guild_messages m JOIN ` + s.d.search.matches(11) + ` r ON r.id=m.id`
		args = append(args, s.d.search.arg(q.Query))
		if q.ByRelevance {
			order = `r.rank, m.id DESC`
		}
	}
	where := ` FROM ` + from + ` WHERE ` + guildSearchFilter
	var total int
	if err := s.q.QueryRowContext(ctx, `SELECT COUNT(*)`+where, args...).Scan(&total); err != nil {
		return 0, nil, err
	}
	n := len(args)
	rows, err := s.q.QueryContext(ctx, `SELECT `+prefixed("m.", guildMessageColumns)+where+` ORDER BY `+order+
		` LIMIT ?`+strconv.Itoa(n+1)+` OFFSET ?`+strconv.Itoa(n+2), append(args, q.Limit, q.Offset)...)
	if err != nil {
		return 0, nil, err
	}
	page, err := collect(rows, scanGuildMessage)
	return total, page, err
}
