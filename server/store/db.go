package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"sdkpp/server/internal/groupwrite"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DB is the Store on a SQL database: embedded SQLite (OpenSQLite) or PostgreSQL (OpenPostgres).
// Both run the same code and the same queries; the queries are written once, in the SQL both
// databases accept, and a dialect rewrites what they spell differently (placeholders, the JSON
// id lists, row locks) and supplies what differs outright (migrations, unique violations,
// full-text search).
type DB struct {
	db   *sql.DB
	d    *dialect
	q    querier // rewrites every query for d, then runs it on the database or the transaction
	tx   bool
	memo *memo
	opts *dbOptions

	cache *stmtCache // SQLite's prepared statements; nil on PostgreSQL (pgx caches its own)
	node  *nodeLease // PostgreSQL: this node's id, held while the store is open; nil otherwise

	// readers, on a SQLite database in a data directory, is a pool of read-only connections
	// that every SELECT outside a transaction runs on (with its own prepared statements), so
	// that reads run beside each other and beside the one writer (WAL); nil otherwise, when
	// db runs everything.
	readers      *sql.DB
	readersCache *stmtCache
	// checkpoints, beside readers, makes the WAL's checkpoints off the writer; nil otherwise.
	checkpoints *checkpointer
	// memoListener, on PostgreSQL, empties the memo when another node changes what it keeps.
	memoListener *memoListener
	// tokens stores the tokens inserted at once outside transactions together
	// (newTokenWriter).
	tokens *groupwrite.Writer[*Token]
	// tokenKey is TokenKey's key, read once at the opening (loadTokenKey).
	tokenKey []byte

	// group shares SQLite's transactions between the WithTx calls that run at once; nil on
	// PostgreSQL, whose connections write transactions side by side.
	group *groupCommit

	// hold, on PostgreSQL, is the order lock whose connection this store runs on (OrderHold's
	// Store): its transactions record the lock's floor. Nil otherwise.
	hold *pgHold

	// txChanged is set, in a transaction, when a write in it changed what the memo or a
	// service's cache may hold: WithTx tells the memo again once the transaction has ended.
	txChanged *bool
}

// dbOptions are a store's settings, shared by the store and its transactions.
type dbOptions struct {
	// now is the wall clock of queue claims (NextInviteTargetJob has no time of its own).
	now func() time.Time
	// claimLease is how long a claimed webhook delivery or job is kept from other nodes; zero
	// (SQLite: one process) claims nothing.
	claimLease time.Duration
	// observe, when set, is told of every statement (ObserveQueries).
	observe observer
}

// dialect is what differs between the databases.
type dialect struct {
	name string
	// rewrite turns a query written for both into this database's text.
	rewrite func(string) string
	// isUnique tells whether err is a unique-constraint violation.
	isUnique func(error) bool
	// migrations create and evolve the schema; lockMigrations, when set, is run first in the
	// migrations' transaction so that nodes starting together migrate one at a time.
	migrations     []string
	lockMigrations string
	// search is the full-text part of guild message search.
	search ftsDialect
	// textArgs, when set, changes the string arguments of every statement (PostgreSQL's text
	// cannot hold every Go string).
	textArgs func(string) string

	mu        sync.Mutex
	rewritten map[string]string
}

// text returns query as this database runs it, rewriting each text once.
func (d *dialect) text(query string) string {
	if d.rewrite == nil {
		return query
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out, ok := d.rewritten[query]
	if !ok {
		out = d.rewrite(query)
		if d.rewritten == nil || len(d.rewritten) >= maxCachedStatements {
			d.rewritten = make(map[string]string)
		}
		d.rewritten[query] = out
	}
	return out
}

// rewriting is a querier that runs each query in its dialect's text.
type rewriting struct {
	d *dialect
	q querier
}

func (r rewriting) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.q.ExecContext(ctx, r.d.text(query), r.d.args(args)...)
}

func (r rewriting) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.q.QueryContext(ctx, r.d.text(query), r.d.args(args)...)
}

func (r rewriting) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.q.QueryRowContext(ctx, r.d.text(query), r.d.args(args)...)
}

// args returns args with textArgs applied to the strings it changes; args itself when none.
func (d *dialect) args(args []any) []any {
	if d.textArgs == nil {
		return args
	}
	var out []any
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			continue
		}
		if t := d.textArgs(s); t != s {
			if out == nil {
				out = slices.Clone(args)
			}
			out[i] = t
		}
	}
	if out == nil {
		return args
	}
	return out
}

// querierOn is the querier of the database (tx nil) or of a transaction.
func (s *DB) querierOn(tx *sql.Tx) querier {
	var q querier
	switch {
	case s.readers != nil && tx == nil:
		q = readRouting{w: cachedQuerier{c: s.cache}, r: cachedQuerier{c: s.readersCache}}
	case s.cache != nil:
		q = cachedQuerier{c: s.cache, tx: tx}
	case tx != nil:
		q = uncancelledQuerier{tx}
	default:
		q = uncancelledQuerier{s.db}
	}
	q = observing{q: rewriting{d: s.d, q: q}, o: s.opts}
	if s.group != nil && tx == nil {
		q = groupExec{q: q, s: s}
	}
	return q
}

// groupExec runs a write outside a transaction (ExecContext) as a transaction of its own
// through the group commit, so that writes made at once share a commit; queries run as they
// are (one that writes, with RETURNING, commits alone: its rows are read after the call).
type groupExec struct {
	q querier
	s *DB
}

func (g groupExec) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = g.s.group.run(ctx, true, func(st Store) error {
		res, err = st.(*DB).q.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (g groupExec) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return g.q.QueryContext(ctx, query, args...)
}

func (g groupExec) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return g.q.QueryRowContext(ctx, query, args...)
}

// uncancelledQuerier runs every statement to its end, as cachedQuerier does: a statement
// cancelled halfway through a transaction would leave the transaction unusable.
type uncancelledQuerier struct{ q querier }

func (u uncancelledQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return u.q.ExecContext(uncancelled(ctx), query, args...)
}

func (u uncancelledQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return u.q.QueryContext(uncancelled(ctx), query, args...)
}

func (u uncancelledQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return u.q.QueryRowContext(uncancelled(ctx), query, args...)
}

// readRouting runs the queries that only read (a SELECT) on the readers and every other
// statement on the writer. It is used outside transactions only: a read after a write of the
// same caller starts after the write's commit, so it sees it.
type readRouting struct{ w, r querier }

// isRead tells whether query is a SELECT (a WITH may write, and goes to the writer).
func isRead(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

func (r readRouting) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.w.ExecContext(ctx, query, args...)
}

func (r readRouting) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if isRead(query) {
		return r.r.QueryContext(ctx, query, args...)
	}
	return r.w.QueryContext(ctx, query, args...)
}

func (r readRouting) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if isRead(query) {
		return r.r.QueryRowContext(ctx, query, args...)
	}
	return r.w.QueryRowContext(ctx, query, args...)
}

// Dialect names the database: "sqlite" or "postgres".
func (s *DB) Dialect() string { return s.d.name }

// migrate applies the migrations this database has not had, in one transaction.
func (s *DB) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	defer tx.Rollback()
	if s.d.lockMigrations != "" {
		if _, err := tx.ExecContext(ctx, s.d.lockMigrations); err != nil {
			return fmt.Errorf("store: lock migrations: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	migrations := s.d.migrations
	if applied > len(migrations) {
		return fmt.Errorf("store: the database has %d migrations, this build knows %d: it is newer than this service", applied, len(migrations))
	}
	for i := applied; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("store: migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, s.d.text(`INSERT INTO schema_migrations (version) VALUES (?)`), i+1); err != nil {
			return fmt.Errorf("store: migration %d: %w", i+1, err)
		}
	}
	// (A test that migrates part of the way may stop before the table of settings.)
	if slices.ContainsFunc(migrations, func(m string) bool { return strings.Contains(m, "CREATE TABLE settings") }) {
		if err := s.loadTokenKey(ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	return nil
}

// Close closes the database (and gives up the node id).
func (s *DB) Close() error {
	if s.tx {
		return errors.New("store: Close inside a transaction")
	}
	if s.tokens != nil {
		s.tokens.Close() // the tokens being stored are stored
	}
	if s.cache != nil {
		s.cache.Close()
	}
	if s.node != nil {
		s.node.release()
	}
	if s.checkpoints != nil {
		s.checkpoints.Close()
	}
	if s.memoListener != nil {
		s.memoListener.Close()
	}
	if s.readers != nil {
		s.readersCache.Close()
		if err := s.readers.Close(); err != nil {
			s.db.Close()
			return fmt.Errorf("store: close readers: %w", err)
		}
	}
	return s.db.Close()
}

// changed tells the memo, before a write, that the write can make a cached user, application or
// token wrong; the caller defers the function it returns, which tells it again once the write
// is committed (or, in a transaction, leaves that to WithTx). The second time matters where
// reads run beside the write (the SQLite readers, PostgreSQL): a read between the first and the
// commit sees the old row, and must not be kept under the epoch it read. On PostgreSQL each
// time also moves the shared epoch (SharedEpoch) on.
func (s *DB) changed() func() {
	s.memo.changed()
	s.moveShared()
	if s.txChanged != nil {
		*s.txChanged = true
		return func() {}
	}
	return func() {
		s.memo.changed()
		s.moveShared()
	}
}

// moveShared moves PostgreSQL's shared epoch on; no-op on SQLite. In a transaction the row
// moves with the transaction's writes, and a failure fails the transaction (PostgreSQL refuses
// every later statement of it). Outside one it is moved before and after the write, as the memo
// is; should the second move fail, the nodes' caches keep the rows until the next move.
func (s *DB) moveShared() {
	if s.d.name != "postgres" {
		return
	}
	_, _ = s.q.ExecContext(context.Background(), `UPDATE cache_epoch SET n = n + 1 WHERE id = 1`)
}

// SharedEpoch returns a value that changes whenever, on any node, a user, an application or a
// token's validity changes (as CacheEpoch does in one process) or a holder of the order lock of
// key (OrderLock) commits a change under it, recording the ids it made. A node may keep such rows, and what it
// reads under the lock's key, in memory while the value it read them after is current. On
// SQLite (one process, no order locks) it is CacheEpoch.
//
// Under MayBeBehind, for a key whose order lock no node holds (a node alone: no order locks),
// the value read last is answered again while this node hears the database's notifications
// (memoListener), until one arrives: it moves a notification after another node's change.
func (s *DB) SharedEpoch(ctx context.Context, key string) (uint64, error) {
	if s.d.name != "postgres" {
		return s.memo.epoch.Load(), nil
	}
	behind := !s.tx && s.memo.notified.Load() && ctx.Value(mayBeBehind{}) != nil
	if behind {
		s.memo.mu.Lock()
		e := s.memo.shared
		s.memo.mu.Unlock()
		if e.ok && e.key == key {
			return e.n, nil
		}
	}
	gen := s.memo.gen.Load()
	// Both parts only grow, so their sum changes whenever either does.
	var n int64
	if err := s.q.QueryRowContext(ctx, `SELECT n + COALESCE((SELECT last_id FROM order_locks WHERE key = ?), 0)
		FROM cache_epoch WHERE id = 1`, key).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: shared epoch: %w", err)
	}
	if behind {
		s.memo.mu.Lock()
		if s.memo.gen.Load() == gen && s.memo.notified.Load() {
			s.memo.shared = sharedEpoch{key: key, n: uint64(n), ok: true}
		}
		s.memo.mu.Unlock()
	}
	return uint64(n), nil
}

// WithTx runs fn in a transaction.
func (s *DB) WithTx(ctx context.Context, fn func(Store) error) error {
	if s.tx {
		return fn(s)
	}
	if s.hold != nil {
		return s.hold.withTx(ctx, s, fn)
	}
	if s.group != nil {
		return s.group.run(ctx, false, fn)
	}
	ctx = uncancelled(ctx)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if s.cache != nil {
		// Queries first seen in this transaction are prepared once it has ended.
		defer s.cache.prepareWanted(ctx)
	}
	inner := *s
	inner.q, inner.tx, inner.txChanged = s.querierOn(tx), true, new(bool)
	defer func() {
		if *inner.txChanged {
			s.memo.changed()
		}
	}()
	if err := fn(&inner); err != nil {
		tx.Rollback()
		return err
	}
	start := time.Now()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	if f := s.opts.observe.Load(); f != nil {
		(*f)("commit", time.Since(start))
	}
	return nil
}

// Ping runs SELECT 1 on a connection of the pool (or in the transaction).
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.q.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// MaxID returns the largest id in the id-keyed tables.
func (s *DB) MaxID(ctx context.Context) (uint64, error) {
	var max int64
	err := s.q.QueryRowContext(ctx, `SELECT MAX(m) FROM (
		SELECT COALESCE(MAX(id), 0) AS m FROM applications
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM skus
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM subscriptions
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM audit_log
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM users
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM authorizations
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM webhook_deliveries
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM lobbies
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM lobby_messages
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM dm_channels
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM dm_messages
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guilds
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_channels
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_roles
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_messages
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_attachments
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_emojis
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_scheduled_events
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM token_grants
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM tokens
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM operators
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM operator_actions) AS ids`).Scan(&max)
	return uint64(max), err
}

// Times are stored as Unix nanoseconds; the zero time as 0.
func ts(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromTS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func joinScopes(s []string) string  { return strings.Join(s, " ") }
func splitScopes(s string) []string { return strings.Fields(s) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// isUnique tells whether err is a unique-constraint violation.
func (s *DB) isUnique(err error) bool { return err != nil && s.d.isUnique(err) }

// mustAffect returns ErrNotFound when an update touched no row.
func mustAffect(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// rewritePlaceholders turns SQLite's placeholders into PostgreSQL's: ?NNN into $NNN and ? into
// the next number (as SQLite numbers it: one more than the largest so far). Quoted text is left
// alone.
func rewritePlaceholders(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	top := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'': // a string literal, through its closing quote ('' is an escaped quote)
			j := i + 1
			for j < len(q) && q[j] != '\'' {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := top + 1
			if j > i+1 {
				fmt.Sscan(q[i+1:j], &n)
			}
			top = max(top, n)
			fmt.Fprintf(&b, "$%d", n)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// upsert is an INSERT of cols (a comma-separated list) into table that replaces the row with the
// same key (key: the columns of the table's primary key), written as both databases accept it.
func upsert(table, cols, key string) string {
	names := strings.Split(cols, ",")
	isKey := map[string]bool{}
	for _, k := range strings.Split(key, ",") {
		isKey[strings.TrimSpace(k)] = true
	}
	var set []string
	for _, c := range names {
		if c = strings.TrimSpace(c); !isKey[c] {
			set = append(set, c+"=excluded."+c)
		}
	}
	q := `INSERT INTO ` + table + ` (` + cols + `) VALUES (?` + strings.Repeat(",?", len(names)-1) +
		`) ON CONFLICT (` + key + `) DO `
	if len(set) == 0 {
		return q + `NOTHING`
	}
	return q + `UPDATE SET ` + strings.Join(set, ", ")
}
