package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The token cache never answers for a token that is gone: deleting it, deleting its
// authorization, or a transaction that read it and rolled back. The cache epoch moves with every
// write that can change a cached user, application or token.
func TestTokenCacheAndEpoch(t *testing.T) { forEachStore(t, testTokenCacheAndEpoch) }

func testTokenCacheAndEpoch(t *testing.T, s *DB) {
	ctx := context.Background()
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.PutAuthorization(ctx, &Authorization{ID: 9, AppID: 1, UserID: 2, Scopes: []string{"identify"}}))
	insert := func(hash string) {
		t.Helper()
		require.NoError(t, s.InsertToken(ctx, &Token{Hash: []byte(hash), Kind: AccessToken, AuthorizationID: 9, AppID: 1, UserID: 2, ExpiresAt: exp}))
	}
	read := func(hash string) error {
		t.Helper()
		for range 2 { // the second read comes from the cache
			tok, err := s.GetToken(ctx, []byte(hash))
			if err != nil {
				return err
			}
			require.Equal(t, uint64(2), tok.UserID, "token %+v", tok)
			require.True(t, tok.ExpiresAt.Equal(exp), "token %+v", tok)
		}
		return nil
	}
	gone := func(hash, why string) {
		t.Helper()
		_, err := s.GetToken(ctx, []byte(hash))
		require.ErrorIs(t, err, ErrNotFound, "token %q after %s", hash, why)
	}

	insert("a")
	insert("b")
	require.NoError(t, read("a"), "tokens not found")
	require.NoError(t, read("b"), "tokens not found")
	epoch := s.CacheEpoch()
	require.NoError(t, s.DeleteToken(ctx, []byte("a")))
	gone("a", "DeleteToken")
	require.NotEqual(t, epoch, s.CacheEpoch(), "DeleteToken did not move the epoch")
	require.NoError(t, read("b"), "b lost")
	require.NoError(t, s.DeleteAuthorization(ctx, 9))
	gone("b", "DeleteAuthorization")

	// A token inserted and read inside a transaction that rolls back is not remembered.
	boom := errors.New("boom")
	err := s.WithTx(ctx, func(tx Store) error {
		if err := tx.InsertToken(ctx, &Token{Hash: []byte("c"), Kind: AccessToken, AuthorizationID: 9, ExpiresAt: exp}); err != nil {
			return err
		}
		if _, err := tx.GetToken(ctx, []byte("c")); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	gone("c", "a rolled-back transaction")

	for name, write := range map[string]func() error{
		"UpdateUser": func() error {
			if err := s.CreateUser(ctx, &User{ID: 2, Username: "u"}); err != nil {
				return err
			}
			return s.UpdateUser(ctx, &User{ID: 2, Username: "v"})
		},
		"UpdateApplication": func() error {
			if err := s.CreateApplication(ctx, &Application{ID: 1, Name: "g", ClientSecretHash: []byte("s"), BotTokenHash: []byte("b"), WebhookKey: []byte("k")}); err != nil {
				return err
			}
			return s.UpdateApplication(ctx, &Application{ID: 1, Name: "h", ClientSecretHash: []byte("s"), BotTokenHash: []byte("b"), WebhookKey: []byte("k")})
		},
	} {
		epoch := s.CacheEpoch()
		require.NoError(t, write(), "%s", name)
		require.NotEqual(t, epoch, s.CacheEpoch(), "%s did not move the epoch", name)
	}
}
