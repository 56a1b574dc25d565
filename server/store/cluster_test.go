package store

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
)

// Nodes on one PostgreSQL: two nodes claiming due webhook deliveries at once each get their own,
// every delivery is claimed once, and a claimed delivery is due again when its lease ends
// without an attempt recorded (its node died) — or is done when the attempt is recorded.
func TestClusterClaimsWebhooksOnce(t *testing.T) {
	ctx := context.Background()
	u := postgresDatabase(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease := time.Minute
	a, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 1, ClaimLease: lease})
	require.NoError(t, err)
	defer a.Close()
	b, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 2, ClaimLease: lease})
	require.NoError(t, err)
	defer b.Close()
	const n = 200
	for i := range n {
		require.NoError(t, a.EnqueueWebhook(ctx, &WebhookDelivery{ID: uint64(1000 + i), AppID: 1, EventType: "E",
			Body: []byte("{}"), State: WebhookPending, NextAttemptAt: t0, CreatedAt: t0}))
	}
	var mu sync.Mutex
	seen := map[uint64]int{}
	var wg sync.WaitGroup
	for _, s := range []*DB{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				due, err := s.DueWebhooks(ctx, t0, 7)
				if !assert.NoError(t, err) || len(due) == 0 {
					return
				}
				mu.Lock()
				for _, d := range due {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, n, "every delivery claimed")
	for id, times := range seen {
		require.Equal(t, 1, times, "delivery %d claimed %d times", id, times)
	}
	// Claimed: nothing is due before the lease ends, and the next due time says so.
	next, ok, err := b.NextWebhookDue(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, next.Equal(t0.Add(lease)), "next due %v", next)
	// One attempt recorded; the others' node died: they come back when the lease ends.
	d, err := a.GetWebhook(ctx, 1000)
	require.NoError(t, err)
	d.State, d.Attempts, d.DeliveredAt = WebhookDelivered, 1, t0
	require.NoError(t, a.UpdateWebhook(ctx, d))
	due, err := b.DueWebhooks(ctx, t0.Add(lease-time.Second), n)
	require.NoError(t, err)
	assert.Empty(t, due, "claimed deliveries stay with their node during the lease")
	due, err = b.DueWebhooks(ctx, t0.Add(lease), n)
	require.NoError(t, err)
	assert.Len(t, due, n-1, "after the lease, all but the delivered one are due again")
}

// SQLite, one process, claims nothing: deliveries are due as they were.
func TestSQLiteDueWebhooksIsAQuery(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.EnqueueWebhook(ctx, &WebhookDelivery{ID: 1, AppID: 1, EventType: "E", Body: []byte("{}"),
		State: WebhookPending, NextAttemptAt: t0, CreatedAt: t0}))
	for range 2 {
		due, err := s.DueWebhooks(ctx, t0, 10)
		require.NoError(t, err)
		require.Len(t, due, 1)
	}
}

// Target-users jobs are claimed like deliveries: a job a node has taken is not given to
// another while its lease lasts, and progress renews the lease.
func TestClusterClaimsInviteJobsOnce(t *testing.T) {
	ctx := context.Background()
	u := postgresDatabase(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 1, Now: clock})
	require.NoError(t, err)
	defer a.Close()
	b, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 2, Now: clock})
	require.NoError(t, err)
	defer b.Close()
	job, err := a.StartInviteTargetJob(ctx, "abc", []uint64{1, 2}, now)
	require.NoError(t, err)
	got, err := a.NextInviteTargetJob(ctx)
	require.NoError(t, err)
	assert.Equal(t, job.Seq, got.Seq)
	_, err = b.NextInviteTargetJob(ctx)
	require.ErrorIs(t, err, ErrNotFound, "the job is node a's")
	now = now.Add(DefaultClaimLease - time.Second)
	require.NoError(t, a.ProgressInviteTargetJob(ctx, "abc", job.Seq, 1))
	now = now.Add(DefaultClaimLease - time.Second)
	_, err = b.NextInviteTargetJob(ctx)
	require.ErrorIs(t, err, ErrNotFound, "progress renewed the claim")
	now = now.Add(2 * time.Second)
	got, err = b.NextInviteTargetJob(ctx)
	require.NoError(t, err, "node a stopped renewing: the job goes to b")
	assert.Equal(t, 1, got.Processed)
}

// Two live nodes with one node id on one database: the second is refused; once the first has
// closed, the id is free again.
func TestNodeIDIsHeldOnce(t *testing.T) {
	ctx := context.Background()
	u := postgresDatabase(t)
	a, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 7})
	require.NoError(t, err)
	_, err = OpenPostgres(ctx, u, PostgresOptions{NodeID: 7})
	require.ErrorIs(t, err, ErrNodeIDTaken)
	b, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 8})
	require.NoError(t, err, "another id is free")
	require.NoError(t, b.Close())
	require.NoError(t, a.Close())
	c, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 7})
	require.NoError(t, err, "the id is free once its node has closed")
	require.NoError(t, c.Close())
	_, err = OpenPostgres(ctx, u, PostgresOptions{NodeID: MaxNodeID + 1})
	require.Error(t, err)
}

// terminateNodeSession ends, as an operator or a database restart would, the PostgreSQL
// session that holds node id's lock on the database at u. Advisory locks belong to a database:
// the sessions of other tests' databases on the same server, with the same node id, are left.
func terminateNodeSession(t *testing.T, u string, id int) {
	t.Helper()
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	var ok bool
	// With a timeout, pg_terminate_backend waits until the session is gone, and with it its lock;
	// without one it only signals the session, and the lock may still be held when it returns.
	require.NoError(t, db.QueryRow(`SELECT pg_terminate_backend(pid, 10000) FROM pg_locks WHERE locktype='advisory'
		AND database=(SELECT oid FROM pg_database WHERE datname=current_database())
		AND classid=$1 AND objid=$2 AND objsubid=2 AND granted`, nodeLockSpace, id).Scan(&ok))
	require.True(t, ok)
}

// A node whose lock session is terminated notices at its next check and takes its id again, so
// that a second node with the id is refused as before; when another node took the id in the
// meantime, the check says the node must stop.
func TestNodeIDLockLostIsDetected(t *testing.T) {
	ctx := context.Background()
	u := postgresDatabase(t)
	a, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 5})
	require.NoError(t, err)
	defer a.Close()
	retaken, err := a.CheckNode(ctx)
	require.NoError(t, err)
	assert.False(t, retaken, "held")

	terminateNodeSession(t, u, 5)
	retaken, err = a.CheckNode(ctx)
	require.NoError(t, err)
	assert.True(t, retaken, "lost and taken again")
	_, err = OpenPostgres(ctx, u, PostgresOptions{NodeID: 5})
	require.ErrorIs(t, err, ErrNodeIDTaken, "held again: a second node is refused")

	terminateNodeSession(t, u, 5)
	b, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 5})
	require.NoError(t, err, "the id was free while a did not hold it")
	defer b.Close()
	_, err = a.CheckNode(ctx)
	require.ErrorIs(t, err, ErrNodeIDLost)
}

// WatchNode checks on its clock: a lost lock another node took is logged and reported once.
func TestWatchNodeStopsTheNode(t *testing.T) {
	ctx := context.Background()
	u := postgresDatabase(t)
	a, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 6})
	require.NoError(t, err)
	defer a.Close()
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))
	lost := make(chan error, 2)
	a.WatchNode(clk, 5*time.Second, log, func(err error) { lost <- err })
	require.NoError(t, clk.WaitArmed(ctx, 1))

	terminateNodeSession(t, u, 6)
	b, err := OpenPostgres(ctx, u, PostgresOptions{NodeID: 6})
	require.NoError(t, err)
	defer b.Close()
	clk.Advance(5 * time.Second)
	select {
	case err := <-lost:
		require.ErrorIs(t, err, ErrNodeIDLost)
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not report the lost id")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logs.String(), "node id lock lost: another node holds this node id; stopping this node")
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// The shared epoch moves, as another node sees it, with a committed write that can change a
// cached user or application, and with an order lock released after ids were made under it;
// not with a transaction that rolled back, a lock released without ids, or another key's lock.
func TestClusterSharedEpoch(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	require.NoError(t, a.CreateUser(ctx, &User{ID: 2, Username: "u"}))
	epoch := func() uint64 {
		t.Helper()
		e, err := b.SharedEpoch(ctx, "lobby:1")
		require.NoError(t, err)
		return e
	}
	moved := func(why string, write func() error) {
		t.Helper()
		before := epoch()
		require.NoError(t, write(), why)
		require.NotEqual(t, before, epoch(), "%s did not move the epoch", why)
	}
	still := func(why string, write func() error) {
		t.Helper()
		before := epoch()
		_ = write()
		require.Equal(t, before, epoch(), "%s moved the epoch", why)
	}
	moved("UpdateUser", func() error { return a.UpdateUser(ctx, &User{ID: 2, Username: "v"}) })
	moved("UpdateUser in a transaction", func() error {
		return a.WithTx(ctx, func(tx Store) error { return tx.UpdateUser(ctx, &User{ID: 2, Username: "w"}) })
	})
	still("a rolled-back transaction", func() error {
		return a.WithTx(ctx, func(tx Store) error {
			if err := tx.UpdateUser(ctx, &User{ID: 2, Username: "x"}); err != nil {
				return err
			}
			return io.EOF
		})
	})
	// A commit under an order lock records the largest id made so far: the key's floor.
	commitUnder := func(key string, last func() uint64) func() error {
		return func() error {
			h, err := a.OrderLock(ctx, key, last)
			if err != nil {
				return err
			}
			defer h.Unlock(nil)
			return h.Store.WithTx(ctx, func(tx Store) error {
				_, err := tx.AddOutbox(ctx, key, []byte("e"), time.Unix(1, 0))
				return err
			})
		}
	}
	moved("a commit under the lock that made ids", commitUnder("lobby:1", func() uint64 { return 1 << 40 }))
	still("a commit under the lock that made none", commitUnder("lobby:1", nil))
	still("a lock released without a commit", func() error {
		h, err := a.OrderLock(ctx, "lobby:1", func() uint64 { return 1 << 41 })
		if err == nil {
			h.Unlock(nil)
		}
		return err
	})
	still("a commit under another key's lock", commitUnder("lobby:2", func() uint64 { return 1 << 42 }))
}

// twoNodes opens the stores of nodes 1 and 2 on a fresh PostgreSQL database; the test closes them
// when it ends.
func twoNodes(t *testing.T) (a, b *DB) {
	t.Helper()
	u := postgresDatabase(t)
	a, err := OpenPostgres(context.Background(), u, PostgresOptions{NodeID: 1})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	b, err = OpenPostgres(context.Background(), u, PostgresOptions{NodeID: 2})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return a, b
}
