package store

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// checkpointCommits is how many commits the checkpointer lets pass between two checkpoints: a
// small transaction (a token, a message) writes a few pages to the WAL, so this many keep it
// near SQLite's own threshold (1000 pages) without checkpointing at every commit.
const checkpointCommits = 128

// checkpointNice is how much lower than the service's the priority (a Unix nice value) of the
// checkpointer's thread is. A checkpoint is about 2 ms of CPU every checkpointCommits commits; at
// the service's own priority it competes with the threads carrying messages, whose latency
// players feel. Ten lower, a thread that wakes with a message takes the processor from it at
// once, while the checkpoint still gets about a tenth of a busy processor: it falls behind under
// a saturating load (the WAL grows meanwhile) and catches up when the load drops.
const checkpointNice = 10

// checkpointer copies the WAL of a SQLite database in a data directory back into the database
// file (a checkpoint), on a connection of its own and in a goroutine of its own, instead of in
// the commit that fills the WAL past its threshold (SQLite's automatic checkpoint, turned off
// on the writer): the checkpoint writes many pages and syncs the database file, and the writer,
// with every caller waiting on its group commit, would wait for the disk meanwhile. A PASSIVE
// checkpoint runs beside the writer and the readers and never blocks them; it copies what no
// reader still needs, and a later one copies the rest.
type checkpointer struct {
	db      *sql.DB
	commits atomic.Int64 // commits since the last nudge
	nudge   chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
	closing sync.Once

	// ran counts the checkpoints made, for tests.
	ran atomic.Int64
	// failed is the last checkpoint's error, for tests; a failed checkpoint is tried again at
	// the next nudge, and the WAL meanwhile only grows.
	failed atomic.Pointer[error]
	// thread is the id of the thread the checkpoints run on, once the goroutine has it.
	thread atomic.Int64
	// lowered is set when the goroutine could not lower its thread's priority; the checkpoints
	// then run at the service's own.
	lowered atomic.Pointer[error]
}

// newCheckpointer opens the checkpointing connection on dsn and starts its goroutine, which
// Close stops.
func newCheckpointer(dsn string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open checkpointer: %w", err)
	}
	keepConns(db, 1)
	c := &checkpointer{db: db, nudge: make(chan struct{}, 1), stop: make(chan struct{})}
	c.done.Add(1)
	go c.loop()
	return c, nil
}

// committed counts a commit of the writer, and wakes the goroutine every checkpointCommits.
func (c *checkpointer) committed() {
	if c == nil || c.commits.Add(1) < checkpointCommits {
		return
	}
	c.commits.Store(0)
	select {
	case c.nudge <- struct{}{}:
	default: // one is pending already
	}
}

// loop makes the checkpoints on an operating-system thread of its own, checkpointNice lower. The
// goroutine never unlocks the thread: the runtime ends a locked thread with its goroutine (or
// parks it for good, if it is the process's first thread), so no other goroutine ever runs at the
// lowered priority, and none needs restoring (raising a priority again takes a privilege).
func (c *checkpointer) loop() {
	defer c.done.Done()
	runtime.LockOSThread()
	tid, err := lowerThreadPriority(checkpointNice)
	c.thread.Store(int64(tid))
	if err != nil {
		err = fmt.Errorf("store: checkpointer priority: %w", err)
		c.lowered.Store(&err)
	}
	for {
		select {
		case <-c.stop:
			return
		case <-c.nudge:
			c.checkpoint(context.Background())
		}
	}
}

// checkpoint makes one PASSIVE checkpoint.
func (c *checkpointer) checkpoint(ctx context.Context) {
	var busy, log, copied int
	err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
	if err != nil {
		err = fmt.Errorf("store: checkpoint: %w", err)
		c.failed.Store(&err)
	} else {
		c.failed.Store(nil)
	}
	c.ran.Add(1)
}

// Close stops the goroutine and closes the connection; it may be called again.
func (c *checkpointer) Close() error {
	c.closing.Do(func() { close(c.stop) })
	c.done.Wait()
	return c.db.Close()
}
