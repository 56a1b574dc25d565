package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DatabaseFile is the name of the database inside a data directory.
const DatabaseFile = "sdkpp.db"

// OpenSQLite opens (creating it when needed) the SQLite database in dataDir and applies the
// migrations. An empty dataDir gives a private in-memory database.
func OpenSQLite(ctx context.Context, dataDir string) (*DB, error) {
	dsn := ":memory:"
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
		p := filepath.Join(dataDir, DatabaseFile)
		// WAL with synchronous=NORMAL: a committed transaction survives the service crashing or
		// being killed (the fault test restarts it and expects every message); only a power loss
		// or an operating-system crash can lose the last transactions before a checkpoint, which
		// is durable enough for a game's social service and spares an fsync per message.
		dsn = "file:" + (&url.URL{Path: p}).EscapedPath() +
			"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	// One connection: an in-memory database lives in its connection, and one writer at a time is
	// what SQLite allows anyway.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// One process uses the database: claims are not needed, and the memo sees every write.
	s := &DB{db: db, d: sqliteDialect(), cache: newStmtCache(db), memo: newMemo(true),
		opts: &dbOptions{now: time.Now}}
	s.q = s.querierOn(nil)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

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
