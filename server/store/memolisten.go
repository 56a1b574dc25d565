package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// memoChannel is the PostgreSQL notification channel of changed applications, authorizations
// and tokens: migration 16's and 21's triggers notify it in the transaction of every change of
// their rows (of tokens, updates and deletes), so the notification reaches every node when the
// change commits.
const memoChannel = "sdkpp_memo"

// Timings of memoListener.
const (
	// memoPingEvery is how long the listener waits for a notification before it makes sure its
	// connection still answers: a connection that died without a word (a lost network) is found
	// within it, which bounds how long a node may keep a row that another node changed.
	memoPingEvery = 10 * time.Second
	// memoRetry is how long the listener waits before connecting again.
	memoRetry = time.Second
)

// memoListener keeps a PostgreSQL node's memo of applications, authorizations and tokens
// current: on a connection of its own it listens to memoChannel and empties the memo at each
// notification. While it is not listening (connecting, or after its connection failed) the memo
// keeps nothing, as a notification may have been missed; once it listens again it empties the memo
// and keeps rows again. Between another node's commit and the notification's arrival (a round
// trip on a healthy connection) a row kept here may be older than the database's.
type memoListener struct {
	stop context.CancelFunc
	done chan struct{}
	err  chan error // the first connection's outcome, for OpenPostgres
}

// listenMemo starts m's listener on the database at dsn. It returns once the listener listens,
// or with the error of its first attempt, after which it keeps trying in the background (the
// memo meanwhile keeps nothing). Close stops it.
func listenMemo(ctx context.Context, dsn string, m *memo) (*memoListener, error) {
	lctx, stop := context.WithCancel(context.Background())
	l := &memoListener{stop: stop, done: make(chan struct{}), err: make(chan error, 1)}
	go l.run(lctx, dsn, m)
	select {
	case err := <-l.err:
		return l, err
	case <-ctx.Done():
		return l, ctx.Err()
	}
}

func (l *memoListener) run(ctx context.Context, dsn string, m *memo) {
	defer close(l.done)
	first := true
	for {
		err := listen(ctx, dsn, m, func() {
			if first {
				l.err <- nil
				first = false
			}
		})
		m.notified.Store(false)
		m.changed()
		if first {
			l.err <- err
			first = false
		}
		t := time.NewTimer(memoRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// listen connects, listens and empties m at each notification until the connection fails or
// ctx ends; listening is called once notifications are heard.
func listen(ctx context.Context, dsn string, m *memo, listening func()) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("store: memo listener: connect: %w", redactErr(err, dsn))
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+memoChannel); err != nil {
		return fmt.Errorf("store: memo listener: listen: %w", err)
	}
	// Every change from now on is heard: forget what may have changed before.
	m.changed()
	m.notified.Store(true)
	listening()
	for {
		wctx, cancel := context.WithTimeout(ctx, memoPingEvery)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			m.changed()
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			pctx, cancel := context.WithTimeout(ctx, memoPingEvery)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("store: memo listener: ping: %w", err)
			}
		default:
			return fmt.Errorf("store: memo listener: %w", err)
		}
	}
}

// Close stops the listener and waits for its goroutine.
func (l *memoListener) Close() {
	l.stop()
	<-l.done
}
