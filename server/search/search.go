// Package search indexes guilds' messages in the background for Search Guild Messages (rule
// GLD-3): a guild is indexed the first time it is searched, and is answered "index not yet
// available" (110000) until its indexing has finished.
package search

import (
	"context"
	"log/slog"
	"sync"

	"sdkpp/internal/clock"
	"sdkpp/server/store"
)

// QueueLength is how many guilds may wait for indexing; a request beyond it is refused, and the
// search that made it is answered as not indexed yet.
const QueueLength = 256

// Indexer indexes guilds one at a time on a goroutine of its own, which Close stops.
type Indexer struct {
	store  store.GuildSearchStore
	clock  clock.Clock
	logger *slog.Logger
	// Indexed, when set, is told of each guild indexed (tests wait on it).
	indexed func(guildID uint64, documents int, err error)

	ctx    context.Context
	cancel context.CancelFunc
	queue  chan uint64
	done   chan struct{}

	mu      sync.Mutex
	pending map[uint64]bool // queued or being indexed
}

// Options configure an Indexer.
type Options struct {
	Store  store.GuildSearchStore
	Clock  clock.Clock
	Logger *slog.Logger
	// Indexed, when set, is called on the indexer's goroutine after each guild it indexed or
	// failed to.
	Indexed func(guildID uint64, documents int, err error)
}

// New starts an Indexer.
func New(o Options) *Indexer {
	ctx, cancel := context.WithCancel(context.Background())
	ix := &Indexer{store: o.Store, clock: o.Clock, logger: o.Logger, indexed: o.Indexed, ctx: ctx, cancel: cancel,
		queue: make(chan uint64, QueueLength), done: make(chan struct{}), pending: make(map[uint64]bool)}
	go ix.run()
	return ix
}

// Request asks for the guild to be indexed and reports whether it is queued or being indexed
// now: false when the queue is full or the indexer is closed. It never blocks.
func (ix *Indexer) Request(guildID uint64) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ctx.Err() != nil {
		return false
	}
	if ix.pending[guildID] {
		return true
	}
	select {
	case ix.queue <- guildID:
		ix.pending[guildID] = true
		return true
	default:
		return false
	}
}

// Close stops the indexer and waits for its goroutine, which finishes the guild it is indexing
// (one transaction) and leaves the queued ones. Later calls return at once.
func (ix *Indexer) Close() {
	ix.cancel()
	<-ix.done
}

func (ix *Indexer) run() {
	defer close(ix.done)
	for {
		select {
		case <-ix.ctx.Done():
			return
		case id := <-ix.queue:
			if ix.ctx.Err() != nil { // select picks either when both are ready
				return
			}
			n, err := ix.store.IndexGuildMessages(ix.ctx, id, ix.clock.Now())
			if err != nil && ix.ctx.Err() == nil {
				ix.logger.Warn("guild search index not built", "guild_id", id, "err", err)
			}
			ix.mu.Lock()
			delete(ix.pending, id)
			ix.mu.Unlock()
			if ix.indexed != nil {
				ix.indexed(id, n, err)
			}
		}
	}
}
