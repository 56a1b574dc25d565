package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DatabaseFile is the name of the database inside a data directory.
const DatabaseFile = "sdkpp.db"

// OpenSQLite opens (creating it when needed) the SQLite database in dataDir and applies the
// migrations. An empty dataDir gives a private in-memory database.
//
// A database in a data directory has one writing connection and a pool of read-only ones
// (readerConns of them): in WAL mode readers read the last commit while the writer writes, so
// requests that only read (a client's lookup, a page of messages) do not wait for writes or for
// each other. An in-memory database lives in its one connection, which does everything.
func OpenSQLite(ctx context.Context, dataDir string) (*DB, error) {
	dsn := ":memory:"
	var readersDSN, checkpointDSN string
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
		p := filepath.Join(dataDir, DatabaseFile)
		// WAL with synchronous=NORMAL: a committed transaction survives the service crashing or
		// being killed (the fault test restarts it and expects every message); only a power loss
		// or an operating-system crash can lose the last transactions before a checkpoint, which
		// is durable enough for a game's social service and spares an fsync per message.
		base := "file:" + (&url.URL{Path: p}).EscapedPath() + "?_pragma=busy_timeout(5000)"
		dsn = base + "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
		// The writer makes no checkpoint of its own: the checkpointer makes them beside it.
		writerDSN := dsn + "&_pragma=wal_autocheckpoint(0)"
		checkpointDSN, dsn = dsn, writerDSN
		// query_only: a write sent to a reader by mistake fails instead of competing with the
		// writer for the database's lock.
		readersDSN = base + "&_pragma=query_only(1)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	// One writing connection: an in-memory database lives in its connection, and one writer at a
	// time is what SQLite allows anyway.
	keepConns(db, 1)
	// One process uses the database: claims are not needed, and the memo sees every write.
	s := &DB{db: db, d: sqliteDialect(), cache: newStmtCache(db), memo: newMemo(true),
		opts: &dbOptions{now: time.Now}}
	s.group = &groupCommit{s: s}
	s.tokens = s.newTokenWriter()
	s.q = s.querierOn(nil)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if readersDSN != "" {
		// Opened after the migrations, which made the database WAL (a property of the file).
		if s.readers, err = sql.Open("sqlite", readersDSN); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open readers: %w", err)
		}
		keepConns(s.readers, readerConns)
		s.readersCache = newStmtCache(s.readers)
		s.q = s.querierOn(nil)
		if s.checkpoints, err = newCheckpointer(checkpointDSN); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// keepConns makes db a pool of n connections, each kept open until db is closed (an open SQLite
// connection keeps its page cache and prepared statements).
func keepConns(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// readerConns is how many read-only connections a SQLite store in a data directory keeps: reads are
// CPU work in this process (the driver is Go), so a few more than the cores keeps them busy
// while some wait for the disk.
var readerConns = max(4, runtime.GOMAXPROCS(0)+2)

// sqliteDialect is SQLite's: the queries as written, without row locks (its one connection
// writes one transaction at a time).
func sqliteDialect() *dialect {
	return &dialect{
		name: "sqlite",
		rewrite: func(q string) string {
			q = strings.ReplaceAll(q, " FOR UPDATE SKIP LOCKED", "")
			return strings.ReplaceAll(q, " FOR UPDATE", "")
		},
		isUnique: func(err error) bool {
			var e *sqlite.Error
			if !errors.As(err, &e) {
				return false
			}
			code := e.Code()
			return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
		},
		migrations: migrations,
		search:     sqliteFTS{},
	}
}
