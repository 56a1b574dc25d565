package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two nodes taking turns under one order lock: never both inside at once, and each finds the
// largest id the other's commits recorded; other keys are not held up.
func TestClusterOrderLock(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	var mu sync.Mutex
	inside, next := 0, uint64(0)
	var wg sync.WaitGroup
	for _, s := range []*DB{a, b, a, b} {
		wg.Go(func() {
			for range 25 {
				h, err := s.OrderLock(ctx, "lobby:1", func() uint64 {
					mu.Lock()
					defer mu.Unlock()
					return next
				})
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				inside++
				assert.Equal(t, 1, inside, "two holders at once")
				assert.Equal(t, next, h.Floor, "the floor is the last id recorded")
				next++
				mu.Unlock()
				assert.NoError(t, h.Store.WithTx(ctx, func(Store) error { return nil }), "a commit records the floor")
				mu.Lock()
				inside--
				mu.Unlock()
				h.Unlock(nil)
			}
		})
	}
	wg.Wait()
	h, err := a.OrderLock(ctx, "lobby:1", nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(100), h.Floor)
	// Another key is free while this one is held; a commit without ids keeps the recorded one.
	other, err := b.OrderLock(ctx, "lobby:2", nil)
	require.NoError(t, err)
	assert.Zero(t, other.Floor)
	other.Unlock(nil)
	require.NoError(t, h.Store.WithTx(ctx, func(Store) error { return nil }))
	h.Unlock(nil)
	h, err = b.OrderLock(ctx, "lobby:1", nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(100), h.Floor)
	h.Unlock(nil)
}

// OrderLock returns, with the lock, what the outbox holds under its key, read once the lock is
// held: a row the last holder committed while the next one waited is there; and the release
// deletes what was published.
func TestClusterOrderLockOutbox(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	h, err := a.OrderLock(ctx, "lobby:1", func() uint64 { return 7 })
	require.NoError(t, err)
	assert.Empty(t, h.Left)
	_, err = a.AddOutbox(ctx, "lobby:2", []byte("other"), time.Unix(1, 0))
	require.NoError(t, err)
	next := make(chan *OrderHold, 1)
	go func() { // waits for a's lock; the test waits for it below
		x, err := b.OrderLock(ctx, "lobby:1", nil)
		assert.NoError(t, err)
		next <- x
	}()
	waited := assert.Eventually(t, func() bool { return lockWaiters(t, a) > 0 }, 10*time.Second, 5*time.Millisecond)
	var id uint64
	err = h.Store.WithTx(ctx, func(tx Store) error {
		var err error
		id, err = tx.AddOutbox(ctx, "lobby:1", []byte("left"), time.Unix(2, 0))
		return err
	})
	h.Unlock(nil) // whatever happened: b takes the lock, and the test ends
	x := <-next
	require.NoError(t, err)
	require.True(t, waited, "b never waited for the lock")
	require.NotNil(t, x)
	assert.Equal(t, uint64(7), x.Floor)
	assert.Equal(t, []OutboxEvent{{ID: id, Key: "lobby:1", Data: []byte("left"), CreatedAt: time.Unix(2, 0).UTC()}}, x.Left)
	x.Unlock([]uint64{id}) // published: the release deletes it
	h, err = b.OrderLock(ctx, "lobby:1", nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), h.Floor)
	assert.Empty(t, h.Left)
	h.Unlock(nil)
	h, err = b.OrderLock(ctx, "lobby:2", nil)
	require.NoError(t, err)
	assert.Len(t, h.Left, 1, "another key's event")
	h.Unlock(nil)
}

// OrderLockAll holds several keys at once (a relationship's two users): a holder of any one of
// them waits, another key is free; each commit records the floor under every key, and the next
// holder of both finds what the outbox holds under either, in id order. Holders of overlapping
// keys, each taking them in any order, never wait for each other.
func TestClusterOrderLockAll(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	h, err := a.OrderLockAll(ctx, []string{"rel:2", "rel:1", "rel:2"}, func() uint64 { return 9 })
	require.NoError(t, err)
	other, err := b.OrderLock(ctx, "rel:3", nil)
	require.NoError(t, err, "another key is free")
	other.Unlock(nil)
	next := make(chan *OrderHold, 1)
	go func() { // waits for a's lock of rel:2; the test waits for it below
		x, err := b.OrderLock(ctx, "rel:2", nil)
		assert.NoError(t, err)
		next <- x
	}()
	waited := assert.Eventually(t, func() bool { return lockWaiters(t, a) > 0 }, 10*time.Second, 5*time.Millisecond)
	var ids []uint64
	err = h.Store.WithTx(ctx, func(tx Store) error {
		for _, k := range []string{"rel:2", "rel:1"} {
			id, err := tx.AddOutbox(ctx, k, []byte(k), time.Unix(2, 0))
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	h.Unlock(nil) // whatever happened: b takes the lock, and the test ends
	x := <-next
	require.NoError(t, err)
	require.True(t, waited, "b never waited for the lock")
	assert.Equal(t, uint64(9), x.Floor, "the commit recorded the floor under each key")
	assert.Equal(t, []OutboxEvent{{ID: ids[0], Key: "rel:2", Data: []byte("rel:2"), CreatedAt: time.Unix(2, 0).UTC()}}, x.Left)
	x.Unlock(nil)
	h, err = b.OrderLockAll(ctx, []string{"rel:1", "rel:2"}, nil)
	require.NoError(t, err)
	assert.Equal(t, ids, []uint64{h.Left[0].ID, h.Left[1].ID}, "both keys' events, in id order")
	h.Unlock(ids)

	// Crossing holders of overlapping keys, named in either order.
	var wg sync.WaitGroup
	for i, s := range []*DB{a, b, a, b} {
		keys := []string{"rel:1", "rel:2"}
		if i%2 == 1 {
			keys = []string{"rel:2", "rel:1"}
		}
		wg.Go(func() {
			for range 20 {
				h, err := s.OrderLockAll(ctx, keys, nil)
				if !assert.NoError(t, err) {
					return
				}
				h.Unlock(nil)
			}
		})
	}
	wg.Wait()
}

// A holder whose node dies after its commit, before it unlocks: the next holder finds the
// commit's outbox rows and the floor the commit recorded, whether it was a group of lobby
// messages (one statement, whose rows carry the floor) or a transaction; and the holder after
// it, once those rows are published and deleted, still finds the floor.
func TestClusterOrderLockHoldersCommitOutlivesIt(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	now := time.Unix(1, 0).UTC()
	require.NoError(t, a.CreateLobby(ctx, &Lobby{ID: 5, AppID: 1, IdleTimeout: time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(time.Minute), CreatedAt: now}))
	for _, c := range []struct {
		name, key string
		commit    func(st Store) ([]uint64, error)
	}{
		{"lobby messages", "lobby:5", func(st Store) ([]uint64, error) {
			out := &OutboxRows{Key: "lobby:5", Data: [][]byte{[]byte("m1"), []byte("m2")}, At: now}
			err := st.StoreLobbyMessages(ctx, 5, []*LobbyMessage{
				{ID: 1 << 39, LobbyID: 5, AppID: 1, AuthorID: 2, Content: "m1", CreatedAt: now},
				{ID: 1<<39 + 1, LobbyID: 5, AppID: 1, AuthorID: 2, Content: "m2", CreatedAt: now},
			}, nil, out)
			return out.IDs, err
		}},
		{"a transaction", "dms", func(st Store) ([]uint64, error) {
			var ids []uint64
			err := st.WithTx(ctx, func(tx Store) error {
				for _, d := range []string{"d1", "d2"} {
					id, err := tx.AddOutbox(ctx, "dms", []byte(d), now)
					if err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return nil
			})
			return ids, err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const last = 1 << 40
			h, err := a.OrderLock(ctx, c.key, func() uint64 { return last })
			require.NoError(t, err)
			ids, err := c.commit(h.Store)
			require.NoError(t, err)
			require.Len(t, ids, 2)
			killSession(t, h) // its node dies: no unlock
			x, err := b.OrderLock(ctx, c.key, nil)
			require.NoError(t, err)
			assert.Equal(t, uint64(last), x.Floor, "the floor the commit recorded")
			require.Len(t, x.Left, 2)
			assert.Equal(t, ids, []uint64{x.Left[0].ID, x.Left[1].ID})
			h.Unlock(nil) // on a dead session: nothing, and x keeps the lock
			other := make(chan *OrderHold, 1)
			go func() { // waits for x's unlock
				o, err := a.OrderLock(ctx, c.key, nil)
				assert.NoError(t, err)
				other <- o
			}()
			require.Eventually(t, func() bool { return lockWaiters(t, a) > 0 }, 10*time.Second, 5*time.Millisecond)
			x.Unlock(ids)
			o := <-other
			require.NotNil(t, o)
			assert.Empty(t, o.Left, "published and deleted")
			assert.Equal(t, uint64(last), o.Floor, "the floor outlives the rows that carried it")
			o.Unlock(nil)
		})
	}
}

// A holder killed while the commit it sent had not yet begun its writes (its session busy with
// a statement before them, waiting for a lock): the lock is free only once the session has
// ended, after that commit, so the next holder waits for it and reads its rows and its floor.
func TestClusterOrderLockWaitsForTheDeadHoldersLastCommit(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	h, err := a.OrderLock(ctx, "lobby:7", nil)
	require.NoError(t, err)
	// Another session holds the lock the holder's commit first waits for.
	blocker, err := b.db.Conn(ctx)
	require.NoError(t, err)
	defer blocker.Close()
	_, err = blocker.ExecContext(ctx, `SELECT pg_advisory_lock(42, 42)`)
	require.NoError(t, err)
	// One implicit transaction: it waits, then writes and commits; its answer is never read.
	sendAndDie(t, h, `SELECT pg_advisory_xact_lock(42, 42);
		INSERT INTO outbox (key, data, created_at) VALUES ('lobby:7', 'last', 3);
		INSERT INTO order_locks (key, last_id) VALUES ('lobby:7', 99)`)
	next := make(chan *OrderHold, 1)
	go func() { // waits for the dead holder's session to end; the test waits for it below
		x, err := b.OrderLock(ctx, "lobby:7", nil)
		assert.NoError(t, err)
		next <- x
	}()
	waited := assert.Eventually(t, func() bool { return lockWaiters(t, a) >= 2 }, 10*time.Second, 5*time.Millisecond,
		"the commit and the next holder wait")
	_, err = blocker.ExecContext(ctx, `SELECT pg_advisory_unlock(42, 42)`)
	require.NoError(t, err)
	x := <-next
	require.True(t, waited)
	require.NotNil(t, x)
	assert.Equal(t, uint64(99), x.Floor, "the floor of the commit sent before the holder died")
	require.Len(t, x.Left, 1, "the commit sent before the holder died")
	assert.Equal(t, []byte("last"), x.Left[0].Data)
	x.Unlock(nil)
	h.Unlock(nil)
}

// A holder whose session ends while its node lives (the database restarted, an operator ended it)
// has lost the lock, which another node may take: its commits fail instead of landing on
// another connection beside the new holder's.
func TestClusterOrderLockLostFailsItsCommits(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	h, err := a.OrderLock(ctx, "lobby:8", func() uint64 { return 5 })
	require.NoError(t, err)
	var ok bool
	require.NoError(t, b.db.QueryRowContext(ctx, `SELECT pg_terminate_backend(pid, 10000) FROM pg_locks
		WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 1 AND granted`,
		uint32(uint64(lockID("lobby:8"))>>32), uint32(lockID("lobby:8"))).Scan(&ok))
	require.True(t, ok)
	x, err := b.OrderLock(ctx, "lobby:8", nil)
	require.NoError(t, err, "the lock is free")
	defer x.Unlock(nil)
	err = h.Store.WithTx(ctx, func(tx Store) error {
		_, err := tx.AddOutbox(ctx, "lobby:8", []byte("late"), time.Unix(1, 0))
		return err
	})
	require.Error(t, err)
	h.Unlock(nil)
	n, err := b.ListOutbox(ctx, "lobby:8")
	require.NoError(t, err)
	assert.Empty(t, n, "nothing stored by the holder that lost the lock")
}

// A lobby's lock has its session plan statements once (its group's statement is planned anew at
// each run otherwise), and resets the session before it goes back to the pool; other locks leave
// the session as it is.
func TestClusterLobbyLockPlansOnce(t *testing.T) {
	ctx := context.Background()
	a, _ := twoNodes(t)
	a.db.SetMaxOpenConns(2) // the node id's session and one more: every hold has the same
	mode := func(h *OrderHold) string {
		t.Helper()
		var m string
		require.NoError(t, h.Store.(*DB).q.QueryRowContext(ctx, `SHOW plan_cache_mode`).Scan(&m))
		return m
	}
	h, err := a.OrderLock(ctx, "lobby:1", nil)
	require.NoError(t, err)
	assert.Equal(t, "force_generic_plan", mode(h))
	h.Unlock(nil)
	h, err = a.OrderLock(ctx, "dms", nil)
	require.NoError(t, err)
	assert.Equal(t, "auto", mode(h), "reset with the lobby's lock")
	h.Unlock(nil)
}

// On SQLite the order lock holds nothing, and its store is the store.
func TestSQLiteOrderLockIsFree(t *testing.T) {
	s := openMemory(t)
	h, err := s.OrderLock(context.Background(), "k", func() uint64 { return 5 })
	require.NoError(t, err)
	assert.Zero(t, h.Floor)
	assert.Same(t, s, h.Store)
	h.Unlock(nil)
	h, err = s.OrderLock(context.Background(), "k", nil)
	require.NoError(t, err)
	assert.Zero(t, h.Floor)
	h.Unlock(nil)
}

// lockWaiters counts the sessions of s's database waiting for a lock.
func lockWaiters(t *testing.T, s *DB) int {
	t.Helper()
	var n int
	err := s.db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
	require.NoError(t, err)
	return n
}

// killSession closes the socket of h's session as the kill of its node's process would: without
// the driver's goodbye, and without unlocking.
func killSession(t *testing.T, h *OrderHold) {
	t.Helper()
	sendAndDie(t, h, "")
}

// sendAndDie sends query (when not empty) on h's session and closes its socket at once, as a
// node killed right after sending it would: its answer is never read.
func sendAndDie(t *testing.T, h *OrderHold, query string) {
	t.Helper()
	conn := h.Store.(*DB).hold.conn
	require.NoError(t, conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn().PgConn()
		if query != "" {
			pc.Exec(context.Background(), query) // sent and flushed; its answer is left unread
		}
		return pc.Conn().Close()
	}))
}

// Only a lobby's lock sets the generic plan (TestClusterLobbyLockPlansOnce): the statements its
// group runs look dearer planned generic, so PostgreSQL left to choose plans them anew at each
// run. The statements a DM channel's and a user's relationships' holders run are not so: after
// the first five runs of each, PostgreSQL (plan_cache_mode auto) keeps its generic plan.
func TestClusterDMAndRelationshipStatementsPlanOnce(t *testing.T) {
	ctx := context.Background()
	a, _ := twoNodes(t)
	a.db.SetMaxOpenConns(2) // the node id's session and one more: every hold has the same
	now := time.Unix(1000, 0)
	ch, err := a.PutDMChannel(ctx, &DMChannel{ID: 10, UserLow: 1, UserHigh: 2, CreatedAt: now})
	require.NoError(t, err)
	var h *OrderHold
	for i := range 12 {
		id := uint64(100 + i)
		h, err = a.OrderLockAll(ctx, []string{"dm:10"}, func() uint64 { return id })
		require.NoError(t, err)
		require.NoError(t, h.Store.WithTx(ctx, func(st Store) error {
			return errors.Join(
				func() error { _, err := st.GetDMChannel(ctx, ch.ID); return err }(),
				st.InsertDirectMessage(ctx, &DirectMessage{ID: id, ChannelID: ch.ID, AppID: 5, AuthorID: 1, RecipientID: 2,
					Content: "hi", CreatedAt: now}),
				func() error { _, err := st.GetDirectMessage(ctx, ch.ID, id); return err }(),
				func() error { _, err := st.ListDirectMessages(ctx, ch.ID, now.Add(-time.Hour), 50); return err }(),
				func() error { _, err := st.AddOutbox(ctx, "dm:10", []byte("e"), now); return err }(),
			)
		}))
		if i < 11 {
			h.Unlock(nil)
		}
	}
	h.Unlock(nil)
	for i := range 12 {
		h, err = a.OrderLockAll(ctx, []string{"rel:1", "rel:2"}, nil)
		require.NoError(t, err)
		require.NoError(t, h.Store.WithTx(ctx, func(st Store) error {
			_, err1 := st.GetRelationship(ctx, 1, 2, 5)
			_, err2 := st.ListRelated(ctx, 2)
			_, err3 := st.CountOutgoingSince(ctx, 1, now)
			err4 := st.PutRelationship(ctx, &Relationship{UserID: 1, PeerID: 2, AppID: 5, Type: RelFriend, CreatedAt: now.Add(time.Duration(i))})
			if errors.Is(err1, ErrNotFound) {
				err1 = nil
			}
			return errors.Join(err1, err2, err3, err4)
		}))
		if i < 11 {
			h.Unlock(nil)
		}
	}
	rows, err := h.Store.(*DB).q.QueryContext(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE generic_plans + custom_plans >= 12`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var stmt string
		var generic, custom int
		require.NoError(t, rows.Scan(&stmt, &generic, &custom))
		n++
		assert.LessOrEqual(t, custom, 5, "planned anew at each run: %s", stmt)
	}
	require.NoError(t, rows.Err())
	h.Unlock(nil)
	assert.GreaterOrEqual(t, n, 8, "the statements were prepared on the hold's session")
}

// The lock's read of the outbox runs as an index scan even where PostgreSQL would choose a
// bitmap scan (a key whose deleted rows' index entries nobody has marked yet): a bitmap scan
// does not mark them, so its cost grew with every group a lobby ever had.
func TestClusterOrderLockOutboxReadIsAnIndexScan(t *testing.T) {
	ctx := context.Background()
	a, _ := twoNodes(t)
	h, err := a.OrderLock(ctx, "lobby:1", nil)
	require.NoError(t, err)
	defer h.Unlock(nil)
	p := h.Store.(*DB).hold
	require.NoError(t, p.pipeline(ctx, false, func(b *pgx.Batch) {
		b.Queue(`ANALYZE outbox`)
		b.Queue(`INSERT INTO outbox (key, data, created_at) SELECT 'lobby:1', '\x00', g FROM generate_series(1, 1500) g`)
		b.Queue(`DELETE FROM outbox WHERE key = 'lobby:1'`)
		b.Queue(`INSERT INTO outbox (key, data, created_at) SELECT 'lobby:' || g, '\x00', 1 FROM generate_series(2, 5) g`)
	}))
	plan := func(off bool) string {
		var lines []string
		read := func(b *pgx.Batch, key string) {
			b.Queue("EXPLAIN "+pgLockOutbox, key).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						return err
					}
					lines = append(lines, line)
				}
				return rows.Err()
			})
		}
		require.NoError(t, p.pipeline(ctx, false, func(b *pgx.Batch) {
			if off {
				queueOutboxes(b, []string{"lobby:1"}, read)
			} else {
				read(b, "lobby:1")
			}
		}))
		return strings.Join(lines, "\n")
	}
	require.Contains(t, plan(false), "Bitmap", "PostgreSQL left to choose no longer picks a bitmap scan here: the test shows nothing")
	got := plan(true)
	assert.Contains(t, got, "Index Scan")
	assert.NotContains(t, got, "Bitmap")
	assert.Contains(t, plan(false), "Bitmap", "the session's bitmap scans are not back on after the read")
}
