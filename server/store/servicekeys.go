package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
)

// tokenKeySetting is the setting that keeps the key of the service's signed access tokens.
const tokenKeySetting = "token.key"

// TokenKeySize is the length of TokenKey's key, in bytes.
const TokenKeySize = 32

// insertSettingIfAbsent stores a setting unless its key has one (InitSetting).
const insertSettingIfAbsent = `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`

// TokenKey returns the key that the service's signed access tokens are signed with (a MAC key
// of TokenKeySize bytes): made once from crypto/rand by the first store that opened the
// database, and read at every store's opening, so that every node of a cluster and every
// restart signs and checks with the same key. The caller must not change it, nor log it.
func (s *DB) TokenKey() []byte { return s.tokenKey }

// InitSetting stores value under key unless the key has a value, and returns the value kept:
// an insert that does nothing when another node stored one first, then a read.
func (s *DB) InitSetting(ctx context.Context, key string, value []byte) ([]byte, error) {
	if _, err := s.q.ExecContext(ctx, insertSettingIfAbsent, key, value); err != nil {
		return nil, fmt.Errorf("store: setting %q: %w", key, err)
	}
	kept, err := s.GetSetting(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("store: setting %q: %w", key, err)
	}
	return kept, nil
}

// loadTokenKey stores a new random key unless the database has one, as InitSetting does, and
// reads the one the database keeps, in tx (the migrations').
func (s *DB) loadTokenKey(ctx context.Context, tx *sql.Tx) error {
	fresh := make([]byte, TokenKeySize)
	if _, err := rand.Read(fresh); err != nil {
		return fmt.Errorf("store: make the token key: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.d.text(insertSettingIfAbsent), tokenKeySetting, fresh); err != nil {
		return fmt.Errorf("store: store the token key: %w", err)
	}
	var key []byte
	if err := tx.QueryRowContext(ctx, s.d.text(`SELECT value FROM settings WHERE key=?`), tokenKeySetting).Scan(&key); err != nil {
		return fmt.Errorf("store: read the token key: %w", err)
	}
	if len(key) != TokenKeySize {
		return fmt.Errorf("store: the stored token key has %d bytes, not %d", len(key), TokenKeySize)
	}
	s.tokenKey = key
	return nil
}
