package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// GuildAttachment is a file attached to a guild message (rules ATT-1, ATT-2). The bytes are kept
// in the store with the rest of the message: whole in the attachment's row (Data), or, for those
// inserted from a Body, in chunks of AttachmentChunk bytes (OpenGuildAttachment reads either).
// Data is set only by GetGuildAttachment and for SetGuildAttachments to insert.
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
	// Body, when set instead of Data, is read for SetGuildAttachments to insert, a chunk at a
	// time (AttachmentChunk bytes), so that an upload is never whole in memory.
	Body io.Reader
	// Stored, when set instead of Data and Body, says that the bytes were stored ahead of the
	// attachment, outside its message's transaction (PutAttachmentChunks): SetGuildAttachments
	// inserts the attachment, which takes them.
	Stored bool
}

// AttachmentChunk is the size of the pieces an attachment read from a Body is kept in.
const AttachmentChunk = 256 << 10

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
	// OpenGuildAttachment returns attachment id of the channel, without Data, and a reader of
	// its bytes that reads them a chunk at a time (ErrNotFound when there is none).
	OpenGuildAttachment(ctx context.Context, channelID, id uint64) (*GuildAttachment, io.ReadSeeker, error)

	// PutAttachmentChunks stores what body reads as the bytes of attachment id, ahead of the
	// attachment (SetGuildAttachments with Stored). Called outside a transaction, it writes one
	// chunk at a time, each its own write: on SQLite the one writer is held for a chunk, and other
	// writes go in between, instead of for the whole upload inside its message's transaction.
	// Bytes that no attachment takes are removed by DeleteAttachmentChunks (the message's write
	// failed) or SweepAttachmentChunks (the node stopped in between).
	PutAttachmentChunks(ctx context.Context, id uint64, body io.Reader) error
	// DeleteAttachmentChunks removes the bytes stored for attachment id.
	DeleteAttachmentChunks(ctx context.Context, id uint64) error
	// SweepAttachmentChunks removes the bytes stored for attachments with ids below before that
	// no attachment took (ids are snowflakes: before is a time, snowflake.At).
	SweepAttachmentChunks(ctx context.Context, before uint64) error
}

const guildAttachmentColumns = `id, message_id, channel_id, position, filename, description, content_type, size,
	width, height, flags`

func scanGuildAttachment(row interface{ Scan(...any) error }, data *[]byte) (*GuildAttachment, error) {
	var a GuildAttachment
	dst := []any{(*idCol)(&a.ID), (*idCol)(&a.MessageID), (*idCol)(&a.ChannelID), &a.Position, &a.Filename, &a.Description, &a.ContentType, &a.Size,
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
		if a.Data != nil || a.Body != nil || a.Stored {
			data := a.Data
			if a.Body != nil || a.Stored {
				data = []byte{} // the bytes are in guild_attachment_chunks
			}
			_, err := s.q.ExecContext(ctx, `INSERT INTO guild_attachments (`+guildAttachmentColumns+`, data)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, a.ID, messageID, channelID, a.Position, a.Filename, a.Description,
				a.ContentType, a.Size, a.Width, a.Height, a.Flags, data)
			if err != nil {
				return fmt.Errorf("store: insert attachment %d: %w", a.ID, err)
			}
			if a.Body != nil {
				if err := s.insertChunks(ctx, a.ID, a.Body); err != nil {
					return fmt.Errorf("store: insert attachment %d: %w", a.ID, err)
				}
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

// GetGuildAttachment implements GuildAttachmentStore: OpenGuildAttachment, read whole.
func (s *DB) GetGuildAttachment(ctx context.Context, channelID, id uint64) (*GuildAttachment, error) {
	a, body, err := s.OpenGuildAttachment(ctx, channelID, id)
	if err != nil {
		return nil, err
	}
	if a.Data, err = io.ReadAll(body); err != nil {
		return nil, err
	}
	return a, nil
}

// PutAttachmentChunks implements GuildAttachmentStore.
func (s *DB) PutAttachmentChunks(ctx context.Context, id uint64, body io.Reader) error {
	if s.tx {
		return errors.New("store: PutAttachmentChunks inside a transaction")
	}
	if err := s.insertChunks(ctx, id, body); err != nil {
		return fmt.Errorf("store: put attachment %d: %w", id, err)
	}
	return nil
}

// DeleteAttachmentChunks implements GuildAttachmentStore.
func (s *DB) DeleteAttachmentChunks(ctx context.Context, id uint64) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM guild_attachment_chunks WHERE attachment_id=?`, id); err != nil {
		return fmt.Errorf("store: delete attachment %d's bytes: %w", id, err)
	}
	return nil
}

// SweepAttachmentChunks implements GuildAttachmentStore.
func (s *DB) SweepAttachmentChunks(ctx context.Context, before uint64) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM guild_attachment_chunks WHERE attachment_id < ?
		AND NOT EXISTS (SELECT 1 FROM guild_attachments a WHERE a.id = guild_attachment_chunks.attachment_id)`, before); err != nil {
		return fmt.Errorf("store: sweep attachment bytes: %w", err)
	}
	return nil
}

// insertChunks inserts what body reads as the chunks of attachment id, reusing one buffer.
func (s *DB) insertChunks(ctx context.Context, id uint64, body io.Reader) error {
	buf := make([]byte, AttachmentChunk)
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(body, buf)
		if n > 0 {
			if _, err := s.q.ExecContext(ctx, `INSERT INTO guild_attachment_chunks (attachment_id, seq, data) VALUES (?,?,?)`,
				id, seq, buf[:n]); err != nil {
				return err
			}
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return err
		}
	}
}

// OpenGuildAttachment implements GuildAttachmentStore.
func (s *DB) OpenGuildAttachment(ctx context.Context, channelID, id uint64) (*GuildAttachment, io.ReadSeeker, error) {
	var data []byte
	a, err := scanGuildAttachment(s.q.QueryRowContext(ctx, `SELECT `+guildAttachmentColumns+`, data FROM guild_attachments
		WHERE id=? AND channel_id=?`, id, channelID), &data)
	if err != nil {
		return nil, nil, err
	}
	if len(data) > 0 || a.Size == 0 { // kept whole (before chunks, or given as Data)
		return a, bytes.NewReader(data), nil
	}
	return a, &chunkReader{ctx: ctx, s: s, id: id, size: int64(a.Size)}, nil
}

// chunkReader reads an attachment's chunks, one query per chunk.
type chunkReader struct {
	ctx   context.Context
	s     *DB
	id    uint64
	size  int64
	off   int64
	seq   int64 // of chunk; -1 when none is loaded
	chunk []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	seq := r.off / AttachmentChunk
	if r.chunk == nil || r.seq != seq {
		r.chunk = r.chunk[:0]
		if err := r.s.q.QueryRowContext(r.ctx, `SELECT data FROM guild_attachment_chunks WHERE attachment_id=? AND seq=?`,
			r.id, seq).Scan(&r.chunk); err != nil {
			return 0, fmt.Errorf("store: attachment %d chunk %d: %w", r.id, seq, err)
		}
		r.seq = seq
	}
	at := r.off - seq*AttachmentChunk
	if at >= int64(len(r.chunk)) {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, r.chunk[at:])
	r.off += int64(n)
	return n, nil
}

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("store: seek: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("store: seek before the start")
	}
	r.off = offset
	return offset, nil
}
