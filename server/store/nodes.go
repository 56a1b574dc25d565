package store

import (
	"context"
	"fmt"
	"time"
)

// Node is a node of the service as the node registry keeps it: every node writes its row on
// each heartbeat, so a row whose UpdatedAt is a few heartbeats old is a node that is down.
type Node struct {
	ID        int    // the node id (snowflake node), the row's key
	Address   string // where the node itself listens (not the balancer in front of it)
	StartedAt time.Time
	Sessions  int // gateway sessions on the node, connected or waiting to be resumed
	Calls     int // voice calls on the node
	UpdatedAt time.Time
	// Life names the node's process (a restarted node has a new one; package gateway's
	// Hub.Life).
	Life string
	// DownBy is the node that found this one down and took its sessions over (ClaimDownNode);
	// 0 while none has. A heartbeat sets it back to 0.
	DownBy int
}

// NodeStore keeps the node registry.
type NodeStore interface {
	// PutNode writes the node's row, replacing the row of that id.
	PutNode(ctx context.Context, n *Node) error
	// ListNodes returns every node's row, by id.
	ListNodes(ctx context.Context) ([]Node, error)
	// ClaimDownNode records that node by found the node id down, with the row last written at
	// seen: true for exactly one caller, and false when another node claimed it first or the
	// node wrote its row again since.
	ClaimDownNode(ctx context.Context, id int, seen time.Time, by int) (bool, error)
}

var _ NodeStore = (*DB)(nil)

func (s *DB) PutNode(ctx context.Context, n *Node) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO nodes (id, address, started_at, sessions, calls, updated_at, life, down_by)
		VALUES (?,?,?,?,?,?,?,0) ON CONFLICT (id) DO UPDATE SET address=excluded.address, started_at=excluded.started_at,
		sessions=excluded.sessions, calls=excluded.calls, updated_at=excluded.updated_at, life=excluded.life, down_by=0`,
		n.ID, n.Address, ts(n.StartedAt), n.Sessions, n.Calls, ts(n.UpdatedAt), n.Life)
	return err
}

func (s *DB) ClaimDownNode(ctx context.Context, id int, seen time.Time, by int) (bool, error) {
	r, err := s.q.ExecContext(ctx, `UPDATE nodes SET down_by = ? WHERE id = ? AND updated_at = ? AND down_by = 0`,
		by, id, ts(seen))
	if err != nil {
		return false, fmt.Errorf("store: claim down node %d: %w", id, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: claim down node %d: %w", id, err)
	}
	return n == 1, nil
}

func (s *DB) ListNodes(ctx context.Context) ([]Node, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT id, address, started_at, sessions, calls, updated_at, life, down_by FROM nodes ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*Node, error) {
		var n Node
		var started, updated int64
		if err := row.Scan(&n.ID, &n.Address, &started, &n.Sessions, &n.Calls, &updated, &n.Life, &n.DownBy); err != nil {
			return nil, err
		}
		n.StartedAt, n.UpdatedAt = fromTS(started), fromTS(updated)
		return &n, nil
	})
}
