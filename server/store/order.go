package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// OrderLock takes the cluster-wide lock of key (a lobby, a service's changes ...), waiting for
// it, and returns the largest id recorded under the key, floor. The caller makes its ids above
// floor, commits its change and publishes its events, then calls unlock with the largest id it
// used (0 for none), which records it and releases the lock. So events published under one key
// leave the nodes in commit order with increasing ids, whichever node made them.
//
// On PostgreSQL the lock is the row of key in order_locks, locked by a transaction of its own
// that unlock commits: a node that dies holding it frees it with its connection. On SQLite
// (one process, whose services already serialize their changes) it locks nothing and floor is 0.
// unlock must be called exactly once.
func (s *DB) OrderLock(ctx context.Context, key string) (floor uint64, unlock func(last uint64), err error) {
	floor, _, release, err := s.OrderLockOutbox(ctx, key)
	if err != nil {
		return 0, nil, err
	}
	return floor, func(last uint64) { release(last, nil) }, nil
}

// OrderLockOutbox is OrderLock that also returns the events the outbox holds under key
// (ListOutbox), read once the lock is held: what its last holder staged and left unpublished.
// Its unlock also deletes the outbox's published events (DeleteOutboxes), in the lock's
// transaction on PostgreSQL: there the lock, its floor and the events take one round trip to
// the database, and unlock one more. An event whose delete fails stays, to be published again.
func (s *DB) OrderLockOutbox(ctx context.Context, key string) (floor uint64, left []OutboxEvent, unlock func(last uint64, published []uint64), err error) {
	if s.d.name != "postgres" {
		left, err = s.ListOutbox(ctx, key)
		if err != nil {
			return 0, nil, nil, err
		}
		return 0, left, func(_ uint64, published []uint64) { _ = s.DeleteOutboxes(context.Background(), published) }, nil
	}
	l, err := s.pgOrderLock(uncancelled(ctx), pgText(key))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("store: order lock %s: %w", key, err)
	}
	return uint64(l.floor), l.left, l.unlock, nil
}

// pgLock is an order lock held on PostgreSQL: its transaction runs on a connection of the pool
// that a goroutine keeps (database/sql lends a driver's connection only for a call's length)
// until unlock.
type pgLock struct {
	floor   int64
	left    []OutboxEvent
	release chan unlocking // unlock's, to the goroutine
	done    chan struct{}  // closed once the transaction has ended
}

// unlocking is what a lock's release records and deletes.
type unlocking struct {
	last      int64
	published []int64
}

// The lock's statements, sent together: the upsert locks the row, new or not, until the
// transaction ends, and the outbox is read after it, once the lock is held.
const (
	pgLockRow = `INSERT INTO order_locks (key, last_id) VALUES ($1, 0)
		ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key RETURNING last_id`
	pgLockOutbox = `SELECT id, key, data, created_at FROM outbox WHERE key = $1 ORDER BY id`
	pgLockRecord = `UPDATE order_locks SET last_id = $2 WHERE key = $1`
	pgLockDelete = `DELETE FROM outbox WHERE id = ANY($1)`
)

// pgOrderLock takes key's lock with one round trip: BEGIN, the lock and the outbox's read are
// sent together (a pipeline).
func (s *DB) pgOrderLock(ctx context.Context, key string) (*pgLock, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	l := &pgLock{release: make(chan unlocking), done: make(chan struct{})}
	taken := make(chan error, 1)
	go func() { // owned by the lock: unlock ends it (unlock is called exactly once)
		defer close(l.done)
		defer conn.Close()
		_ = conn.Raw(func(dc any) error {
			c := dc.(*stdlib.Conn).Conn()
			if err := l.take(ctx, c, key); err != nil {
				taken <- err
				return rollback(ctx, c)
			}
			taken <- nil
			u := <-l.release
			b := &pgx.Batch{}
			if u.last > l.floor {
				b.Queue(pgLockRecord, key, u.last)
			}
			if len(u.published) > 0 {
				b.Queue(pgLockDelete, u.published)
			}
			b.Queue("COMMIT")
			if err := c.SendBatch(ctx, b).Close(); err != nil {
				return rollback(ctx, c)
			}
			return nil
		})
	}()
	if err := <-taken; err != nil {
		<-l.done
		return nil, err
	}
	return l, nil
}

// pgLockFence waits, in a savepoint the lock's transaction then rolls back (which releases the
// row lock it took), for the writes to a lobby's row in flight: a lobby message's commit updates
// its lobby's row, outside the lock's transaction.
const pgLockFence = `SELECT 1 FROM lobbies WHERE id = $1 FOR NO KEY UPDATE`

// take sends BEGIN, the lock and the outbox's read, and reads their answers. The lock of a lobby
// (key "lobby:<id>") first waits for its messages' commits in flight: a holder killed while its
// commit ran frees the lock with its connection at once, while the commit may still be stored,
// after the next holder read the outbox, and its message would be published after the next
// holder's (later relayed, it reaches no SDK, which drops a message older than the last). A
// commit whose statement had not begun when its node died is not waited for.
func (l *pgLock) take(ctx context.Context, c *pgx.Conn, key string) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(pgLockRow, key).QueryRow(func(row pgx.Row) error { return row.Scan(&l.floor) })
	if id, err := strconv.ParseInt(strings.TrimPrefix(key, "lobby:"), 10, 64); err == nil && strings.HasPrefix(key, "lobby:") {
		b.Queue("SAVEPOINT fence")
		b.Queue(pgLockFence, id)
		b.Queue("ROLLBACK TO SAVEPOINT fence")
	}
	b.Queue(pgLockOutbox, key).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var e OutboxEvent
			var id, at int64
			if err := rows.Scan(&id, &e.Key, &e.Data, &at); err != nil {
				return err
			}
			e.ID, e.CreatedAt = uint64(id), fromTS(at)
			l.left = append(l.left, e)
		}
		return rows.Err()
	})
	return c.SendBatch(ctx, b).Close()
}

// unlock records last when it is above the floor, deletes the published events, and ends the
// lock's transaction.
func (l *pgLock) unlock(last uint64, published []uint64) {
	u := unlocking{last: int64(last), published: make([]int64, len(published))}
	for i, id := range published {
		u.published[i] = int64(id)
	}
	l.release <- u
	<-l.done
}

// rollback ends a failed transaction of c; when it cannot, the connection is dropped from the
// pool rather than lent again inside it.
func rollback(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		return errors.Join(err, driver.ErrBadConn)
	}
	return nil
}
