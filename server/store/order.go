package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// OrderHold is a cluster-wide order lock held (OrderLock).
type OrderHold struct {
	// Floor is the largest id recorded under the key (in order_locks, or in an outbox row of the
	// key on PostgreSQL): the holder makes its ids above it.
	Floor uint64
	// Left are the events the outbox holds under the key (ListOutbox), read once the lock was
	// held: what its last holder staged and left unpublished.
	Left []OutboxEvent
	// Store is where the holder commits its changes. On PostgreSQL it runs on the lock's own
	// connection, and each transaction it commits (WithTx, and StoreLobbyMessages' one statement)
	// records in it the largest id made so far (OrderLock's last) as the key's floor: in
	// order_locks, or, for a group of lobby messages with outbox rows, in those rows, whose
	// floor Unlock moves to order_locks as it deletes them. On SQLite it is the store itself.
	Store Store

	unlock func(published []uint64)
}

// Unlock deletes the outbox's published events (DeleteOutboxes) and releases the lock. Call it
// exactly once; Store must not be used after it.
func (h *OrderHold) Unlock(published []uint64) { h.unlock(published) }

// OrderLock takes the cluster-wide lock of key (a lobby, a DM channel, a user's relationships
// ...), waiting for it. The holder makes its ids above the floor, commits its changes on the
// hold's Store (last, when not nil, returns an id above every id made so far: each commit
// records it), publishes their events, and unlocks. So events published under one key leave the
// nodes in commit order with increasing ids, whichever node made them.
//
// On PostgreSQL the lock is a session advisory lock on a connection it keeps, and every commit
// under it runs on that connection, as its own transaction: a node that dies holding the lock
// frees it with its session, which PostgreSQL ends only once the transaction its node last sent
// has committed or failed. So the next holder, whose floor and outbox are read in the round
// trip that takes the lock, sees every commit of the last holder with the floor it recorded.
// Taking the lock, and unlocking, are one round trip each. On SQLite (one process, whose
// services already serialize their changes) it locks nothing, the floor is 0 and the outbox is
// read from the store.
func (s *DB) OrderLock(ctx context.Context, key string, last func() uint64) (*OrderHold, error) {
	return s.OrderLockAll(ctx, []string{key}, last)
}

// OrderLockAll is OrderLock of every key of keys at once (a change ordered for each of several
// things, such as a relationship for each of its two users): the locks are taken in the keys'
// sorted order, which every holder of more than one follows, so two holders never wait for each
// other. The floor is the largest of the keys' floors, each commit records its floor for every
// key, and Left holds what the outbox holds under any of them, in id order. On PostgreSQL all
// the locks are the one session's: they are freed together, once the last commit has landed.
func (s *DB) OrderLockAll(ctx context.Context, keys []string, last func() uint64) (*OrderHold, error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	if len(keys) == 0 {
		return nil, errors.New("store: order lock of no key")
	}
	if s.d.name != "postgres" {
		var left []OutboxEvent
		for _, k := range keys {
			l, err := s.ListOutbox(ctx, k)
			if err != nil {
				return nil, err
			}
			left = append(left, l...)
		}
		slices.SortFunc(left, func(a, b OutboxEvent) int { return cmp.Compare(a.ID, b.ID) })
		return &OrderHold{Left: left, Store: s, unlock: func(published []uint64) {
			_ = s.DeleteOutboxes(context.Background(), published)
		}}, nil
	}
	h, err := s.pgOrderLock(uncancelled(ctx), keys, last)
	if err != nil {
		return nil, fmt.Errorf("store: order lock %s: %w", strings.Join(keys, ", "), err)
	}
	return h, nil
}

// lockID is the key of the advisory lock of key (PostgreSQL's 64-bit key space): a hash of key
// in the order locks' own name space. Two keys with one id would only take turns, but a holder
// of one that waited for a holder of the other would wait for itself; with 64 bits that takes
// about 2^32 keys in use at once.
func lockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("sdkpp.order:"))
	h.Write([]byte(key))
	return int64(h.Sum64())
}

// pgHold is an order lock held on PostgreSQL: its connection, which a DB made for the hold
// (OrderHold.Store) runs every statement on.
type pgHold struct {
	keys []string      // sorted; a lobby's hold has one
	last func() uint64 // nil: the holder makes no ids
	conn *sql.Conn
	// generic: the session plans its statements once while it holds the lock (a lobby's,
	// pgLockGeneric), and is reset before it is given back.
	generic bool
}

// The lock's statements. Taking it, its floor and the outbox are sent together (a pipeline):
// the reads run once the lock is held, each in a snapshot taken then. The floor is recorded by
// the commits (pgRecordFloor, or an outbox row's last_id: pgHold.floor); the release deletes the
// published events in a transaction that commits before the lock is freed, so the next holder
// does not read them, and moves their floors to order_locks in the same statement
// (pgDeleteOutbox), so the key's floor, the largest of order_locks' and its rows', never goes
// back.
const (
	pgLockTake   = `SELECT pg_advisory_lock($1)`
	pgLockFloor  = `SELECT COALESCE((SELECT last_id FROM order_locks WHERE key = $1), 0)`
	pgLockOutbox = `SELECT id, key, data, created_at, last_id FROM outbox WHERE key = $1 ORDER BY id`
	// The outbox read is made with bitmap scans off (queueOutboxes).
	pgNoBitmap    = `SET enable_bitmapscan = off`
	pgBitmapReset = `RESET enable_bitmapscan`
	pgLockFree    = `SELECT pg_advisory_unlock($1)`
	// A lobby's group of messages is one statement, whose plan PostgreSQL, left to choose,
	// makes anew at each run: its generic plan estimates the group's size from a parameter and
	// looks dearer. Planned once, it runs in about half the time; the lobby's lock's session
	// keeps it so while it holds the lock.
	pgLockGeneric = `SET plan_cache_mode = force_generic_plan`
	pgLockReset   = `RESET plan_cache_mode`
	pgRecordFloor = `INSERT INTO order_locks (key, last_id) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET last_id = GREATEST(order_locks.last_id, EXCLUDED.last_id)`
)

// pgOrderLock takes key's lock on a connection of the pool it keeps until the hold's unlock.
// The keys' locks are taken one after the other, in their (sorted) order, each statement once
// the one before it has its lock.
func (s *DB) pgOrderLock(ctx context.Context, keys []string, last func() uint64) (*OrderHold, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	p := &pgHold{keys: keys, last: last, conn: conn, generic: len(keys) == 1 && strings.HasPrefix(keys[0], "lobby:")}
	h := &OrderHold{unlock: p.unlock}
	err = p.pipeline(ctx, false, func(b *pgx.Batch) {
		for _, key := range keys {
			b.Queue(pgLockTake, lockID(key))
		}
		if p.generic {
			b.Queue(pgLockGeneric)
		}
		for _, key := range keys {
			b.Queue(pgLockFloor, key).QueryRow(func(row pgx.Row) error {
				var floor int64
				err := row.Scan(&floor)
				h.Floor = max(h.Floor, uint64(floor))
				return err
			})
		}
		queueOutboxes(b, keys, func(b *pgx.Batch, key string) { p.queueOutbox(b, key, h) })
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	slices.SortFunc(h.Left, func(a, b OutboxEvent) int { return cmp.Compare(a.ID, b.ID) })
	held := *s
	held.q = observing{q: rewriting{d: s.d, q: uncancelledQuerier{conn}}, o: s.opts}
	held.hold = p
	h.Store = &held
	return h, nil
}

// queueOutboxes queues read, the read of the outbox's rows under each of keys, between
// statements that turn bitmap scans off and back on for the session, in the same round trip.
//
// A key's rows are inserted and deleted under its lock, one group after the other, so the
// outbox's index keeps an entry for every row the key had since the table was last vacuumed. A
// plain index scan marks the entries of deleted rows as it passes them, and later scans skip
// them; a bitmap scan, which PostgreSQL prefers for the few rows it expects, does not, so its
// cost grew with a lobby's messages: about 70 µs for no row after 1,500 messages, where an index
// scan takes 10 µs once it has marked them. A statement that fails between the two drops the
// session (pipeline), and with it the setting.
func queueOutboxes(b *pgx.Batch, keys []string, read func(b *pgx.Batch, key string)) {
	b.Queue(pgNoBitmap)
	for _, key := range keys {
		read(b, key)
	}
	b.Queue(pgBitmapReset)
}

// queueOutbox queues the read of what the outbox holds under key into h.Left, raising h.Floor
// to the floors its rows carry.
func (p *pgHold) queueOutbox(b *pgx.Batch, key string, h *OrderHold) {
	b.Queue(pgLockOutbox, key).Query(func(rows pgx.Rows) error {
		for rows.Next() { // after the floors' answers: a row's floor may be above them
			var e OutboxEvent
			var id, at, last int64
			if err := rows.Scan(&id, &e.Key, &e.Data, &at, &last); err != nil {
				return err
			}
			e.ID, e.CreatedAt = uint64(id), fromTS(at)
			h.Left = append(h.Left, e)
			h.Floor = max(h.Floor, uint64(last))
		}
		return rows.Err()
	})
}

// pipeline sends the statements queue queues on the lock's connection in one round trip and
// reads their answers. On an error the session is dropped (the pool does not lend it again),
// and with it the lock should it hold it; with keep, not when the error is one PostgreSQL
// answered (a statement failed, the session is as it was).
func (p *pgHold) pipeline(ctx context.Context, keep bool, queue func(b *pgx.Batch)) error {
	return p.conn.Raw(func(dc any) error {
		b := &pgx.Batch{}
		queue(b)
		err := dc.(*stdlib.Conn).Conn().SendBatch(ctx, b).Close()
		var pgErr *pgconn.PgError
		if err == nil || keep && errors.As(err, &pgErr) && pgErr.Severity != "FATAL" {
			return err
		}
		return errors.Join(err, driver.ErrBadConn)
	})
}

// unlock deletes the published events, then frees the lock, and gives the connection back.
func (p *pgHold) unlock(published []uint64) {
	ids := make([]int64, len(published))
	for i, id := range published {
		ids[i] = int64(id)
	}
	_ = p.pipeline(context.Background(), false, func(b *pgx.Batch) {
		if len(ids) > 0 {
			b.Queue("BEGIN")
			b.Queue(pgDeleteOutbox, ids)
			b.Queue("COMMIT")
		}
		if p.generic {
			b.Queue(pgLockReset)
		}
		for _, key := range p.keys {
			b.Queue(pgLockFree, lockID(key))
		}
	})
	p.conn.Close()
}

// withTx is WithTx on a hold's store s: the transaction runs on the lock's connection, and its
// commit, sent with the floor's record in one round trip, records last().
func (p *pgHold) withTx(ctx context.Context, s *DB, fn func(Store) error) error {
	ctx = uncancelled(ctx)
	if _, err := p.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	inner := *s
	inner.tx, inner.txChanged, inner.hold = true, new(bool), nil
	defer func() {
		if *inner.txChanged {
			s.memo.changed()
		}
	}()
	if err := fn(&inner); err != nil {
		if _, rerr := p.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil {
			// The session is in a transaction it cannot end: the unlock drops it.
			return errors.Join(err, fmt.Errorf("store: rollback: %w", rerr))
		}
		return err
	}
	// A failed statement ends the transaction (COMMIT then rolls it back), not the session.
	err := p.pipeline(ctx, true, func(b *pgx.Batch) {
		if p.last != nil {
			floor := int64(p.last())
			for _, key := range p.keys {
				b.Queue(pgRecordFloor, key, floor)
			}
		}
		b.Queue("COMMIT")
	})
	if err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// floor is the floor a commit on the hold records in the outbox rows it stores (their last_id,
// pgHold's statements): last(), or 0 when the hold makes no ids or there is no hold.
func (p *pgHold) floor() int64 {
	if p == nil || p.last == nil {
		return 0
	}
	return int64(p.last())
}

// recordFloor adds to a statement whose first common table expression t finds the row it
// changes (StoreLobbyMessages on PostgreSQL) the record of a hold's floor, made when t found it:
// another common table expression for each of its keys (f, for a lobby's one key).
func (p *pgHold) recordFloor(q *strings.Builder, args []any) []any {
	if p == nil || p.last == nil {
		return args
	}
	floor := int64(p.last())
	for i, key := range p.keys {
		name := "f"
		if i > 0 {
			name = "f" + strconv.Itoa(i)
		}
		q.WriteString(`, ` + name + ` AS (INSERT INTO order_locks (key, last_id) SELECT ?::TEXT, ?::BIGINT WHERE EXISTS (SELECT 1 FROM t)
		ON CONFLICT (key) DO UPDATE SET last_id = GREATEST(order_locks.last_id, EXCLUDED.last_id))`)
		args = append(args, key, floor)
	}
	return args
}
