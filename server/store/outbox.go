package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OutboxEvent is an event stored in the transaction that commits its change, to be published
// on the cluster's bus after the commit (a transactional outbox; package gateway's Hub.Stage):
// should the node die between the commit and the publish, another node publishes it. Key is
// the order lock (OrderLock) the event is published under, so that whoever takes the lock next
// publishes what the last holder left, before its own events.
type OutboxEvent struct {
	ID        uint64 // increasing in commit order of one key (one holder of its lock at a time)
	Key       string
	Data      []byte
	CreatedAt time.Time
}

// OutboxRows are events to store in the outbox with a change (LobbyStore.StoreLobbyMessages):
// each of Data under Key, made at At. IDs is set to their ids, in Data's order, once stored.
//
// With an EpochKey, the change is made only while SharedEpoch(EpochKey) is still Epoch, read in
// the change's statement: else nothing is stored and the error is ErrEpochMoved. A node that
// kept what the change depends on under that epoch so checks it without a read of its own.
type OutboxRows struct {
	Key  string
	Data [][]byte
	At   time.Time
	IDs  []uint64

	EpochKey string
	Epoch    uint64
}

// ErrEpochMoved is the error of a change whose epoch check (OutboxRows.EpochKey) failed.
var ErrEpochMoved = errors.New("store: the shared epoch moved")

// OutboxStore keeps the outbox.
type OutboxStore interface {
	// AddOutbox stores an event under key (call it in the change's transaction) and returns
	// its id.
	AddOutbox(ctx context.Context, key string, data []byte, at time.Time) (uint64, error)
	// ListOutbox returns the events stored under key, oldest first.
	ListOutbox(ctx context.Context, key string) ([]OutboxEvent, error)
	// DeleteOutbox deletes a published event (no error when it is gone already).
	DeleteOutbox(ctx context.Context, id uint64) error
	// DeleteOutboxes deletes published events, with one statement for up to a hundred.
	DeleteOutboxes(ctx context.Context, ids []uint64) error
	// OutboxKeys returns the keys of the events stored before before, which their nodes left.
	OutboxKeys(ctx context.Context, before time.Time) ([]string, error)
}

var _ OutboxStore = (*DB)(nil)

func (s *DB) AddOutbox(ctx context.Context, key string, data []byte, at time.Time) (uint64, error) {
	var id int64
	if err := s.q.QueryRowContext(ctx, `INSERT INTO outbox (key, data, created_at) VALUES (?,?,?) RETURNING id`,
		key, data, ts(at)).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: outbox %s: %w", key, err)
	}
	return uint64(id), nil
}

func (s *DB) ListOutbox(ctx context.Context, key string) ([]OutboxEvent, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT id, key, data, created_at FROM outbox WHERE key = ? ORDER BY id`, key)
	if err != nil {
		return nil, fmt.Errorf("store: outbox %s: %w", key, err)
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*OutboxEvent, error) {
		var e OutboxEvent
		var id, at int64
		if err := row.Scan(&id, &e.Key, &e.Data, &at); err != nil {
			return nil, err
		}
		e.ID, e.CreatedAt = uint64(id), fromTS(at)
		return &e, nil
	})
}

func (s *DB) DeleteOutbox(ctx context.Context, id uint64) error {
	return s.DeleteOutboxes(ctx, []uint64{id})
}

// pgDeleteOutbox deletes outbox rows (their ids, an array: $1) on PostgreSQL and, in the same
// statement, moves the floors they carry (an order lock's, OrderHold.Store) to order_locks, so
// that their keys' floors stay where the next holder reads them.
const pgDeleteOutbox = `WITH d AS (DELETE FROM outbox WHERE id = ANY($1) RETURNING key, last_id)
	INSERT INTO order_locks (key, last_id) SELECT key, MAX(last_id) FROM d WHERE last_id > 0 GROUP BY key
	ON CONFLICT (key) DO UPDATE SET last_id = GREATEST(order_locks.last_id, EXCLUDED.last_id)`

func (s *DB) DeleteOutboxes(ctx context.Context, ids []uint64) error {
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), maxRowsPerInsert)]
		ids = ids[len(chunk):]
		var err error
		if s.d.name == "postgres" {
			ids := make([]int64, len(chunk))
			for i, id := range chunk {
				ids[i] = int64(id)
			}
			_, err = s.q.ExecContext(ctx, pgDeleteOutbox, ids)
		} else {
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = int64(id)
			}
			_, err = s.q.ExecContext(ctx, `DELETE FROM outbox WHERE id IN (?`+strings.Repeat(`,?`, len(chunk)-1)+`)`, args...)
		}
		if err != nil {
			return fmt.Errorf("store: outbox events %d to %d: %w", chunk[0], chunk[len(chunk)-1], err)
		}
	}
	return nil
}

func (s *DB) OutboxKeys(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT DISTINCT key FROM outbox WHERE created_at < ? ORDER BY key`, ts(before))
	if err != nil {
		return nil, fmt.Errorf("store: outbox keys: %w", err)
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*string, error) {
		var k string
		return &k, row.Scan(&k)
	})
}
