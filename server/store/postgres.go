package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"sdkpp/internal/clock"
	"sdkpp/server/snowflake"
)

// MaxNodeID bounds a node id: the ids a node makes carry it (package snowflake).
const MaxNodeID = snowflake.MaxNode

// DefaultClaimLease is how long a node keeps a webhook delivery or a target-users job it has
// claimed from the others (PostgreSQL); a node that dies with a claim leaves the work to another
// once it ends.
const DefaultClaimLease = time.Minute

// ErrNodeIDTaken is returned by OpenPostgres when a live node already holds the node id.
var ErrNodeIDTaken = errors.New("store: another live node has this node id")

// PostgresOptions are the settings of OpenPostgres.
type PostgresOptions struct {
	// NodeID is this node's id (0 to MaxNodeID): the store holds it while it is open, and a
	// second live node with the same id on the same database is refused.
	NodeID int
	// ClaimLease is how long a claim keeps work from other nodes; zero is DefaultClaimLease.
	ClaimLease time.Duration
	// Now is the wall clock of claims; nil is time.Now.
	Now func() time.Time
}

// OpenPostgres opens the PostgreSQL database at dsn (a postgres:// URL or a key=value
// connection string), applies the migrations and takes the node id. Errors never carry the
// password.
func OpenPostgres(ctx context.Context, dsn string, o PostgresOptions) (*DB, error) {
	if o.NodeID < 0 || o.NodeID > MaxNodeID {
		return nil, fmt.Errorf("store: node id %d is not in 0..%d", o.NodeID, MaxNodeID)
	}
	if _, err := pgconn.ParseConfig(dsn); err != nil {
		// pgconn's parse errors can quote the connection string: say only what failed.
		return nil, fmt.Errorf("store: invalid PostgreSQL connection string %s", RedactURL(dsn))
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", RedactURL(dsn), redactErr(err, dsn))
	}
	// The pool: up to pgConns connections, all kept while they are used. A smaller idle pool
	// than the open one closed the connections a burst of requests had opened and opened them
	// again at the next (a connection costs a startup round trip and its prepared statements);
	// those idle for minutes go, and every connection is renewed after an hour so that a
	// server's restart or fail-over is followed everywhere.
	db.SetMaxOpenConns(pgConns)
	db.SetMaxIdleConns(pgConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(time.Hour)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", RedactURL(dsn), redactErr(err, dsn))
	}
	opts := &dbOptions{now: o.Now, claimLease: o.ClaimLease}
	if opts.now == nil {
		opts.now = time.Now
	}
	if opts.claimLease <= 0 {
		opts.claimLease = DefaultClaimLease
	}
	// Other processes write the database: the memo keeps only what the database notifies
	// changes of, while it is heard (see memo).
	s := &DB{db: db, d: postgresDialect(), memo: newMemo(false), opts: opts}
	s.tokens = s.newTokenWriter()
	s.q = s.querierOn(nil)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if s.node, err = takeNode(ctx, db, o.NodeID); err != nil {
		db.Close()
		return nil, err
	}
	// Not listening yet is no failure: the listener keeps trying, and the memo meanwhile keeps
	// nothing, as it did before there was a listener.
	s.memoListener, _ = listenMemo(ctx, dsn, s.memo)
	return s, nil
}

// pgConns bounds a node's connections to PostgreSQL (one of them holds the node id).
const pgConns = 32

// nodeLockSpace is the first key of the advisory locks that hold node ids (the second is the id).
const nodeLockSpace = 0x5d4b

// nodeLease holds this node's id: a session advisory lock on a connection kept for it. The lock
// goes with the session, so a node that dies frees its id at once — and so does a session that
// drops (a restarted database, a terminated backend) while the node lives: CheckNode notices and
// takes the id again, or tells that another node has it.
type nodeLease struct {
	id int
	db *sql.DB

	mu       sync.Mutex
	conn     *sql.Conn // the session holding the lock; nil while none does
	released bool
	stop     context.CancelFunc
	closed   chan struct{} // the watch's goroutine has ended; nil when none was started
}

func takeNode(ctx context.Context, db *sql.DB, id int) (*nodeLease, error) {
	conn, err := lockNode(ctx, db, id)
	if err != nil {
		return nil, err
	}
	return &nodeLease{id: id, db: db, conn: conn}, nil
}

// lockNode takes the advisory lock of node id on a connection of its own and returns it.
func lockNode(ctx context.Context, db *sql.DB, id int) (*sql.Conn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: node id: %w", err)
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2)`, nodeLockSpace, id).Scan(&ok); err != nil {
		conn.Close()
		return nil, fmt.Errorf("store: node id: %w", err)
	}
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("%w: %d", ErrNodeIDTaken, id)
	}
	return conn, nil
}

// release gives the id up, closing the session that holds it, and stops the watch.
func (n *nodeLease) release() {
	n.mu.Lock()
	stop, closed, conn := n.stop, n.closed, n.conn
	n.conn, n.released = nil, true
	n.mu.Unlock()
	if stop != nil {
		stop()
		<-closed
	}
	if conn != nil {
		// Closing the connection returns it to the pool with the lock still held: unlock first.
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1, $2)`, nodeLockSpace, n.id)
		conn.Close()
	}
}

// ErrNodeIDLost is CheckNode's error when the session holding this node's id dropped and
// another node has taken the id since: this node must stop, or two nodes make the same ids.
var ErrNodeIDLost = errors.New("store: the session holding this node's id dropped and another node took the id")

// CheckNode makes sure the store still holds its node id (PostgreSQL; on SQLite it does
// nothing): when the session that held the lock has dropped, it takes the id again on a new
// session and reports retaken. It fails with ErrNodeIDLost when another node has taken the id,
// and with another error when the database cannot be asked (the lock is then likely lost too:
// check again).
func (s *DB) CheckNode(ctx context.Context) (retaken bool, err error) {
	if s.node == nil {
		return false, nil
	}
	return s.node.check(ctx)
}

func (n *nodeLease) check(ctx context.Context) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.released {
		return false, errors.New("store: node id: the store is closed")
	}
	if n.conn != nil {
		var held bool
		err := n.conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype='advisory'
			AND classid=$1 AND objid=$2 AND objsubid=2 AND pid=pg_backend_pid() AND granted)`, nodeLockSpace, n.id).Scan(&held)
		if err == nil && held {
			return false, nil
		}
		// The session dropped (or, which nothing here does, unlocked): take the id on a new one.
		n.conn.Close()
		n.conn = nil
	}
	conn, err := lockNode(ctx, n.db, n.id)
	switch {
	case errors.Is(err, ErrNodeIDTaken):
		return false, fmt.Errorf("%w (node id %d)", ErrNodeIDLost, n.id)
	case err != nil:
		return false, err // the next check tries again
	}
	n.conn = conn
	return true, nil
}

// WatchNode checks every interval of c that the store still holds its node id (CheckNode),
// logging each time it had to take it again, until Close. When another node has taken the id it
// logs why and calls lost once, and watches no more: the node must stop. On SQLite it does
// nothing.
func (s *DB) WatchNode(c clock.Clock, every time.Duration, log *slog.Logger, lost func(error)) {
	n := s.node
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stop != nil || n.released {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	n.stop, n.closed = stop, make(chan struct{})
	go func() {
		defer close(n.closed)
		for clock.Sleep(ctx, c, every) == nil {
			retaken, err := n.check(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, ErrNodeIDLost):
				log.Error("node id lock lost: another node holds this node id; stopping this node", "node_id", n.id, "err", err)
				lost(err)
				return
			case err != nil:
				log.Warn("node id lock: cannot check it; trying again", "node_id", n.id, "err", err)
			case retaken:
				log.Warn("node id lock was lost (its database session dropped) and is held again", "node_id", n.id)
			}
		}
	}()
}

// NodeID returns the node id the store holds (PostgreSQL), or 0.
func (s *DB) NodeID() int {
	if s.node == nil {
		return 0
	}
	return s.node.id
}

// postgresDialect is PostgreSQL's: numbered placeholders, JSON id lists through sdkpp_ids, and
// the schema of migrationsPostgres.
func postgresDialect() *dialect {
	return &dialect{
		name: "postgres",
		rewrite: func(q string) string {
			return strings.ReplaceAll(rewritePlaceholders(q), "json_each(", "sdkpp_ids(")
		},
		isUnique: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && e.Code == "23505" // unique_violation
		},
		migrations:     migrationsPostgres,
		lockMigrations: `SELECT pg_advisory_xact_lock(23505, 1)`,
		search:         postgresFTS{},
		textArgs:       pgText,
	}
}

// pgText makes s fit PostgreSQL's text, which holds valid UTF-8 without NUL: invalid bytes and
// NUL become U+FFFD (SQLite keeps them). Such a string can only come from a URL's path or query
// (the JSON decoder already replaces invalid UTF-8) and, looked up, finds nothing either way.
func pgText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// PostgresSchemaID names the schema PostgreSQL's migrations make (a hash of them), for tests
// that keep a migrated template database per schema.
func PostgresSchemaID() string {
	h := sha256.New()
	for _, m := range migrationsPostgres {
		h.Write([]byte(m))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// RedactURL returns a store URL or connection string fit for a log line: the password (in the
// URL's user information, a password= setting or a password query parameter) replaced by xxxxx.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		for k := range q {
			if strings.EqualFold(k, "password") {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.Redacted()
	}
	// key=value form: drop the value of password.
	fields := strings.Fields(s)
	for i, f := range fields {
		if k, _, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") {
			fields[i] = k + "=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}

// redactErr keeps the password of dsn out of err's text.
func redactErr(err error, dsn string) error {
	pw := passwordOf(dsn)
	if pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
}

// passwordOf returns the password in a connection string, "" when none.
func passwordOf(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return ""
	}
	return cfg.Password
}
