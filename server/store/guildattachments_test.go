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

// gatedReader reads its data, but waits for open to be closed once it has given after bytes.
type gatedReader struct {
	r       io.Reader
	after   int
	given   int
	reached chan struct{} // closed when after bytes were given; never changed after, as the test reads it
	told    bool          // reached is closed
	open    chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.given >= g.after {
		if !g.told {
			close(g.reached)
			g.told = true
		}
		<-g.open
	} else if len(p) > g.after-g.given {
		p = p[:g.after-g.given]
	}
	n, err := g.r.Read(p)
	g.given += n
	return n, err
}

// An upload's bytes are stored ahead of its message, a chunk at a time: other writes go in
// between (on SQLite the one writer is not held for the upload), the message's transaction
// takes them (Stored), and bytes no message took are removed (DeleteAttachmentChunks,
// SweepAttachmentChunks).
func TestAttachmentChunksAhead(t *testing.T) { forEachStore(t, testAttachmentChunksAhead) }

func testAttachmentChunksAhead(t *testing.T, s *DB) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*AttachmentChunk/16+5)
	body := &gatedReader{r: bytes.NewReader(data), after: 2 * AttachmentChunk, reached: make(chan struct{}), open: make(chan struct{})}
	put := make(chan error, 1)
	go func() { put <- s.PutAttachmentChunks(ctx, 30, body) }()
	<-body.reached // two chunks stored, the third being read
	done := make(chan error, 1)
	go func() {
		m := GuildMessage{ID: 11, ChannelID: 1, GuildID: 7, AuthorID: 100, Mentions: []uint64{}, CreatedAt: time.Unix(1e9, 0)}
		done <- s.InsertGuildMessage(ctx, &m)
	}()
	select {
	case err := <-done:
		require.NoError(t, err, "another write, while the upload is stored")
	case <-time.After(30 * time.Second):
		t.Fatal("a write waited for the upload")
	}
	close(body.open)
	require.NoError(t, <-put)

	a := GuildAttachment{ID: 30, Filename: "big.bin", ContentType: "application/octet-stream", Size: len(data), Stored: true}
	require.NoError(t, s.WithTx(ctx, func(st Store) error { return st.SetGuildAttachments(ctx, 1, 11, []GuildAttachment{a}) }))
	got, err := s.GetGuildAttachment(ctx, 1, 30)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got.Data), "read back whole")

	// Bytes no attachment took: removed at once, or by the sweep once older than before.
	chunks := func(id uint64) int {
		var n int
		require.NoError(t, s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM guild_attachment_chunks WHERE attachment_id=?`, id).Scan(&n))
		return n
	}
	require.NoError(t, s.PutAttachmentChunks(ctx, 31, bytes.NewReader([]byte("lost"))))
	require.NoError(t, s.DeleteAttachmentChunks(ctx, 31))
	assert.Zero(t, chunks(31))
	require.NoError(t, s.PutAttachmentChunks(ctx, 32, bytes.NewReader([]byte("orphan"))))
	require.NoError(t, s.PutAttachmentChunks(ctx, 40, bytes.NewReader([]byte("too new"))))
	require.NoError(t, s.SweepAttachmentChunks(ctx, 40))
	assert.Zero(t, chunks(32), "an orphan older than before")
	assert.Equal(t, 1, chunks(40), "not older than before: its message may be on its way")
	assert.Equal(t, 4, chunks(30), "taken by its attachment")

	require.Error(t, s.WithTx(ctx, func(st Store) error {
		return st.PutAttachmentChunks(ctx, 33, bytes.NewReader([]byte("x")))
	}), "not inside a transaction")
}
