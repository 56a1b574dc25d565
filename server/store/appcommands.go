package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// CommandStore keeps applications' commands: one JSON document per application and guild (0 for
// the global commands), which package interactions reads and writes whole.
type CommandStore interface {
	// GetApplicationCommands returns the scope's document, nil when it has none.
	GetApplicationCommands(ctx context.Context, appID, guildID uint64) ([]byte, error)
	// PutApplicationCommands replaces the scope's document; nil or empty removes it.
	PutApplicationCommands(ctx context.Context, appID, guildID uint64, doc []byte) error
	// LockApplicationCommands takes the lock of the scope's document until the end of the
	// transaction it runs in, so that nodes sharing the database change one scope one at a time
	// (PostgreSQL; SQLite runs one transaction at a time already).
	LockApplicationCommands(ctx context.Context, appID, guildID uint64) error
}

func (s *DB) GetApplicationCommands(ctx context.Context, appID, guildID uint64) ([]byte, error) {
	var doc []byte
	err := notFound(s.q.QueryRowContext(ctx, `SELECT commands FROM application_commands WHERE app_id=? AND guild_id=?`,
		appID, guildID).Scan(&doc))
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return doc, err
}

func (s *DB) PutApplicationCommands(ctx context.Context, appID, guildID uint64, doc []byte) error {
	if len(doc) == 0 {
		_, err := s.q.ExecContext(ctx, `DELETE FROM application_commands WHERE app_id=? AND guild_id=?`, appID, guildID)
		return err
	}
	_, err := s.q.ExecContext(ctx, `INSERT INTO application_commands (app_id, guild_id, commands) VALUES (?,?,?)
		ON CONFLICT (app_id, guild_id) DO UPDATE SET commands=excluded.commands`, appID, guildID, doc)
	return err
}

func (s *DB) LockApplicationCommands(ctx context.Context, appID, guildID uint64) error {
	if s.d.name != "postgres" {
		return nil
	}
	key := "application_commands:" + strconv.FormatUint(appID, 10) + ":" + strconv.FormatUint(guildID, 10)
	if _, err := s.q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key); err != nil {
		return fmt.Errorf("store: lock commands: %w", err)
	}
	return nil
}
