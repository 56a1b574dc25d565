package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFTSQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"raid", `"raid"`},
		{"The raid, at NINE!", `"The" "raid" "at" "NINE"`},
		{`raid" OR "x`, `"raid" "OR" "x"`}, // the query syntax is taken literally
		{"NEAR(a b) * ^c", `"NEAR" "a" "b" "c"`},
		{"héllo wörld_2", `"héllo" "wörld_2"`},
		{"?!", ""},
		{"", ""},
	} {
		assert.Equal(t, tc.want, FTSQuery(tc.in), "%q", tc.in)
	}
}

// GLD-3: a guild is searchable once indexed, and the index follows its messages after that; the
// filters and orders select as documented.
func TestSearchGuildMessages(t *testing.T) { forEachStore(t, testSearchGuildMessages) }

func testSearchGuildMessages(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateUser(ctx, &User{ID: 7, Username: "alice", CreatedAt: t0}))
	require.NoError(t, s.CreateUser(ctx, &User{ID: 8, Username: "robot", Bot: true, CreatedAt: t0}))
	add := func(id, channel, guild, author uint64, content string, mentions ...uint64) {
		t.Helper()
		require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: id, ChannelID: channel, GuildID: guild, AuthorID: author,
			Content: content, Mentions: mentions, CreatedAt: t0}))
	}
	add(101, 10, 1, 7, "the raid starts at nine")
	add(102, 10, 1, 8, "raid raid raid: bring potions https://wiki.example/raid", 7)
	add(103, 11, 1, 7, "nothing to see")
	add(104, 20, 2, 7, "raid in the other guild")

	at, err := s.GuildIndexedAt(ctx, 1)
	require.NoError(t, err)
	assert.True(t, at.IsZero(), "not indexed yet")
	n, err := s.IndexGuildMessages(ctx, 1, t0)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	at, err = s.GuildIndexedAt(ctx, 1)
	require.NoError(t, err)
	assert.True(t, at.Equal(t0))
	add(105, 11, 1, 7, "late raid news") // the trigger indexes it
	require.NoError(t, s.UpdateGuildMessage(ctx, &GuildMessage{ID: 103, ChannelID: 11, Content: "raid moved", EditedAt: t0}))

	search := func(q GuildSearch) (int, []uint64) {
		t.Helper()
		q.GuildID = 1
		if q.ChannelIDs == nil {
			q.ChannelIDs = []uint64{10, 11}
		}
		if q.Limit == 0 {
			q.Limit = 25
		}
		total, page, err := s.SearchGuildMessages(ctx, q)
		require.NoError(t, err)
		var ids []uint64
		for _, m := range page {
			ids = append(ids, m.ID)
		}
		return total, ids
	}
	yes, no := true, false
	for _, tc := range []struct {
		name  string
		q     GuildSearch
		total int
		ids   []uint64
	}{
		{"everything, newest first", GuildSearch{}, 4, []uint64{105, 103, 102, 101}},
		{"words, by id", GuildSearch{Query: FTSQuery("raid")}, 4, []uint64{105, 103, 102, 101}},
		{"words, by relevance", GuildSearch{Query: FTSQuery("raid"), ByRelevance: true}, 4, []uint64{102, 103, 105, 101}},
		{"every word must be there", GuildSearch{Query: FTSQuery("raid nine")}, 1, []uint64{101}},
		{"edited content is searched", GuildSearch{Query: FTSQuery("moved")}, 1, []uint64{103}},
		{"old content is gone", GuildSearch{Query: FTSQuery("nothing")}, 0, nil},
		{"one channel", GuildSearch{ChannelIDs: []uint64{11}}, 2, []uint64{105, 103}},
		{"no channel", GuildSearch{ChannelIDs: []uint64{}}, 0, nil},
		{"author", GuildSearch{AuthorIDs: []uint64{8}}, 1, []uint64{102}},
		{"mentions", GuildSearch{Mentions: []uint64{7}}, 1, []uint64{102}},
		{"bots", GuildSearch{AuthorBot: &yes}, 1, []uint64{102}},
		{"users", GuildSearch{AuthorBot: &no}, 3, []uint64{105, 103, 101}},
		{"links", GuildSearch{HasLink: &yes}, 1, []uint64{102}},
		{"no links", GuildSearch{HasLink: &no}, 3, []uint64{105, 103, 101}},
		{"not pinned", GuildSearch{Pinned: &no}, 4, []uint64{105, 103, 102, 101}},
		{"id bounds", GuildSearch{MinID: 101, MaxID: 105}, 2, []uint64{103, 102}},
		{"oldest first, paged", GuildSearch{Ascending: true, Limit: 2, Offset: 1}, 4, []uint64{102, 103}},
		{"past the end", GuildSearch{Offset: 10}, 4, nil},
		{"another guild's channel", GuildSearch{ChannelIDs: []uint64{20}}, 0, nil},
	} {
		total, ids := search(tc.q)
		assert.Equal(t, tc.total, total, tc.name)
		assert.Equal(t, tc.ids, ids, tc.name)
	}
	_, err = s.PinGuildMessage(ctx, 10, 101, t0)
	require.NoError(t, err)
	total, ids := search(GuildSearch{Pinned: &yes})
	assert.Equal(t, 1, total)
	assert.Equal(t, []uint64{101}, ids, "pinned")
	require.NoError(t, s.DeleteGuildMessage(ctx, 10, 102))
	_, ids = search(GuildSearch{Query: FTSQuery("potions")})
	assert.Empty(t, ids, "a deleted message leaves the index")

	// A forward carries a snapshot; a reply does not.
	require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: 110, ChannelID: 10, GuildID: 1, AuthorID: 7, CreatedAt: t0,
		Reference: &MessageReference{Type: ReferenceForward, MessageID: 101, ChannelID: 10, GuildID: 1},
		Snapshot:  &MessageSnapshot{Content: "the raid starts at nine", CreatedAt: t0}}))
	require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: 111, ChannelID: 10, GuildID: 1, AuthorID: 7, CreatedAt: t0,
		Content: "ok", Reference: &MessageReference{Type: ReferenceReply, MessageID: 101, ChannelID: 10, GuildID: 1}}))
	total, ids = search(GuildSearch{HasSnapshot: &yes})
	assert.Equal(t, 1, total)
	assert.Equal(t, []uint64{110}, ids, "forwards")
	_, ids = search(GuildSearch{HasSnapshot: &no, ChannelIDs: []uint64{10}})
	assert.Equal(t, []uint64{111, 101}, ids, "not forwards")

	// Guild 2 was never indexed: its later messages are not in the index either, until it is.
	add(106, 20, 2, 7, "raid again")
	n, err = s.IndexGuildMessages(ctx, 2, t0)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	total, _, err = s.SearchGuildMessages(ctx, GuildSearch{GuildID: 2, ChannelIDs: []uint64{20}, Query: FTSQuery("raid"), Limit: 25})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
}

// Whatever text a search gives, FTSQuery makes a query the index accepts: no user input reaches
// the FTS5 query syntax.
func FuzzFTSQuery(f *testing.F) {
	for _, seed := range []string{"raid", `a" OR "b`, "NEAR(a b)", "x*", "^start", "a:b", "-neg", "(", `"`, "\x00", "ﬁ ß İ", "\xff"} {
		f.Add(seed)
	}
	s, err := OpenSQLite(context.Background(), "")
	require.NoError(f, err)
	defer s.Close()
	ctx := context.Background()
	require.NoError(f, s.InsertGuildMessage(ctx, &GuildMessage{ID: 1, ChannelID: 2, GuildID: 3, AuthorID: 4, Content: "raid at nine"}))
	_, err = s.IndexGuildMessages(ctx, 3, time.Time{})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		q := FTSQuery(text)
		if q == "" {
			return
		}
		_, _, err := s.SearchGuildMessages(ctx, GuildSearch{GuildID: 3, ChannelIDs: []uint64{2}, Query: q, Limit: 1})
		require.NoError(t, err, "text %q: query %q", text, q)
	})
}
