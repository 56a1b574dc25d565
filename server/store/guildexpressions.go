package store

import (
	"context"
	"time"
)

// GuildEmoji is a custom emoji of a guild (rules VER-1, ERR-1). Image is the hash of its image
// (its bytes are not kept); Animated marks a GIF.
type GuildEmoji struct {
	ID        uint64
	GuildID   uint64
	Name      string
	Image     string
	Animated  bool
	CreatorID uint64
	CreatedAt time.Time
}

// GuildScheduledEvent is a scheduled event of a guild (rules VER-1, ERR-1). ChannelID is set for
// entity types 1 (stage) and 2 (voice), Location and EndAt (zero: none) for type 3 (external).
type GuildScheduledEvent struct {
	ID           uint64
	GuildID      uint64
	ChannelID    uint64
	CreatorID    uint64
	Name         string
	Description  string
	PrivacyLevel int
	Status       int
	EntityType   int
	Location     string
	StartAt      time.Time
	EndAt        time.Time
	CreatedAt    time.Time
}

// GuildExpressionStore keeps guilds' custom emoji and scheduled events.
type GuildExpressionStore interface {
	InsertGuildEmoji(ctx context.Context, e *GuildEmoji) error
	// GetGuildEmoji returns the guild's emoji id; ErrNotFound when the guild has no such emoji.
	GetGuildEmoji(ctx context.Context, guildID, id uint64) (*GuildEmoji, error)
	// ListGuildEmojis returns the guild's emoji by id.
	ListGuildEmojis(ctx context.Context, guildID uint64) ([]GuildEmoji, error)
	// DeleteGuildEmoji deletes the guild's emoji id; ErrNotFound when there was none.
	DeleteGuildEmoji(ctx context.Context, guildID, id uint64) error

	InsertGuildScheduledEvent(ctx context.Context, e *GuildScheduledEvent) error
	// GetGuildScheduledEvent returns the guild's event id; ErrNotFound when there is none.
	GetGuildScheduledEvent(ctx context.Context, guildID, id uint64) (*GuildScheduledEvent, error)
	// ListGuildScheduledEvents returns the guild's events by id.
	ListGuildScheduledEvents(ctx context.Context, guildID uint64) ([]GuildScheduledEvent, error)
	// DeleteGuildScheduledEvent deletes the guild's event id; ErrNotFound when there was none.
	DeleteGuildScheduledEvent(ctx context.Context, guildID, id uint64) error
}

const guildEmojiColumns = `id, guild_id, name, image, animated, creator_id, created_at`

func scanGuildEmoji(row interface{ Scan(...any) error }) (*GuildEmoji, error) {
	var e GuildEmoji
	var created int64
	if err := row.Scan(&e.ID, &e.GuildID, &e.Name, &e.Image, &e.Animated, &e.CreatorID, &created); err != nil {
		return nil, notFound(err)
	}
	e.CreatedAt = fromTS(created)
	return &e, nil
}

func (s *DB) InsertGuildEmoji(ctx context.Context, e *GuildEmoji) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_emojis (`+guildEmojiColumns+`) VALUES (?,?,?,?,?,?,?)`,
		e.ID, e.GuildID, e.Name, e.Image, b2i(e.Animated), e.CreatorID, ts(e.CreatedAt))
	return err
}

func (s *DB) GetGuildEmoji(ctx context.Context, guildID, id uint64) (*GuildEmoji, error) {
	return scanGuildEmoji(s.q.QueryRowContext(ctx, `SELECT `+guildEmojiColumns+` FROM guild_emojis WHERE guild_id=? AND id=?`, guildID, id))
}

func (s *DB) ListGuildEmojis(ctx context.Context, guildID uint64) ([]GuildEmoji, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildEmojiColumns+` FROM guild_emojis WHERE guild_id=? ORDER BY id`, guildID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildEmoji)
}

func (s *DB) DeleteGuildEmoji(ctx context.Context, guildID, id uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM guild_emojis WHERE guild_id=? AND id=?`, guildID, id))
}

const guildEventColumns = `id, guild_id, channel_id, creator_id, name, description, privacy_level, status, entity_type,
	location, start_at, end_at, created_at`

func scanGuildEvent(row interface{ Scan(...any) error }) (*GuildScheduledEvent, error) {
	var e GuildScheduledEvent
	var start, end, created int64
	if err := row.Scan(&e.ID, &e.GuildID, &e.ChannelID, &e.CreatorID, &e.Name, &e.Description, &e.PrivacyLevel, &e.Status,
		&e.EntityType, &e.Location, &start, &end, &created); err != nil {
		return nil, notFound(err)
	}
	e.StartAt, e.CreatedAt = fromTS(start), fromTS(created)
	if end != 0 {
		e.EndAt = fromTS(end)
	}
	return &e, nil
}

func (s *DB) InsertGuildScheduledEvent(ctx context.Context, e *GuildScheduledEvent) error {
	var end int64
	if !e.EndAt.IsZero() {
		end = ts(e.EndAt)
	}
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_scheduled_events (`+guildEventColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.ID, e.GuildID, e.ChannelID, e.CreatorID, e.Name, e.Description, e.PrivacyLevel, e.Status, e.EntityType, e.Location,
		ts(e.StartAt), end, ts(e.CreatedAt))
	return err
}

func (s *DB) GetGuildScheduledEvent(ctx context.Context, guildID, id uint64) (*GuildScheduledEvent, error) {
	return scanGuildEvent(s.q.QueryRowContext(ctx, `SELECT `+guildEventColumns+` FROM guild_scheduled_events WHERE guild_id=? AND id=?`, guildID, id))
}

func (s *DB) ListGuildScheduledEvents(ctx context.Context, guildID uint64) ([]GuildScheduledEvent, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildEventColumns+` FROM guild_scheduled_events WHERE guild_id=? ORDER BY id`, guildID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildEvent)
}

func (s *DB) DeleteGuildScheduledEvent(ctx context.Context, guildID, id uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM guild_scheduled_events WHERE guild_id=? AND id=?`, guildID, id))
}
