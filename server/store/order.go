package store

import (
	"context"
	"database/sql"
	"fmt"
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
	if s.d.name != "postgres" {
		return 0, func(uint64) {}, nil
	}
	ctx = uncancelled(ctx)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("store: order lock %s: %w", key, err)
	}
	var last int64
	// The upsert locks the row, new or not, until the transaction ends.
	if err := tx.QueryRowContext(ctx, `INSERT INTO order_locks (key, last_id) VALUES ($1, 0)
		ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key RETURNING last_id`, pgText(key)).Scan(&last); err != nil {
		tx.Rollback()
		return 0, nil, fmt.Errorf("store: order lock %s: %w", key, err)
	}
	return uint64(last), func(used uint64) { s.orderUnlock(tx, key, last, used) }, nil
}

// orderUnlock records used under key when it is above last, and ends the lock's transaction.
func (s *DB) orderUnlock(tx *sql.Tx, key string, last int64, used uint64) {
	if int64(used) > last {
		if _, err := tx.Exec(`UPDATE order_locks SET last_id = $2 WHERE key = $1`, pgText(key), int64(used)); err != nil {
			tx.Rollback()
			return
		}
	}
	_ = tx.Commit()
}
