package store

import (
	"context"
	"errors"
	"fmt"
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
	const a, b, c = 1, 2, 3
	insert := func(id uint64) {
		t.Helper()
		require.NoError(t, s.InsertToken(ctx, &Token{ID: id, Hash: []byte("h"), Kind: AccessToken, AuthorizationID: 9, AppID: 1, UserID: 2, ExpiresAt: exp}))
	}
	read := func(id uint64) error {
		t.Helper()
		for range 2 { // the second read comes from the cache
			tok, err := s.GetToken(ctx, id)
			if err != nil {
				return err
			}
			require.Equal(t, uint64(2), tok.UserID, "token %+v", tok)
			require.True(t, tok.ExpiresAt.Equal(exp), "token %+v", tok)
		}
		return nil
	}
	gone := func(id uint64, why string) {
		t.Helper()
		_, err := s.GetToken(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, "token %d after %s", id, why)
	}

	insert(a)
	insert(b)
	require.NoError(t, read(a), "tokens not found")
	require.NoError(t, read(b), "tokens not found")
	epoch := s.CacheEpoch()
	require.NoError(t, s.DeleteToken(ctx, a))
	gone(a, "DeleteToken")
	require.NotEqual(t, epoch, s.CacheEpoch(), "DeleteToken did not move the epoch")
	require.NoError(t, read(b), "b lost")
	require.NoError(t, s.DeleteAuthorization(ctx, 9))
	gone(b, "DeleteAuthorization")

	// A token inserted and read inside a transaction that rolls back is not remembered.
	boom := errors.New("boom")
	err := s.WithTx(ctx, func(tx Store) error {
		if err := tx.InsertToken(ctx, &Token{ID: c, Hash: []byte("c"), Kind: AccessToken, AuthorizationID: 9, ExpiresAt: exp}); err != nil {
			return err
		}
		if _, err := tx.GetToken(ctx, c); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	gone(c, "a rolled-back transaction")

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

// The application cache answers with copies, and never for an application changed since it
// was read; an application read inside a transaction that rolls back is not remembered.
func TestApplicationCache(t *testing.T) { forEachStore(t, testApplicationCache) }

func testApplicationCache(t *testing.T, s *DB) {
	ctx := context.Background()
	app := &Application{ID: 7, Name: "g", RedirectURIs: []string{"http://a"}, ClientSecretHash: []byte("s"),
		BotTokenHash: []byte("b"), WebhookKey: []byte("k")}
	require.NoError(t, s.CreateApplication(ctx, app))
	a, err := s.GetApplication(ctx, 7)
	require.NoError(t, err)
	a.Name, a.RedirectURIs[0], a.ClientSecretHash[0] = "mutated", "http://mutated", 'x'
	a, err = s.GetApplication(ctx, 7) // from the cache on SQLite: the caller's changes are its own
	require.NoError(t, err)
	require.Equal(t, "g", a.Name)
	require.Equal(t, []string{"http://a"}, a.RedirectURIs)
	require.Equal(t, []byte("s"), a.ClientSecretHash)

	app.Name, app.ClientSecretHash = "h", []byte("t")
	require.NoError(t, s.UpdateApplication(ctx, app))
	a, err = s.GetApplication(ctx, 7)
	require.NoError(t, err)
	require.Equal(t, "h", a.Name, "a stale application after UpdateApplication")
	require.Equal(t, []byte("t"), a.ClientSecretHash)

	boom := errors.New("boom")
	err = s.WithTx(ctx, func(tx Store) error {
		if err := tx.UpdateApplication(ctx, &Application{ID: 7, Name: "rolled back", RedirectURIs: []string{},
			ClientSecretHash: []byte("t"), BotTokenHash: []byte("b"), WebhookKey: []byte("k")}); err != nil {
			return err
		}
		if a, err := tx.GetApplication(ctx, 7); err != nil || a.Name != "rolled back" {
			return fmt.Errorf("in the transaction: %+v, %w", a, err)
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	a, err = s.GetApplication(ctx, 7)
	require.NoError(t, err)
	require.Equal(t, "h", a.Name, "an application of a rolled-back transaction")
	_, err = s.GetApplication(ctx, 8)
	require.ErrorIs(t, err, ErrNotFound)
}

// FindAuthorization never answers from the memo with an authorization changed or deleted since.
func TestAuthorizationCache(t *testing.T) { forEachStore(t, testAuthorizationCache) }

func testAuthorizationCache(t *testing.T, s *DB) {
	ctx := context.Background()
	require.NoError(t, s.PutAuthorization(ctx, &Authorization{ID: 5, AppID: 1, UserID: 2, Scopes: []string{"identify"}, IntegrationType: -1}))
	for range 2 { // the second read comes from the cache on SQLite
		a, err := s.FindAuthorization(ctx, 1, 2)
		require.NoError(t, err)
		require.Equal(t, []string{"identify"}, a.Scopes)
		a.Scopes[0] = "mutated"
	}
	epoch := s.CacheEpoch()
	require.NoError(t, s.PutAuthorization(ctx, &Authorization{ID: 6, AppID: 1, UserID: 2, Scopes: []string{"bot", "identify"}, IntegrationType: -1}))
	require.NotEqual(t, epoch, s.CacheEpoch(), "PutAuthorization did not move the epoch")
	a, err := s.FindAuthorization(ctx, 1, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"bot", "identify"}, a.Scopes, "a stale authorization after PutAuthorization")
	require.Equal(t, uint64(5), a.ID)
	require.NoError(t, s.DeleteAuthorization(ctx, 5))
	_, err = s.FindAuthorization(ctx, 1, 2)
	require.ErrorIs(t, err, ErrNotFound, "a deleted authorization")
}
