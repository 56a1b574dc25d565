package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
)

// tokenKeyName names the key of the service's signed access tokens in service_keys.
const tokenKeyName = "token"

// TokenKeySize is the length of TokenKey's key, in bytes.
const TokenKeySize = 32

// TokenKey returns the key that the service's signed access tokens are signed with (a MAC key
// of TokenKeySize bytes): made once from crypto/rand by the first store that opened the
// database, and read at every store's opening, so that every node of a cluster and every
// restart signs and checks with the same key. The caller must not change it, nor log it.
func (s *DB) TokenKey() []byte { return s.tokenKey }

// loadTokenKey inserts a new random key unless the database has one (an insert that does
// nothing when another store made the key first: no race between nodes opening together) and
// reads the one the database keeps, in tx (the migrations').
func (s *DB) loadTokenKey(ctx context.Context, tx *sql.Tx) error {
	fresh := make([]byte, TokenKeySize)
	if _, err := rand.Read(fresh); err != nil {
		return fmt.Errorf("store: make the token key: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.d.text(`INSERT INTO service_keys (name, secret) VALUES (?, ?)
		ON CONFLICT (name) DO NOTHING`), tokenKeyName, fresh); err != nil {
		return fmt.Errorf("store: store the token key: %w", err)
	}
	var key []byte
	if err := tx.QueryRowContext(ctx, s.d.text(`SELECT secret FROM service_keys WHERE name=?`), tokenKeyName).Scan(&key); err != nil {
		return fmt.Errorf("store: read the token key: %w", err)
	}
	if len(key) != TokenKeySize {
		return fmt.Errorf("store: the stored token key has %d bytes, not %d", len(key), TokenKeySize)
	}
	s.tokenKey = key
	return nil
}
