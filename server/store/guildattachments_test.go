package store

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A guild message's attachments (rules ATT-1, ATT-2): inserted with their bytes, listed without
// them in order, kept, updated and removed by SetGuildAttachments, and deleted with the message.
func TestGuildAttachments(t *testing.T) { forEachStore(t, testGuildAttachments) }

func testGuildAttachments(t *testing.T, s *DB) {
	ctx := context.Background()
	m := GuildMessage{ID: 10, ChannelID: 1, GuildID: 7, AuthorID: 100, Mentions: []uint64{}, CreatedAt: time.Unix(1e9, 0)}
	require.NoError(t, s.InsertGuildMessage(ctx, &m))
	a := GuildAttachment{ID: 20, Position: 0, Filename: "a.txt", ContentType: "text/plain; charset=utf-8", Size: 3, Data: []byte("abc")}
	b := GuildAttachment{ID: 21, Position: 1, Filename: "SPOILER_b.png", ContentType: "image/png", Size: 0, Width: 2, Height: 3,
		Flags: 8, Data: []byte{}}
	require.NoError(t, s.WithTx(ctx, func(st Store) error { return st.SetGuildAttachments(ctx, 1, 10, []GuildAttachment{a, b}) }))

	list, err := s.ListGuildAttachments(ctx, 1, 10)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "a.txt", list[0].Filename)
	assert.Nil(t, list[0].Data, "the list leaves the bytes out")
	assert.Equal(t, GuildAttachment{ID: 21, MessageID: 10, ChannelID: 1, Position: 1, Filename: "SPOILER_b.png",
		ContentType: "image/png", Width: 2, Height: 3, Flags: 8}, list[1])

	got, err := s.GetGuildAttachment(ctx, 1, 20)
	require.NoError(t, err)
	assert.Equal(t, []byte("abc"), got.Data)
	_, err = s.GetGuildAttachment(ctx, 2, 20)
	assert.ErrorIs(t, err, ErrNotFound, "another channel's")

	// ATT-1: keep b only, first, with a description and without its spoiler flag.
	require.NoError(t, s.SetGuildAttachments(ctx, 1, 10, []GuildAttachment{{ID: 21, Position: 0, Description: "alt"}}))
	list, err = s.ListGuildAttachments(ctx, 1, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, uint64(21), list[0].ID)
	assert.Equal(t, "alt", list[0].Description)
	assert.Zero(t, list[0].Flags)
	_, err = s.GetGuildAttachment(ctx, 1, 20)
	assert.ErrorIs(t, err, ErrNotFound, "a removed attachment's bytes are gone")

	err = s.SetGuildAttachments(ctx, 1, 10, []GuildAttachment{{ID: 20}})
	assert.ErrorIs(t, err, ErrNotFound, "keeping an attachment the message does not have")

	max, err := s.MaxID(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, max, uint64(21), "attachment ids count for MaxID")
	require.NoError(t, s.DeleteGuildMessage(ctx, 1, 10))
	_, err = s.GetGuildAttachment(ctx, 1, 21)
	assert.ErrorIs(t, err, ErrNotFound, "deleting a message deletes its attachments")
}

// An attachment inserted from a Body is kept in chunks and read back whole, from any offset;
// its chunks go with it.
func TestGuildAttachmentChunks(t *testing.T) { forEachStore(t, testGuildAttachmentChunks) }

func testGuildAttachmentChunks(t *testing.T, s *DB) {
	ctx := context.Background()
	m := GuildMessage{ID: 10, ChannelID: 1, GuildID: 7, AuthorID: 100, Mentions: []uint64{}, CreatedAt: time.Unix(1e9, 0)}
	require.NoError(t, s.InsertGuildMessage(ctx, &m))
	data := make([]byte, 2*AttachmentChunk+123)
	for i := range data {
		data[i] = byte(i * 31)
	}
	a := GuildAttachment{ID: 20, Filename: "big.bin", ContentType: "application/octet-stream", Size: len(data),
		Body: bytes.NewReader(data)}
	exact := GuildAttachment{ID: 21, Position: 1, Filename: "exact.bin", ContentType: "application/octet-stream",
		Size: AttachmentChunk, Body: bytes.NewReader(data[:AttachmentChunk])}
	require.NoError(t, s.WithTx(ctx, func(st Store) error {
		return st.SetGuildAttachments(ctx, 1, 10, []GuildAttachment{a, exact})
	}))
	got, err := s.GetGuildAttachment(ctx, 1, 20)
	require.NoError(t, err)
	assert.Equal(t, data, got.Data)
	got, err = s.GetGuildAttachment(ctx, 1, 21)
	require.NoError(t, err)
	assert.Equal(t, data[:AttachmentChunk], got.Data)

	_, body, err := s.OpenGuildAttachment(ctx, 1, 20)
	require.NoError(t, err)
	for _, off := range []int64{AttachmentChunk - 2, 0, int64(len(data)) - 5, AttachmentChunk*2 + 1} {
		_, err := body.Seek(off, io.SeekStart)
		require.NoError(t, err)
		buf := make([]byte, 7)
		n, err := io.ReadFull(body, buf)
		if off+7 > int64(len(data)) {
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, data[off:off+int64(n)], buf[:n], "at %d", off)
	}

	require.NoError(t, s.DeleteGuildMessage(ctx, 1, 10))
	var left int
	require.NoError(t, s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM guild_attachment_chunks`).Scan(&left))
	assert.Zero(t, left, "the chunks of deleted attachments")
}
