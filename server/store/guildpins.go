package store

import (
	"context"
	"errors"
	"time"
)

// GuildPin is a pinned message of a guild channel and when it was pinned.
type GuildPin struct {
	Message  GuildMessage
	PinnedAt time.Time
}

// GuildPinStore keeps which messages of guild channels are pinned (rule PIN-1).
type GuildPinStore interface {
	// PinGuildMessage pins message id of the channel at at; pinned is false when it already was
	// (its time is kept). ErrNotFound when the channel has no such message.
	PinGuildMessage(ctx context.Context, channelID, id uint64, at time.Time) (pinned bool, err error)
	// UnpinGuildMessage unpins message id of the channel; unpinned is false when it was not
	// pinned. ErrNotFound when the channel has no such message.
	UnpinGuildMessage(ctx context.Context, channelID, id uint64) (unpinned bool, err error)
	// GuildMessagePinnedAt returns when message id of the channel was pinned, zero when it is
	// not pinned.
	GuildMessagePinnedAt(ctx context.Context, channelID, id uint64) (time.Time, error)
	// ListGuildPins returns up to limit of the channel's pins made before before (zero: the
	// newest), the most recently pinned first.
	ListGuildPins(ctx context.Context, channelID uint64, before time.Time, limit int) ([]GuildPin, error)
	// CountGuildPins returns how many of the channel's messages are pinned.
	CountGuildPins(ctx context.Context, channelID uint64) (int, error)
}

// messageExists reports ErrNotFound when the channel has no message id.
func (s *DB) messageExists(ctx context.Context, channelID, id uint64) error {
	var one int
	return notFound(s.q.QueryRowContext(ctx, `SELECT 1 FROM guild_messages WHERE id=? AND channel_id=?`, id, channelID).Scan(&one))
}

func (s *DB) PinGuildMessage(ctx context.Context, channelID, id uint64, at time.Time) (bool, error) {
	if err := s.messageExists(ctx, channelID, id); err != nil {
		return false, err
	}
	res, err := s.q.ExecContext(ctx, `INSERT INTO guild_pins (channel_id, message_id, pinned_at) VALUES (?,?,?) ON CONFLICT DO NOTHING`,
		channelID, id, ts(at))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *DB) UnpinGuildMessage(ctx context.Context, channelID, id uint64) (bool, error) {
	if err := s.messageExists(ctx, channelID, id); err != nil {
		return false, err
	}
	res, err := s.q.ExecContext(ctx, `DELETE FROM guild_pins WHERE channel_id=? AND message_id=?`, channelID, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *DB) GuildMessagePinnedAt(ctx context.Context, channelID, id uint64) (time.Time, error) {
	var at int64
	err := s.q.QueryRowContext(ctx, `SELECT pinned_at FROM guild_pins WHERE channel_id=? AND message_id=?`, channelID, id).Scan(&at)
	if err = notFound(err); errors.Is(err, ErrNotFound) {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, err
	}
	return fromTS(at), nil
}

func (s *DB) ListGuildPins(ctx context.Context, channelID uint64, before time.Time, limit int) ([]GuildPin, error) {
	upTo := int64(1<<63 - 1)
	if !before.IsZero() {
		upTo = ts(before)
	}
	rows, err := s.q.QueryContext(ctx, `SELECT `+prefixed("m.", guildMessageColumns)+`, p.pinned_at
		FROM guild_pins p JOIN guild_messages m ON m.id=p.message_id AND m.channel_id=p.channel_id
		WHERE p.channel_id=? AND p.pinned_at<? ORDER BY p.pinned_at DESC, p.message_id DESC LIMIT ?`, channelID, upTo, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*GuildPin, error) {
		var at int64
		m, err := scanGuildMessage(scanThen{row, &at})
		if err != nil {
			return nil, err
		}
		return &GuildPin{Message: *m, PinnedAt: fromTS(at)}, nil
	})
}

func (s *DB) CountGuildPins(ctx context.Context, channelID uint64) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM guild_pins WHERE channel_id=?`, channelID).Scan(&n)
	return n, err
}

// scanThen scans a row into the destinations a scan function gives and then into more.
type scanThen struct {
	row  interface{ Scan(...any) error }
	more any
}

func (s scanThen) Scan(dest ...any) error { return s.row.Scan(append(dest, s.more)...) }
