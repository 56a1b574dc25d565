package store

import (
	"context"
	"time"
)

// VoiceStatus is a voice channel's status (rule VCS-1); Status "" is none. (Who is in a voice
// channel, and since when, lives in memory with the gateway sessions: package guildvoice. The
// table's voice_start_time column is unused.)
type VoiceStatus struct {
	ChannelID uint64
	GuildID   uint64
	Status    string
	UpdatedAt time.Time
}

// AuditEntry is an entry of a guild's audit log (rule AUD-1). Options is the JSON object of the
// entry's optional info.
type AuditEntry struct {
	ID         uint64
	GuildID    uint64
	UserID     uint64
	TargetID   uint64
	ActionType int
	Options    []byte
	CreatedAt  time.Time
}

// AuditQuery selects audit log entries: of one action type and one user unless 0, with ids below
// Before (when not 0) and above After, at most Limit, the newest first.
type AuditQuery struct {
	ActionType    int
	UserID        uint64
	Before, After uint64
	Limit         int
}

// VoiceStatusStore keeps voice channel statuses and guild audit logs.
type VoiceStatusStore interface {
	// PutVoiceStatus inserts or replaces the channel's status.
	PutVoiceStatus(ctx context.Context, v *VoiceStatus) error
	// GetVoiceStatus returns the channel's status; ErrNotFound when it never had one.
	GetVoiceStatus(ctx context.Context, channelID uint64) (*VoiceStatus, error)
	// ListVoiceStatuses returns the statuses of the guild's channels, by channel id.
	ListVoiceStatuses(ctx context.Context, guildID uint64) ([]VoiceStatus, error)

	InsertAuditEntry(ctx context.Context, e *AuditEntry) error
	ListAuditEntries(ctx context.Context, guildID uint64, q AuditQuery) ([]AuditEntry, error)
}

const voiceStatusColumns = `channel_id, guild_id, status, updated_at`

var upsertVoiceStatus = upsert(`voice_channel_status`, voiceStatusColumns, `channel_id`)

func scanVoiceStatus(row interface{ Scan(...any) error }) (*VoiceStatus, error) {
	var v VoiceStatus
	var updated int64
	if err := row.Scan(&v.ChannelID, &v.GuildID, &v.Status, &updated); err != nil {
		return nil, notFound(err)
	}
	v.UpdatedAt = fromTS(updated)
	return &v, nil
}

func (s *DB) PutVoiceStatus(ctx context.Context, v *VoiceStatus) error {
	_, err := s.q.ExecContext(ctx, upsertVoiceStatus,
		v.ChannelID, v.GuildID, v.Status, ts(v.UpdatedAt))
	return err
}

func (s *DB) GetVoiceStatus(ctx context.Context, channelID uint64) (*VoiceStatus, error) {
	return scanVoiceStatus(s.q.QueryRowContext(ctx, `SELECT `+voiceStatusColumns+` FROM voice_channel_status
		WHERE channel_id=?`, channelID))
}

func (s *DB) ListVoiceStatuses(ctx context.Context, guildID uint64) ([]VoiceStatus, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+voiceStatusColumns+` FROM voice_channel_status
		WHERE guild_id=? ORDER BY channel_id`, guildID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanVoiceStatus)
}

const auditColumns = `id, guild_id, user_id, target_id, action_type, options, created_at`

func scanAuditEntry(row interface{ Scan(...any) error }) (*AuditEntry, error) {
	var e AuditEntry
	var options string
	var created int64
	if err := row.Scan(&e.ID, &e.GuildID, &e.UserID, &e.TargetID, &e.ActionType, &options, &created); err != nil {
		return nil, notFound(err)
	}
	e.Options, e.CreatedAt = []byte(options), fromTS(created)
	return &e, nil
}

func (s *DB) InsertAuditEntry(ctx context.Context, e *AuditEntry) error {
	options := string(e.Options)
	if options == "" {
		options = "{}"
	}
	_, err := s.q.ExecContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (?,?,?,?,?,?,?)`,
		e.ID, e.GuildID, e.UserID, e.TargetID, e.ActionType, options, ts(e.CreatedAt))
	return err
}

func (s *DB) ListAuditEntries(ctx context.Context, guildID uint64, q AuditQuery) ([]AuditEntry, error) {
	query := `SELECT ` + auditColumns + ` FROM audit_log WHERE guild_id=? AND (CAST(? AS BIGINT)=0 OR action_type=?)
		AND (CAST(? AS BIGINT)=0 OR user_id=?) AND (CAST(? AS BIGINT)=0 OR id<?) AND id>? ORDER BY id DESC LIMIT ?`
	rows, err := s.q.QueryContext(ctx, query, guildID, q.ActionType, q.ActionType, q.UserID, q.UserID,
		q.Before, q.Before, q.After, q.Limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanAuditEntry)
}
