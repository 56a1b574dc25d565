package store

import (
	"context"
	"database/sql"
	"time"
)

// GuildPageStore reads what a page of guild messages shows besides the messages, for the whole
// page at once: a page costs the same few queries whatever its size.
type GuildPageStore interface {
	// GuildMessagesPinnedAt returns when each of the channel's messages ids that is pinned was
	// pinned, by message id.
	GuildMessagesPinnedAt(ctx context.Context, channelID uint64, ids []uint64) (map[uint64]time.Time, error)
	// GuildAttachmentsOf returns the attachments of the channel's messages ids, without Data,
	// by message id, each message's by position.
	GuildAttachmentsOf(ctx context.Context, channelID uint64, ids []uint64) (map[uint64][]GuildAttachment, error)
	// GuildMessagesByID returns those of messages ids that exist, by id.
	GuildMessagesByID(ctx context.Context, ids []uint64) (map[uint64]*GuildMessage, error)
	// UsersByID returns those of users ids that exist, by id.
	UsersByID(ctx context.Context, ids []uint64) (map[uint64]*User, error)
	// GuildMembersByID returns those of users ids that are members of the guild, with their
	// roles (ordered by id), by user id.
	GuildMembersByID(ctx context.Context, guildID uint64, ids []uint64) (map[uint64]MemberWithRoles, error)
}

// MemberWithRoles is a guild member and the ids of its roles.
type MemberWithRoles struct {
	Member GuildMember
	Roles  []uint64
}

// GuildMessagesPinnedAt implements GuildPageStore. It reads the channel's pins between the
// smallest and the largest of ids, a range of its primary key, and keeps those of ids: a channel
// has at most a few hundred pins (the service's limit is wire.MaxPins), so the range costs at
// most that many rows, where looking each id up cost a probe per message of the page.
func (s *DB) GuildMessagesPinnedAt(ctx context.Context, channelID uint64, ids []uint64) (map[uint64]time.Time, error) {
	out := map[uint64]time.Time{}
	if len(ids) == 0 {
		return out, nil
	}
	want := make(map[uint64]bool, len(ids))
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		want[id] = true
		lo, hi = min(lo, id), max(hi, id)
	}
	rows, err := s.q.QueryContext(ctx, `SELECT message_id, pinned_at FROM guild_pins
		WHERE channel_id=? AND message_id BETWEEN ? AND ?`, channelID, lo, hi)
	if err != nil {
		return nil, err
	}
	return out, eachRow(rows, func(r *sql.Rows) error {
		var id idCol
		var at int64
		if err := r.Scan(&id, &at); err != nil {
			return err
		}
		if want[uint64(id)] {
			out[uint64(id)] = fromTS(at)
		}
		return nil
	})
}

// GuildAttachmentsOf implements GuildPageStore.
func (s *DB) GuildAttachmentsOf(ctx context.Context, channelID uint64, ids []uint64) (map[uint64][]GuildAttachment, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildAttachmentColumns+` FROM guild_attachments
		WHERE message_id IN (SELECT value FROM json_each(?)) AND channel_id=? ORDER BY message_id, position, id`,
		idsJSON(ids), channelID)
	if err != nil {
		return nil, err
	}
	out := map[uint64][]GuildAttachment{}
	return out, eachRow(rows, func(r *sql.Rows) error {
		a, err := scanGuildAttachment(r, nil)
		if err != nil {
			return err
		}
		out[a.MessageID] = append(out[a.MessageID], *a)
		return nil
	})
}

// GuildMessagesByID implements GuildPageStore.
func (s *DB) GuildMessagesByID(ctx context.Context, ids []uint64) (map[uint64]*GuildMessage, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildMessageColumns+` FROM guild_messages
		WHERE id IN (SELECT value FROM json_each(?))`, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	out := map[uint64]*GuildMessage{}
	var scan messageScan
	return out, eachRow(rows, func(r *sql.Rows) error {
		m := new(GuildMessage)
		if err := scan.into(r, m); err != nil {
			return err
		}
		out[m.ID] = m
		return nil
	})
}

// UsersByID implements GuildPageStore.
func (s *DB) UsersByID(ctx context.Context, ids []uint64) (map[uint64]*User, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+userColumns+` FROM users WHERE id IN (SELECT value FROM json_each(?))`, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	out := map[uint64]*User{}
	return out, eachRow(rows, func(r *sql.Rows) error {
		u, err := scanUser(r)
		if err == nil {
			out[u.ID] = u
		}
		return err
	})
}

// GuildMembersByID implements GuildPageStore: the members, then their roles.
func (s *DB) GuildMembersByID(ctx context.Context, guildID uint64, ids []uint64) (map[uint64]MemberWithRoles, error) {
	list := idsJSON(ids)
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildMemberColumns+` FROM guild_members
		WHERE guild_id=? AND user_id IN (SELECT value FROM json_each(?))`, guildID, list)
	if err != nil {
		return nil, err
	}
	out := map[uint64]MemberWithRoles{}
	err = eachRow(rows, func(r *sql.Rows) error {
		m, err := scanGuildMember(r)
		if err == nil {
			out[m.UserID] = MemberWithRoles{Member: *m, Roles: []uint64{}}
		}
		return err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	rows, err = s.q.QueryContext(ctx, `SELECT user_id, role_id FROM guild_member_roles
		WHERE guild_id=? AND user_id IN (SELECT value FROM json_each(?)) ORDER BY user_id, role_id`, guildID, list)
	if err != nil {
		return nil, err
	}
	return out, eachRow(rows, func(r *sql.Rows) error {
		var user, role uint64
		if err := r.Scan(&user, &role); err != nil {
			return err
		}
		if m, ok := out[user]; ok {
			m.Roles = append(m.Roles, role)
			out[user] = m
		}
		return nil
	})
}

// eachRow calls fn on each of rows and closes them.
func eachRow(rows *sql.Rows, fn func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
