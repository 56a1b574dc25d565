package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// maxGroup bounds how many WithTx calls share one SQLite transaction, so that under steady load
// the first of them does not wait for ever more to join.
const maxGroup = 64

// groupCommit shares SQLite transactions between the WithTx calls that run at the same time
// (group commit). SQLite writes one transaction at a time on the store's one writing connection,
// and most of a small transaction's time is its commit (writing the pages it changed to the
// WAL); calls that arrive while a transaction is open join it instead of waiting for their own.
//
// Each call still runs its function in its own goroutine, one at a time, inside a savepoint of
// the shared transaction: a function that fails rolls back its own writes only, and every call
// returns once the transaction that holds its writes is committed (or with the commit's error
// when that fails). Calls that share a transaction see each other's writes as if they had run
// one after the other, which is what they would have done on the one connection. A function
// must not wait for another goroutine's WithTx to return (it may be a member of the same
// group, waiting for this one's commit).
type groupCommit struct {
	s *DB

	mu   sync.Mutex
	open *group // the transaction new calls join; nil when none is open or it is full

	commits atomic.Int64 // transactions committed, for tests
}

// group is one shared transaction.
type group struct {
	turn    sync.Mutex // held by the call whose function runs
	tx      *sql.Tx    // nil until a member begins it, and again when its first member fails
	err     error      // the group's error: a failed BEGIN's, a broken savepoint's, then COMMIT's
	members int        // calls that joined to take the turn and have not run yet
	// queued are the single statements that joined the group while another call held the
	// turn: that call runs them in its turn (combining), so a write of one statement costs no
	// hand-over of the turn from goroutine to goroutine, each of which waits for the scheduler.
	queued  []*queuedWrite
	joined  int
	changed bool          // a member's write changed what the memo may hold
	done    chan struct{} // closed once committed (or rolled back)
}

// queuedWrite is a single statement waiting in a group for the call holding the turn to run it.
type queuedWrite struct {
	ctx context.Context
	fn  func(Store) error
	err error // set once run, before the group's done is closed
}

// run is WithTx on SQLite. single says that fn runs one statement: SQLite undoes a statement
// that fails by itself, leaving the transaction's other writes as they were, so such a member
// needs no savepoint of its own (two statements fewer on the one writer, per write).
func (c *groupCommit) run(ctx context.Context, single bool, fn func(Store) error) (err error) {
	ctx = uncancelled(ctx)
	c.mu.Lock()
	g := c.open
	leader := g == nil
	if leader {
		g = &group{done: make(chan struct{})}
		g.turn.Lock() // until the transaction has begun
		c.open = g
	}
	g.joined++
	if g.joined == maxGroup {
		c.open = nil
	}
	if single && !leader {
		// Another call holds the turn, or waits for it: the holder runs this statement.
		w := &queuedWrite{ctx: ctx, fn: fn}
		g.queued = append(g.queued, w)
		c.mu.Unlock()
		<-g.done
		if w.err != nil {
			return w.err
		}
		return g.err
	}
	g.members++
	c.mu.Unlock()

	if !leader {
		g.turn.Lock()
	}
	err = func() error {
		defer c.finish(ctx, g) // hands the turn on, or commits
		if g.err != nil {
			return g.err
		}
		return c.member(ctx, g, single, fn)
	}()
	if err != nil {
		return err // its writes were rolled back with its savepoint
	}
	<-g.done
	return g.err
}

// runAlone runs fn on the writer outside a transaction when no group is open, each of its
// statements a transaction of its own (SQLite's implicit one), and as run(ctx, false, fn) does
// when one is open (joining it); alone tells fn which. A statement alone costs no BEGIN and no
// COMMIT statement, and no database/sql transaction: a write of one statement that meets no
// group commits as it runs. Alone, a statement that fails is undone by SQLite while those
// before it stay committed.
func (c *groupCommit) runAlone(ctx context.Context, fn func(st Store, alone bool) error) error {
	c.mu.Lock()
	open := c.open != nil
	c.mu.Unlock()
	if open {
		return c.run(ctx, false, func(st Store) error { return fn(st, false) })
	}
	s := c.s
	inner := *s
	changed := false
	// Its statements run as they are, on the writer (not through a group, nor the token writer).
	inner.q = observing{q: rewriting{d: s.d, q: cachedQuerier{c: s.cache}}, o: s.opts}
	inner.tx, inner.txChanged = true, &changed
	err := fn(&inner, true)
	if err == nil {
		c.commits.Add(1)
		s.checkpoints.committed()
	}
	if changed {
		s.memo.changed()
	}
	return err
}

// member runs fn in g's transaction: in a savepoint when an earlier member has written in it,
// else directly (a function that fails then rolls the whole transaction back, and the next
// member begins another), so that a call that shares its transaction with none pays nothing.
// A single statement (single) runs without a savepoint: it is undone alone when it fails.
// A panic in fn rolls its writes back and goes on up its own goroutine.
func (c *groupCommit) member(ctx context.Context, g *group, single bool, fn func(Store) error) (err error) {
	first := g.tx == nil
	if first {
		// Waits while the previous group commits: the writer is one connection.
		if g.tx, err = c.s.db.BeginTx(ctx, nil); err != nil {
			g.tx, g.err = nil, fmt.Errorf("store: begin: %w", err)
			return g.err
		}
	}
	q := c.s.querierOn(g.tx)
	savepoint := !first && !single
	if savepoint {
		if _, err := q.ExecContext(ctx, `SAVEPOINT member`); err != nil {
			g.err = fmt.Errorf("store: savepoint: %w", err)
			return g.err
		}
	}
	inner := *c.s
	changed := false
	inner.q, inner.tx, inner.txChanged = q, true, &changed
	ok := false
	defer func() {
		if changed {
			g.changed = true
		}
		switch {
		case first && !ok:
			g.tx.Rollback()
			g.tx = nil
		case !savepoint:
			// The first member's writes are kept; a single statement that failed undid its own,
			// unless its error is one of those that end the whole transaction (a full disk, an
			// I/O error): then the group fails, as it would have when rolling back to a savepoint.
			if !ok && !statementUndone(err) {
				g.err = fmt.Errorf("store: %w", err)
			}
		case ok:
			if _, err2 := q.ExecContext(ctx, `RELEASE member`); err2 != nil {
				g.err = fmt.Errorf("store: release savepoint: %w", err2)
				err = g.err
			}
		default:
			if _, err2 := q.ExecContext(ctx, `ROLLBACK TO member`); err2 != nil {
				g.err = fmt.Errorf("store: roll back savepoint: %w", err2)
			} else if _, err2 := q.ExecContext(ctx, `RELEASE member`); err2 != nil {
				g.err = fmt.Errorf("store: release savepoint: %w", err2)
			}
		}
	}()
	if err := fn(&inner); err != nil {
		return err
	}
	ok = true
	return nil
}

// statementUndone tells whether SQLite undid the statement that failed with err and left its
// transaction open: a constraint, a type mismatch, a value too big, a wrong query; not an error
// of the disk or memory, after which the transaction may have been rolled back.
func statementUndone(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_ERROR, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_RANGE:
		return true
	}
	return false
}

// finish ends a member's turn: the last member of a group commits it (rolls it back when it is
// broken) and lets the others return; the others hand the turn on.
func (c *groupCommit) finish(ctx context.Context, g *group) {
	c.mu.Lock()
	g.members--
	for yielded := false; ; {
		if q := g.queued; len(q) > 0 {
			g.queued = nil
			c.mu.Unlock()
			c.runQueued(g, q)
			c.mu.Lock()
			continue
		}
		if g.members == 0 && c.open == g && !yielded {
			// The callers the last commit let go are runnable, and about to write again: before
			// committing without them, let them run and join (a commit costs as much as several
			// writes, so a group of one makes the writer the bottleneck).
			c.mu.Unlock()
			runtime.Gosched()
			c.mu.Lock()
			yielded = true
			continue
		}
		break
	}
	last := g.members == 0
	if last && c.open == g {
		c.open = nil
	}
	c.mu.Unlock()
	if !last {
		g.turn.Unlock()
		return
	}
	if g.tx != nil {
		start := time.Now()
		if g.err != nil {
			g.tx.Rollback()
		} else if err := g.tx.Commit(); err != nil {
			g.err = fmt.Errorf("store: commit: %w", err)
		} else {
			c.commits.Add(1)
			c.s.checkpoints.committed()
			if f := c.s.opts.observe.Load(); f != nil {
				(*f)("commit", time.Since(start))
			}
		}
		// Queries first seen in the transaction are prepared once it has ended.
		c.s.cache.prepareWanted(ctx)
	}
	if g.changed {
		c.s.memo.changed()
	}
	close(g.done)
	g.turn.Unlock()
}

// runQueued runs the queued single statements q in g's transaction, in the turn of the call
// that holds it; each gets its own error. Once the group is broken they get its error.
func (c *groupCommit) runQueued(g *group, q []*queuedWrite) {
	for _, w := range q {
		if g.err != nil {
			w.err = g.err
			continue
		}
		func() {
			// A statement that panics fails alone here (member has broken the group, as its
			// panic would have): the call that runs it belongs to another request.
			defer func() {
				if r := recover(); r != nil {
					w.err = fmt.Errorf("store: a write panicked: %v", r)
				}
			}()
			w.err = c.member(w.ctx, g, true, w.fn)
		}()
	}
}

// members returns how many calls the open group has that have not run yet (0 when none is
// open), for tests.
func (c *groupCommit) members() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		return 0
	}
	return c.open.members + len(c.open.queued)
}
