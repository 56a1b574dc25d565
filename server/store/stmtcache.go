package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStatements bounds the statement cache: the store's queries are a fixed set of texts,
// so the bound is only a guard against a query built with a variable text.
const maxCachedStatements = 512

// stmtCache keeps one prepared statement per query text, so that SQLite parses and plans each
// hot query once instead of on every call (parsing was about half the CPU of sending a lobby
// message).
//
// A cache is kept for the writing connection and one for the readers (whose statements
// database/sql prepares on each of their connections as it uses them). The writer is one
// connection, which a transaction holds until it ends: a statement cannot
// be prepared on the database while a transaction runs. A query first seen inside a
// transaction therefore runs unprepared there and is prepared after the transaction ends
// (prepareWanted); inside later transactions Tx.StmtContext reuses the statement already
// prepared on the connection.
type stmtCache struct {
	db *sql.DB

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool // seen inside a transaction, to prepare when it ends
	closed bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// lookup returns the cached statement of query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// want records a query seen inside a transaction without a cached statement.
func (c *stmtCache) want(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && len(c.stmts)+len(c.wanted) < maxCachedStatements {
		c.wanted[query] = true
	}
}

// prepare returns the cached statement of query, preparing it on the database when it is new
// and the cache has room; nil (with no error) means the query runs unprepared. It must not be
// called inside a transaction.
func (c *stmtCache) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	c.mu.Lock()
	full := c.closed || len(c.stmts) >= maxCachedStatements
	c.mu.Unlock()
	if full {
		return nil, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.stmts[query]; old != nil || c.closed { // prepared meanwhile by another caller
		st.Close()
		return old, nil
	}
	c.stmts[query] = st
	return st, nil
}

// prepareWanted prepares the queries first seen inside a transaction; it runs after the
// transaction has released the connection. A query that fails to prepare stays unprepared.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	if len(c.wanted) == 0 {
		c.mu.Unlock()
		return
	}
	queries := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		queries = append(queries, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range queries {
		_, _ = c.prepare(ctx, q)
	}
}

// Close closes every cached statement; later queries run unprepared.
func (c *stmtCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.stmts {
		st.Close()
	}
	clear(c.stmts)
	clear(c.wanted)
}

// uncancelled drops ctx's cancellation. Every statement is short, and the driver watches a
// cancellable context with a goroutine per statement (database/sql one per transaction), which
// cost more than the statements of a lobby message. A context that cannot be cancelled (one
// already passed through here, as the layers of a write pass each statement's) is kept as it
// is, sparing an allocation per layer.
func uncancelled(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// cachedQuerier is a querier (the database, or a transaction when tx is set) that runs each
// query through its cached prepared statement.

type cachedQuerier struct {
	c  *stmtCache
	tx *sql.Tx
}

// stmt returns the statement to run query with, or nil to run it unprepared.
func (q cachedQuerier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if q.tx == nil {
		return q.c.prepare(ctx, query)
	}
	st := q.c.lookup(query)
	if st == nil {
		q.c.want(query)
		return nil, nil
	}
	// The transaction closes this statement when it ends; the cached one stays prepared.
	return q.tx.StmtContext(ctx, st), nil
}

// raw is the database or the transaction itself.
func (q cachedQuerier) raw() querier {
	if q.tx != nil {
		return q.tx
	}
	return q.c.db
}

func (q cachedQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = uncancelled(ctx)
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return q.raw().ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (q cachedQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = uncancelled(ctx)
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return q.raw().QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (q cachedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = uncancelled(ctx)
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		// A failed prepare is reported by running the query unprepared, which fails the same
		// way: *sql.Row carries no error a caller could set.
		return q.raw().QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
