package store

import (
	"context"
	"strings"
	"sync"
)

// maxTokenBatch bounds how many tokens one INSERT of a tokenBatch writes.
const maxTokenBatch = 64

// tokenBatch joins the tokens that callers insert at once outside transactions on PostgreSQL
// into one INSERT of several rows (the token endpoint's one write per request): one round trip
// and one commit for all of them, instead of one each. The first caller writes the tokens that
// are waiting, its own first; the callers who came meanwhile wait, and the first of them writes
// the next batch. When a batch fails (a token's id was taken), each of its tokens is inserted
// alone, so that each caller gets its own token's error.
type tokenBatch struct {
	mu      sync.Mutex
	pending []*batchedToken
	running bool // a caller is writing a batch
}

// batchedToken is a token waiting in a tokenBatch.
type batchedToken struct {
	t   *Token
	err error
	// wake says true once the token is written (err set), false when its caller is to write
	// the next batch.
	wake chan bool
}

// insert inserts t through the batch.
func (b *tokenBatch) insert(ctx context.Context, s *DB, t *Token) error {
	me := &batchedToken{t: t, wake: make(chan bool, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, me)
	if b.running {
		b.mu.Unlock()
		if <-me.wake {
			return me.err
		}
		b.mu.Lock() // this caller writes the next batch, which it heads
	}
	b.running = true
	n := min(len(b.pending), maxTokenBatch)
	batch := b.pending[:n:n]
	b.pending = b.pending[n:]
	b.mu.Unlock()

	s.insertTokens(context.WithoutCancel(ctx), batch)
	for _, w := range batch[1:] {
		w.wake <- true
	}
	b.mu.Lock()
	if len(b.pending) > 0 {
		next := b.pending[0]
		b.mu.Unlock()
		next.wake <- false
	} else {
		b.running = false
		b.mu.Unlock()
	}
	return me.err
}

// insertTokens writes batch in one statement, or each alone when that fails.
func (s *DB) insertTokens(ctx context.Context, batch []*batchedToken) {
	var q strings.Builder
	q.WriteString(`INSERT INTO tokens (` + tokenColumns + `) VALUES `)
	args := make([]any, 0, 12*len(batch))
	for i, w := range batch {
		if i > 0 {
			q.WriteString(",")
		}
		q.WriteString(tokenPlaceholders)
		args = append(args, tokenArgs(w.t)...)
	}
	if _, err := s.q.ExecContext(ctx, q.String(), args...); err == nil || len(batch) == 1 {
		for _, w := range batch {
			w.err = err
		}
		return
	}
	for _, w := range batch {
		w.err = s.insertToken(ctx, w.t)
	}
}
