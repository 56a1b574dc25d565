package search

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/store"
)

// gatedStore is a real store whose indexing waits until the test lets it go on.
type gatedStore struct {
	*store.DB
	started chan uint64
	release chan struct{}
}

func (g gatedStore) IndexGuildMessages(ctx context.Context, guildID uint64, at time.Time) (int, error) {
	g.started <- guildID
	<-g.release
	return g.DB.IndexGuildMessages(ctx, guildID, at)
}

type indexed struct {
	guild, docs uint64
	err         error
}

func start(t *testing.T) (gatedStore, *Indexer, chan indexed) {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), "")
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	g := gatedStore{DB: st, started: make(chan uint64, 1), release: make(chan struct{})}
	done := make(chan indexed, QueueLength+2)
	ix := New(Options{Store: g, Clock: clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)),
		Logger:  slog.New(slog.DiscardHandler),
		Indexed: func(guildID uint64, documents int, err error) { done <- indexed{guildID, uint64(documents), err} }})
	return g, ix, done
}

// GLD-3: a requested guild is indexed once, however often it is asked for meanwhile; afterwards
// it is indexed.
func TestIndexerIndexesOnce(t *testing.T) {
	g, ix, done := start(t)
	defer ix.Close()
	ctx := context.Background()
	require.NoError(t, g.InsertGuildMessage(ctx, &store.GuildMessage{ID: 5, ChannelID: 2, GuildID: 1, AuthorID: 9, Content: "hello"}))

	require.True(t, ix.Request(1))
	assert.Equal(t, uint64(1), <-g.started)
	assert.True(t, ix.Request(1), "being indexed: the request is the one under way")
	close(g.release)
	assert.Equal(t, indexed{1, 1, nil}, <-done)
	at, err := g.GuildIndexedAt(ctx, 1)
	require.NoError(t, err)
	assert.False(t, at.IsZero())

	require.True(t, ix.Request(1), "asking again builds it again")
	assert.Equal(t, uint64(1), <-g.started)
	assert.Equal(t, indexed{1, 1, nil}, <-done)
}

// A full queue refuses a request, and a closed indexer refuses every request; Close waits for
// the guild under way.
func TestIndexerQueueAndClose(t *testing.T) {
	g, ix, done := start(t)
	require.True(t, ix.Request(1))
	<-g.started // guild 1 is being indexed; the queue is empty
	for id := uint64(2); id < 2+QueueLength; id++ {
		require.True(t, ix.Request(id), "guild %d", id)
	}
	assert.False(t, ix.Request(2+QueueLength), "the queue is full")
	assert.True(t, ix.Request(2), "guild 2 is queued already")

	closed := make(chan struct{})
	go func() { ix.Close(); close(closed) }()
	for ix.Request(3) { // guild 3 is queued until Close has begun: from then on nothing is
		runtime.Gosched()
	}
	g.release <- struct{}{} // guild 1 finishes; the queued ones are left
	<-closed
	assert.Equal(t, indexed{1, 0, nil}, <-done)
	assert.Empty(t, done, "no queued guild was indexed after Close")
	ix.Close() // a second Close returns
}
