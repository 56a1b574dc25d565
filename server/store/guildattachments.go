package store

import (
	"context"
	"fmt"
	"strings"
)

// GuildAttachment is a file attached to a guild message (rules ATT-1, ATT-2). The bytes are kept
// in the store with the rest of the message; Data is set only by GetGuildAttachment and for
// SetGuildAttachments to insert.
type GuildAttachment struct {
	ID          uint64
	MessageID   uint64
	ChannelID   uint64
	Position    int // order in the message, from 0
	Filename    string
	Description string
	ContentType string
	Size        int
	Width       int // 0 when not an image the service measures
	Height      int
	Flags       int
	Data        []byte
}

// GuildAttachmentStore keeps the attachments of guild messages. Deleting a message deletes its
// attachments (a trigger of table guild_messages).
type GuildAttachmentStore interface {
	// SetGuildAttachments makes list the message's attachments: an entry with Data (non-nil) is
	// inserted, one without must be an attachment of the message already (ErrNotFound otherwise)
	// and gets the entry's Position, Description and Flags; the message's attachments not in list
	// are deleted. Call it in a transaction with the message's own write.
	SetGuildAttachments(ctx context.Context, channelID, messageID uint64, list []GuildAttachment) error
	// ListGuildAttachments returns the message's attachments by position, without Data.
	ListGuildAttachments(ctx context.Context, channelID, messageID uint64) ([]GuildAttachment, error)
	// GetGuildAttachment returns attachment id of the channel with its Data (ErrNotFound when
	// there is none).
	GetGuildAttachment(ctx context.Context, channelID, id uint64) (*GuildAttachment, error)
}

const guildAttachmentColumns = `id, message_id, channel_id, position, filename, description, content_type, size,
	width, height, flags`

func scanGuildAttachment(row interface{ Scan(...any) error }, data *[]byte) (*GuildAttachment, error) {
	var a GuildAttachment
	dst := []any{&a.ID, &a.MessageID, &a.ChannelID, &a.Position, &a.Filename, &a.Description, &a.ContentType, &a.Size,
		&a.Width, &a.Height, &a.Flags}
	if data != nil {
		dst = append(dst, data)
	}
	if err := row.Scan(dst...); err != nil {
		return nil, notFound(err)
	}
	return &a, nil
}

// SetGuildAttachments implements GuildAttachmentStore.
func (s *DB) SetGuildAttachments(ctx context.Context, channelID, messageID uint64, list []GuildAttachment) error {
	keep := make([]string, 0, len(list))
	for i := range list {
		a := &list[i]
		if a.Data != nil {
			_, err := s.q.ExecContext(ctx, `INSERT INTO guild_attachments (`+guildAttachmentColumns+`, data)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, a.ID, messageID, channelID, a.Position, a.Filename, a.Description,
				a.ContentType, a.Size, a.Width, a.Height, a.Flags, a.Data)
			if err != nil {
				return fmt.Errorf("store: insert attachment %d: %w", a.ID, err)
			}
		} else if err := mustAffect(s.q.ExecContext(ctx, `UPDATE guild_attachments SET position=?, description=?, flags=?
			WHERE id=? AND message_id=? AND channel_id=?`, a.Position, a.Description, a.Flags, a.ID, messageID, channelID)); err != nil {
			return fmt.Errorf("store: update attachment %d: %w", a.ID, err)
		}
		keep = append(keep, fmt.Sprint(a.ID))
	}
	q := `DELETE FROM guild_attachments WHERE message_id=? AND channel_id=?`
	if len(keep) > 0 { // ids are integers: no quoting needed
		q += ` AND id NOT IN (` + strings.Join(keep, ",") + `)`
	}
	if _, err := s.q.ExecContext(ctx, q, messageID, channelID); err != nil {
		return fmt.Errorf("store: delete attachments of message %d: %w", messageID, err)
	}
	return nil
}

// ListGuildAttachments implements GuildAttachmentStore.
func (s *DB) ListGuildAttachments(ctx context.Context, channelID, messageID uint64) ([]GuildAttachment, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildAttachmentColumns+` FROM guild_attachments
		WHERE message_id=? AND channel_id=? ORDER BY position, id`, messageID, channelID)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*GuildAttachment, error) {
		return scanGuildAttachment(row, nil)
	})
}

// GetGuildAttachment implements GuildAttachmentStore.
func (s *DB) GetGuildAttachment(ctx context.Context, channelID, id uint64) (*GuildAttachment, error) {
	var data []byte
	a, err := scanGuildAttachment(s.q.QueryRowContext(ctx, `SELECT `+guildAttachmentColumns+`, data FROM guild_attachments
		WHERE id=? AND channel_id=?`, id, channelID), &data)
	if err != nil {
		return nil, err
	}
	a.Data = data
	return a, nil
}
