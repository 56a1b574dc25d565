package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// GuildRole is a role of a guild. The @everyone role has the guild's id. Colors: Color is the
// primary color; SecondaryColor and TertiaryColor make a gradient (guild feature
// ENHANCED_ROLE_COLORS, rule ROLE-1), nil when unset.
type GuildRole struct {
	ID                            uint64
	GuildID                       uint64
	Name                          string
	Color                         int
	SecondaryColor, TertiaryColor *int
	Permissions                   uint64
	Position                      int
	Hoist, Mentionable            bool
}

// Overwrite types of ChannelOverwrite.
const (
	OverwriteRole   = 0
	OverwriteMember = 1
)

// ChannelOverwrite is a permission overwrite of a channel for a role or a member.
type ChannelOverwrite struct {
	ChannelID   uint64
	TargetID    uint64
	Type        int // OverwriteRole or OverwriteMember
	Allow, Deny uint64
}

// GuildMessage is a message of a guild channel.
type GuildMessage struct {
	ID        uint64
	ChannelID uint64
	GuildID   uint64
	AuthorID  uint64
	Content   string
	Mentions  []uint64 // ids of the users the content mentions
	CreatedAt time.Time
	EditedAt  time.Time // zero until edited
	// Reference is the message this one replies to or forwards; nil for a plain message.
	Reference *MessageReference
	// Snapshot is a forward's copy of the message it forwards, taken when it was forwarded.
	Snapshot *MessageSnapshot
	// Interaction is, for the response to an interaction, what package messages keeps of it
	// (JSON); nil for other messages. UpdateGuildMessage leaves it.
	Interaction []byte
}

// Types of MessageReference (the platform's message_reference types).
const (
	ReferenceReply   = 0
	ReferenceForward = 1
)

// MessageReference names the message a guild message replies to (ReferenceReply) or forwards
// (ReferenceForward). The message may have been deleted since.
type MessageReference struct {
	Type                          int
	MessageID, ChannelID, GuildID uint64
}

// MessageSnapshot is what a forward keeps of the message it forwards, as it was then.
type MessageSnapshot struct {
	Type      int // the message type of the forwarded message
	Content   string
	Mentions  []uint64
	Flags     int
	CreatedAt time.Time
	EditedAt  time.Time // zero when it had not been edited
}

// snapshotJSON is the form of a MessageSnapshot in the snapshot column (times as the store's
// other timestamps).
type snapshotJSON struct {
	Type     int      `json:"type"`
	Content  string   `json:"content"`
	Mentions []uint64 `json:"mentions"`
	Flags    int      `json:"flags"`
	Created  int64    `json:"created_at"`
	Edited   int64    `json:"edited_at"`
}

// MessagePage selects guild channel messages: those before or after an id (both 0: the
// newest), at most Limit.
type MessagePage struct {
	Before, After uint64
	Limit         int
}

// GuildBotStore keeps what bots see of guilds: features, roles, the members' roles and
// profiles, channel overwrites and guild channel messages.
type GuildBotStore interface {
	GetGuildFeatures(ctx context.Context, guildID uint64) ([]string, error)
	SetGuildFeatures(ctx context.Context, guildID uint64, features []string) error

	// PutGuildRole inserts or replaces a role.
	PutGuildRole(ctx context.Context, r *GuildRole) error
	// ListGuildRoles returns the guild's roles by position, then id.
	ListGuildRoles(ctx context.Context, guildID uint64) ([]GuildRole, error)

	// SetMemberRoles replaces the member's roles.
	SetMemberRoles(ctx context.Context, guildID, userID uint64, roleIDs []uint64) error
	// ListMemberRoles returns the member's role ids, ascending.
	ListMemberRoles(ctx context.Context, guildID, userID uint64) ([]uint64, error)
	// CountRoleMembers returns how many members have each role of the guild that any member
	// has (rule GLD-4).
	CountRoleMembers(ctx context.Context, guildID uint64) (map[uint64]int, error)
	// ListGuildMembers returns up to limit members with a user id above after, by user id.
	ListGuildMembers(ctx context.Context, guildID, after uint64, limit int) ([]GuildMember, error)
	// CountGuildMembers returns how many members the guild has.
	CountGuildMembers(ctx context.Context, guildID uint64) (int, error)
	// DeleteGuildMember removes a membership and its roles; ErrNotFound when there was none.
	DeleteGuildMember(ctx context.Context, guildID, userID uint64) error

	// PutChannelOverwrite inserts or replaces the overwrite of its target on its channel.
	PutChannelOverwrite(ctx context.Context, o *ChannelOverwrite) error
	// ListChannelOverwrites returns the channel's overwrites by target id.
	ListChannelOverwrites(ctx context.Context, channelID uint64) ([]ChannelOverwrite, error)

	// InsertGuildMessage stores a message with its reference and snapshot.
	InsertGuildMessage(ctx context.Context, m *GuildMessage) error
	// GetGuildMessage returns message id of the channel (ErrNotFound when it is another's).
	GetGuildMessage(ctx context.Context, channelID, id uint64) (*GuildMessage, error)
	// UpdateGuildMessage writes Content, Mentions and EditedAt.
	UpdateGuildMessage(ctx context.Context, m *GuildMessage) error
	// DeleteGuildMessage deletes a message; ErrNotFound when there was none.
	DeleteGuildMessage(ctx context.Context, channelID, id uint64) error
	// ListGuildMessages returns a page of the channel's messages, newest first.
	ListGuildMessages(ctx context.Context, channelID uint64, p MessagePage) ([]GuildMessage, error)
}

// ---- features

func (s *DB) GetGuildFeatures(ctx context.Context, guildID uint64) ([]string, error) {
	var raw string
	if err := s.q.QueryRowContext(ctx, `SELECT features FROM guilds WHERE id=?`, guildID).Scan(&raw); err != nil {
		return nil, notFound(err)
	}
	out := []string{}
	return out, json.Unmarshal([]byte(raw), &out)
}

func (s *DB) SetGuildFeatures(ctx context.Context, guildID uint64, features []string) error {
	if features == nil {
		features = []string{}
	}
	raw, err := json.Marshal(features)
	if err != nil {
		return err
	}
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guilds SET features=? WHERE id=?`, string(raw), guildID))
}

// ---- roles

const guildRoleColumns = `id, guild_id, name, color, secondary_color, tertiary_color, permissions, position, hoist, mentionable`

var upsertGuildRole = upsert(`guild_roles`, guildRoleColumns, `id`)

var upsertOverwrite = upsert(`channel_overwrites`, `channel_id, target_id, type, allow, deny`, `channel_id, target_id`)

func scanGuildRole(row interface{ Scan(...any) error }) (*GuildRole, error) {
	var r GuildRole
	var second, third sql.NullInt64
	var perms int64
	var hoist, mention int
	if err := row.Scan(&r.ID, &r.GuildID, &r.Name, &r.Color, &second, &third, &perms, &r.Position, &hoist, &mention); err != nil {
		return nil, notFound(err)
	}
	if second.Valid {
		v := int(second.Int64)
		r.SecondaryColor = &v
	}
	if third.Valid {
		v := int(third.Int64)
		r.TertiaryColor = &v
	}
	r.Permissions, r.Hoist, r.Mentionable = uint64(perms), hoist != 0, mention != 0
	return &r, nil
}

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func (s *DB) PutGuildRole(ctx context.Context, r *GuildRole) error {
	_, err := s.q.ExecContext(ctx, upsertGuildRole,
		r.ID, r.GuildID, r.Name, r.Color, nullInt(r.SecondaryColor), nullInt(r.TertiaryColor), int64(r.Permissions),
		r.Position, b2i(r.Hoist), b2i(r.Mentionable))
	return err
}

func (s *DB) ListGuildRoles(ctx context.Context, guildID uint64) ([]GuildRole, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildRoleColumns+` FROM guild_roles WHERE guild_id=?
		ORDER BY position, id`, guildID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildRole)
}

// ---- member roles and members

func (s *DB) SetMemberRoles(ctx context.Context, guildID, userID uint64, roleIDs []uint64) error {
	return s.WithTx(ctx, func(st Store) error {
		tx := st.(*DB)
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM guild_member_roles WHERE guild_id=? AND user_id=?`, guildID, userID); err != nil {
			return err
		}
		for _, id := range roleIDs {
			if _, err := tx.q.ExecContext(ctx, `INSERT INTO guild_member_roles (guild_id, user_id, role_id)
				VALUES (?,?,?) ON CONFLICT DO NOTHING`, guildID, userID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *DB) ListMemberRoles(ctx context.Context, guildID, userID uint64) ([]uint64, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT role_id FROM guild_member_roles WHERE guild_id=? AND user_id=?
		ORDER BY role_id`, guildID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []uint64{}
	for rows.Next() {
		var id uint64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func (s *DB) CountRoleMembers(ctx context.Context, guildID uint64) (map[uint64]int, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT role_id, COUNT(*) FROM guild_member_roles WHERE guild_id=? GROUP BY role_id`, guildID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := make(map[uint64]int)
	for rows.Next() {
		var id uint64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		counts[id] = n
	}
	return counts, rows.Err()
}

func (s *DB) ListGuildMembers(ctx context.Context, guildID, after uint64, limit int) ([]GuildMember, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildMemberColumns+` FROM guild_members WHERE guild_id=? AND user_id>?
		ORDER BY user_id LIMIT ?`, guildID, after, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildMember)
}

func (s *DB) CountGuildMembers(ctx context.Context, guildID uint64) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM guild_members WHERE guild_id=?`, guildID).Scan(&n)
	return n, err
}

func (s *DB) DeleteGuildMember(ctx context.Context, guildID, userID uint64) error {
	return s.WithTx(ctx, func(st Store) error {
		tx := st.(*DB)
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM guild_member_roles WHERE guild_id=? AND user_id=?`, guildID, userID); err != nil {
			return err
		}
		return mustAffect(tx.q.ExecContext(ctx, `DELETE FROM guild_members WHERE guild_id=? AND user_id=?`, guildID, userID))
	})
}

// ---- overwrites

func (s *DB) PutChannelOverwrite(ctx context.Context, o *ChannelOverwrite) error {
	_, err := s.q.ExecContext(ctx, upsertOverwrite, o.ChannelID, o.TargetID, o.Type, int64(o.Allow), int64(o.Deny))
	return err
}

func (s *DB) ListChannelOverwrites(ctx context.Context, channelID uint64) ([]ChannelOverwrite, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT channel_id, target_id, type, allow, deny FROM channel_overwrites
		WHERE channel_id=? ORDER BY target_id`, channelID)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*ChannelOverwrite, error) {
		var o ChannelOverwrite
		var allow, deny int64
		if err := row.Scan(&o.ChannelID, &o.TargetID, &o.Type, &allow, &deny); err != nil {
			return nil, err
		}
		o.Allow, o.Deny = uint64(allow), uint64(deny)
		return &o, nil
	})
}

// ---- guild messages

const guildMessageColumns = `id, channel_id, guild_id, author_id, content, mentions, created_at, edited_at,
	ref_type, ref_message_id, ref_channel_id, ref_guild_id, snapshot, interaction`

func scanGuildMessage(row interface{ Scan(...any) error }) (*GuildMessage, error) {
	var m GuildMessage
	if err := new(messageScan).into(row, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// messageScan holds what scanning a row of guildMessageColumns needs besides the message: a
// query's rows share one (a page of 100 messages allocated these for every row, as what is passed
// to Scan escapes).
type messageScan struct {
	mentions                         string
	created, edited                  int64
	refType                          sql.NullInt64
	refMessage, refChannel, refGuild idCol
	snapshot, interaction            sql.NullString
	dest                             [14]any
}

// into scans a row of guildMessageColumns into m, which may be an element of the caller's slice
// (a page's rows are scanned in place, not each into a copy of its own).
func (s *messageScan) into(row interface{ Scan(...any) error }, m *GuildMessage) error {
	s.dest = [14]any{(*idCol)(&m.ID), (*idCol)(&m.ChannelID), (*idCol)(&m.GuildID), (*idCol)(&m.AuthorID), &m.Content,
		&s.mentions, &s.created, &s.edited, &s.refType, &s.refMessage, &s.refChannel, &s.refGuild, &s.snapshot, &s.interaction}
	if err := row.Scan(s.dest[:]...); err != nil {
		return notFound(err)
	}
	m.Interaction = nil
	if s.interaction.Valid {
		m.Interaction = []byte(s.interaction.String)
	}
	var err error
	if m.Mentions, err = parseIDs(s.mentions); err != nil {
		return err
	}
	m.CreatedAt, m.EditedAt = fromTS(s.created), fromTS(s.edited)
	m.Reference = nil
	if s.refType.Valid {
		m.Reference = &MessageReference{Type: int(s.refType.Int64), MessageID: uint64(s.refMessage),
			ChannelID: uint64(s.refChannel), GuildID: uint64(s.refGuild)}
	}
	m.Snapshot = nil
	if s.snapshot.Valid {
		var j snapshotJSON
		if err := json.Unmarshal([]byte(s.snapshot.String), &j); err != nil {
			return err
		}
		m.Snapshot = &MessageSnapshot{Type: j.Type, Content: j.Content, Mentions: j.Mentions, Flags: j.Flags,
			CreatedAt: fromTS(j.Created), EditedAt: fromTS(j.Edited)}
	}
	return nil
}

// idCol is a uint64 that Scan reads from an INTEGER column. database/sql converts an int64 to a
// *uint64 through its decimal string (strconv.FormatInt, then ParseUint): an allocation and two
// conversions for each id of each row, where this is a check and a copy. The store writes ids
// below 2^63, so a negative value is an error, as database/sql's would be.
type idCol uint64

// Scan implements sql.Scanner.
func (c *idCol) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		if v >= 0 {
			*c = idCol(v)
			return nil
		}
	case []byte:
		return c.parse(string(v))
	case string:
		return c.parse(v)
	}
	return fmt.Errorf("store: converting %T (%v) to uint64 is unsupported", src, src)
}

func (c *idCol) parse(s string) error {
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("store: converting %q to uint64: %w", s, err)
	}
	*c = idCol(u)
	return nil
}

// referenceColumns are the values of a message's ref_*, snapshot and interaction columns.
func referenceColumns(m *GuildMessage) ([]any, error) {
	out := []any{nil, 0, 0, 0, nil, nil}
	if m.Interaction != nil {
		out[5] = string(m.Interaction)
	}
	if r := m.Reference; r != nil {
		out[0], out[1], out[2], out[3] = r.Type, r.MessageID, r.ChannelID, r.GuildID
	}
	if p := m.Snapshot; p != nil {
		raw, err := json.Marshal(snapshotJSON{Type: p.Type, Content: p.Content, Mentions: p.Mentions, Flags: p.Flags,
			Created: ts(p.CreatedAt), Edited: ts(p.EditedAt)})
		if err != nil {
			return nil, err
		}
		out[4] = string(raw)
	}
	return out, nil
}

// parseIDs reads a JSON array of ids as mentionsJSON writes it ("[1,2]"), without the JSON
// decoder's reflection: a page of messages reads one per message.
func parseIDs(s string) ([]uint64, error) {
	inner, ok := strings.CutPrefix(s, "[")
	if inner, ok2 := strings.CutSuffix(inner, "]"); ok && ok2 {
		if inner == "" {
			return []uint64{}, nil
		}
		out := make([]uint64, 0, strings.Count(inner, ",")+1)
		for f := range strings.SplitSeq(inner, ",") {
			id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("store: id list %q: %w", s, err)
			}
			out = append(out, id)
		}
		return out, nil
	}
	return nil, fmt.Errorf("store: id list %q is not a JSON array", s)
}

func mentionsJSON(ids []uint64) (string, error) {
	if ids == nil {
		ids = []uint64{}
	}
	raw, err := json.Marshal(ids)
	return string(raw), err
}

func (s *DB) InsertGuildMessage(ctx context.Context, m *GuildMessage) error {
	mentions, err := mentionsJSON(m.Mentions)
	if err != nil {
		return err
	}
	refs, err := referenceColumns(m)
	if err != nil {
		return err
	}
	_, err = s.q.ExecContext(ctx, `INSERT INTO guild_messages (`+guildMessageColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		append([]any{m.ID, m.ChannelID, m.GuildID, m.AuthorID, m.Content, mentions, ts(m.CreatedAt), ts(m.EditedAt)}, refs...)...)
	return err
}

func (s *DB) GetGuildMessage(ctx context.Context, channelID, id uint64) (*GuildMessage, error) {
	return scanGuildMessage(s.q.QueryRowContext(ctx, `SELECT `+guildMessageColumns+` FROM guild_messages
		WHERE id=? AND channel_id=?`, id, channelID))
}

func (s *DB) UpdateGuildMessage(ctx context.Context, m *GuildMessage) error {
	mentions, err := mentionsJSON(m.Mentions)
	if err != nil {
		return err
	}
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guild_messages SET content=?, mentions=?, edited_at=?
		WHERE id=? AND channel_id=?`, m.Content, mentions, ts(m.EditedAt), m.ID, m.ChannelID))
}

func (s *DB) DeleteGuildMessage(ctx context.Context, channelID, id uint64) error {
	if err := mustAffect(s.q.ExecContext(ctx, `DELETE FROM guild_messages WHERE id=? AND channel_id=?`, id, channelID)); err != nil {
		return err
	}
	_, err := s.q.ExecContext(ctx, `DELETE FROM guild_pins WHERE channel_id=? AND message_id=?`, channelID, id)
	return err
}

func (s *DB) ListGuildMessages(ctx context.Context, channelID uint64, p MessagePage) ([]GuildMessage, error) {
	var rows *sql.Rows
	var err error
	switch {
	case p.After != 0: // the oldest ones after, then newest first
		rows, err = s.q.QueryContext(ctx, `SELECT * FROM (SELECT `+guildMessageColumns+` FROM guild_messages
			WHERE channel_id=? AND id>? ORDER BY id LIMIT ?) AS page ORDER BY id DESC`, channelID, p.After, p.Limit)
	case p.Before != 0:
		rows, err = s.q.QueryContext(ctx, `SELECT `+guildMessageColumns+` FROM guild_messages
			WHERE channel_id=? AND id<? ORDER BY id DESC LIMIT ?`, channelID, p.Before, p.Limit)
	default:
		rows, err = s.q.QueryContext(ctx, `SELECT `+guildMessageColumns+` FROM guild_messages
			WHERE channel_id=? ORDER BY id DESC LIMIT ?`, channelID, p.Limit)
	}
	if err != nil {
		return nil, err
	}
	// Scanned in place into a slice of the page's size: a page of 100 is about 20 kB of
	// messages, which growing a slice and copying each row into it allocated several times.
	defer rows.Close()
	out := make([]GuildMessage, 0, min(max(p.Limit, 0), 100))
	var scan messageScan
	for rows.Next() {
		out = append(out, GuildMessage{})
		if err := scan.into(rows, &out[len(out)-1]); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}
