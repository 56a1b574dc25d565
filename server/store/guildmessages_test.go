package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A guild message keeps its reference (a reply's, a forward's) and a forward's snapshot (rule
// FWD-1) through insert, get, list and a content update; a plain message has neither.
func TestGuildMessageReferences(t *testing.T) { forEachStore(t, testGuildMessageReferences) }

func testGuildMessageReferences(t *testing.T, s *DB) {
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	plain := GuildMessage{ID: 10, ChannelID: 1, GuildID: 7, AuthorID: 100, Content: "first", Mentions: []uint64{101},
		CreatedAt: at, EditedAt: at.Add(time.Minute)}
	reply := GuildMessage{ID: 11, ChannelID: 1, GuildID: 7, AuthorID: 101, Content: "answer", Mentions: []uint64{},
		CreatedAt: at.Add(2 * time.Minute), Reference: &MessageReference{Type: ReferenceReply, MessageID: 10, ChannelID: 1, GuildID: 7}}
	forward := GuildMessage{ID: 12, ChannelID: 2, GuildID: 7, AuthorID: 102, Mentions: []uint64{}, CreatedAt: at.Add(3 * time.Minute),
		Reference: &MessageReference{Type: ReferenceForward, MessageID: 10, ChannelID: 1, GuildID: 7},
		Snapshot:  &MessageSnapshot{Type: 0, Content: "first", Mentions: []uint64{101}, CreatedAt: at, EditedAt: at.Add(time.Minute)}}
	for _, m := range []*GuildMessage{&plain, &reply, &forward} {
		require.NoError(t, s.InsertGuildMessage(ctx, m))
	}
	for _, want := range []GuildMessage{plain, reply, forward} {
		got, err := s.GetGuildMessage(ctx, want.ChannelID, want.ID)
		require.NoError(t, err)
		assert.Equal(t, want, *got, "message %d", want.ID)
	}
	list, err := s.ListGuildMessages(ctx, 1, MessagePage{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, []GuildMessage{reply, plain}, list)

	// Editing the original does not touch the forward's snapshot.
	plain.Content, plain.EditedAt = "changed", at.Add(time.Hour)
	require.NoError(t, s.UpdateGuildMessage(ctx, &plain))
	got, err := s.GetGuildMessage(ctx, 2, 12)
	require.NoError(t, err)
	assert.Equal(t, "first", got.Snapshot.Content, "FWD-1: the snapshot is taken when forwarded")
}
