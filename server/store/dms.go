package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// DMChannel is the direct-message channel of two users; UserLow < UserHigh.
type DMChannel struct {
	ID                uint64
	UserLow, UserHigh uint64
	CreatedAt         time.Time
	// LastMessageID is the newest message's id, 0 when there is none.
	LastMessageID uint64
}

// Other returns the user of the channel who is not userID.
func (c *DMChannel) Other(userID uint64) uint64 {
	if c.UserLow == userID {
		return c.UserHigh
	}
	return c.UserLow
}

// DirectMessage is a game direct message.
type DirectMessage struct {
	ID                 uint64
	ChannelID          uint64
	AppID              uint64 // the application whose SDK sent it
	AuthorID           uint64
	RecipientID        uint64
	Content            string
	Metadata           map[string]string
	ModerationMetadata map[string]string // set by the application's backend (rules MSG-3, MODR-1)
	Flags              int
	CreatedAt          time.Time
	EditedAt           time.Time // zero until edited
	// ReplyTo is the message of the channel this one answers (a reply); 0 for none. It may have
	// been deleted since.
	ReplyTo uint64
}

// DMStore keeps direct-message channels and their messages.
type DMStore interface {
	// PutDMChannel returns the channel of users a and b, inserting c (with its ID and CreatedAt)
	// when they have none.
	PutDMChannel(ctx context.Context, c *DMChannel) (*DMChannel, error)
	GetDMChannel(ctx context.Context, id uint64) (*DMChannel, error)
	// FindDMChannel returns the channel of users a and b.
	FindDMChannel(ctx context.Context, a, b uint64) (*DMChannel, error)
	// ListDMChannels returns the user's channels that have messages, newest message first.
	ListDMChannels(ctx context.Context, userID uint64) ([]DMChannel, error)
	InsertDirectMessage(ctx context.Context, m *DirectMessage) error
	// GetDirectMessage returns message id of the channel (ErrNotFound when it is another's).
	GetDirectMessage(ctx context.Context, channelID, id uint64) (*DirectMessage, error)
	// UpdateDirectMessage writes Content, Metadata, ModerationMetadata, Flags and EditedAt.
	UpdateDirectMessage(ctx context.Context, m *DirectMessage) error
	DeleteDirectMessage(ctx context.Context, channelID, id uint64) error
	// ListDirectMessages returns up to limit messages of the channel sent at or after since,
	// newest first.
	ListDirectMessages(ctx context.Context, channelID uint64, since time.Time, limit int) ([]DirectMessage, error)
	// PinDirectMessage pins message id of the channel at at; false when it was pinned already.
	PinDirectMessage(ctx context.Context, channelID, id uint64, at time.Time) (bool, error)
	// UnpinDirectMessage unpins it; false when it was not pinned.
	UnpinDirectMessage(ctx context.Context, channelID, id uint64) (bool, error)
	// DirectMessagePinnedAt is when the message was pinned, zero when it is not.
	DirectMessagePinnedAt(ctx context.Context, channelID, id uint64) (time.Time, error)
	// ListDMPins returns up to limit pins of the channel made before before (zero: any), the
	// most recent first.
	ListDMPins(ctx context.Context, channelID uint64, before time.Time, limit int) ([]DMPin, error)
	CountDMPins(ctx context.Context, channelID uint64) (int, error)
}

// DMPin is a pinned direct message and when it was pinned.
type DMPin struct {
	Message  DirectMessage
	PinnedAt time.Time
}

func (s *DB) PutDMChannel(ctx context.Context, c *DMChannel) (*DMChannel, error) {
	if c.UserLow > c.UserHigh {
		c.UserLow, c.UserHigh = c.UserHigh, c.UserLow
	}
	if _, err := s.q.ExecContext(ctx, `INSERT INTO dm_channels (id, user_low, user_high, created_at) VALUES (?,?,?,?)
		ON CONFLICT (user_low, user_high) DO NOTHING`, c.ID, c.UserLow, c.UserHigh, ts(c.CreatedAt)); err != nil {
		return nil, err
	}
	return s.FindDMChannel(ctx, c.UserLow, c.UserHigh)
}

// dmChannelColumns are a channel's columns and its newest message's id (0 for none), selected
// from dm_channels.
const dmChannelColumns = `id, user_low, user_high, created_at,
	COALESCE((SELECT MAX(m.id) FROM dm_messages m WHERE m.channel_id = dm_channels.id), 0)`

func scanDMChannel(row interface{ Scan(...any) error }) (*DMChannel, error) {
	var c DMChannel
	var created int64
	if err := row.Scan(&c.ID, &c.UserLow, &c.UserHigh, &created, &c.LastMessageID); err != nil {
		return nil, notFound(err)
	}
	c.CreatedAt = fromTS(created)
	return &c, nil
}

func (s *DB) GetDMChannel(ctx context.Context, id uint64) (*DMChannel, error) {
	return scanDMChannel(s.q.QueryRowContext(ctx, `SELECT `+dmChannelColumns+` FROM dm_channels WHERE id=?`, id))
}

func (s *DB) FindDMChannel(ctx context.Context, a, b uint64) (*DMChannel, error) {
	return scanDMChannel(s.q.QueryRowContext(ctx, `SELECT `+dmChannelColumns+` FROM dm_channels
		WHERE user_low=? AND user_high=?`, min(a, b), max(a, b)))
}

func (s *DB) ListDMChannels(ctx context.Context, userID uint64) ([]DMChannel, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT c.id, c.user_low, c.user_high, c.created_at, MAX(m.id) AS last
		FROM dm_channels c JOIN dm_messages m ON m.channel_id = c.id
		WHERE c.user_low=? OR c.user_high=? GROUP BY c.id ORDER BY last DESC`, userID, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*DMChannel, error) {
		var c DMChannel
		var created int64
		if err := row.Scan(&c.ID, &c.UserLow, &c.UserHigh, &created, &c.LastMessageID); err != nil {
			return nil, err
		}
		c.CreatedAt = fromTS(created)
		return &c, nil
	})
}

const directMessageColumns = `id, channel_id, app_id, author_id, recipient_id, content, metadata, moderation_metadata,
	flags, created_at, edited_at, ref_message_id`

func scanDirectMessage(row interface{ Scan(...any) error }) (*DirectMessage, error) {
	var m DirectMessage
	var meta, mod string
	var created, edited int64
	err := row.Scan(&m.ID, &m.ChannelID, &m.AppID, &m.AuthorID, &m.RecipientID, &m.Content, &meta, &mod, &m.Flags, &created, &edited,
		&m.ReplyTo)
	if err != nil {
		return nil, notFound(err)
	}
	m.CreatedAt, m.EditedAt = fromTS(created), fromTS(edited)
	if m.Metadata, err = readProps(meta, "message metadata"); err != nil {
		return nil, err
	}
	if m.ModerationMetadata, err = readProps(mod, "moderation metadata"); err != nil {
		return nil, err
	}
	return &m, nil
}

func (s *DB) InsertDirectMessage(ctx context.Context, m *DirectMessage) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO dm_messages (`+directMessageColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		m.ID, m.ChannelID, m.AppID, m.AuthorID, m.RecipientID, m.Content, props(m.Metadata), props(m.ModerationMetadata),
		m.Flags, ts(m.CreatedAt), ts(m.EditedAt), m.ReplyTo)
	return err
}

func (s *DB) GetDirectMessage(ctx context.Context, channelID, id uint64) (*DirectMessage, error) {
	return scanDirectMessage(s.q.QueryRowContext(ctx, `SELECT `+directMessageColumns+` FROM dm_messages
		WHERE id=? AND channel_id=?`, id, channelID))
}

func (s *DB) UpdateDirectMessage(ctx context.Context, m *DirectMessage) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE dm_messages SET content=?, metadata=?, moderation_metadata=?, flags=?,
		edited_at=? WHERE id=?`, m.Content, props(m.Metadata), props(m.ModerationMetadata), m.Flags, ts(m.EditedAt), m.ID))
}

func (s *DB) DeleteDirectMessage(ctx context.Context, channelID, id uint64) error {
	if err := mustAffect(s.q.ExecContext(ctx, `DELETE FROM dm_messages WHERE id=? AND channel_id=?`, id, channelID)); err != nil {
		return err
	}
	_, err := s.q.ExecContext(ctx, `DELETE FROM dm_pins WHERE channel_id=? AND message_id=?`, channelID, id)
	return err
}

func (s *DB) PinDirectMessage(ctx context.Context, channelID, id uint64, at time.Time) (bool, error) {
	return affectedOne(s.q.ExecContext(ctx, `INSERT INTO dm_pins (channel_id, message_id, pinned_at) VALUES (?,?,?) ON CONFLICT DO NOTHING`,
		channelID, id, ts(at)))
}

func (s *DB) UnpinDirectMessage(ctx context.Context, channelID, id uint64) (bool, error) {
	return affectedOne(s.q.ExecContext(ctx, `DELETE FROM dm_pins WHERE channel_id=? AND message_id=?`, channelID, id))
}

// affectedOne tells whether a statement changed one row.
func affectedOne(res sql.Result, err error) (bool, error) {
	n, err := affected(res, err)
	return n == 1, err
}

func (s *DB) DirectMessagePinnedAt(ctx context.Context, channelID, id uint64) (time.Time, error) {
	var at int64
	err := s.q.QueryRowContext(ctx, `SELECT pinned_at FROM dm_pins WHERE channel_id=? AND message_id=?`, channelID, id).Scan(&at)
	if err = notFound(err); errors.Is(err, ErrNotFound) {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, err
	}
	return fromTS(at), nil
}

func (s *DB) ListDMPins(ctx context.Context, channelID uint64, before time.Time, limit int) ([]DMPin, error) {
	upTo := int64(1<<63 - 1)
	if !before.IsZero() {
		upTo = ts(before)
	}
	rows, err := s.q.QueryContext(ctx, `SELECT `+prefixed("m.", directMessageColumns)+`, p.pinned_at
		FROM dm_pins p JOIN dm_messages m ON m.id=p.message_id AND m.channel_id=p.channel_id
		WHERE p.channel_id=? AND p.pinned_at<? ORDER BY p.pinned_at DESC, p.message_id DESC LIMIT ?`, channelID, upTo, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*DMPin, error) {
		var at int64
		m, err := scanDirectMessage(scanThen{row, &at})
		if err != nil {
			return nil, err
		}
		return &DMPin{Message: *m, PinnedAt: fromTS(at)}, nil
	})
}

func (s *DB) CountDMPins(ctx context.Context, channelID uint64) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM dm_pins WHERE channel_id=?`, channelID).Scan(&n)
	return n, err
}

func (s *DB) ListDirectMessages(ctx context.Context, channelID uint64, since time.Time, limit int) ([]DirectMessage, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+directMessageColumns+` FROM dm_messages
		WHERE channel_id=? AND created_at>=? ORDER BY id DESC LIMIT ?`, channelID, ts(since), limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanDirectMessage)
}
