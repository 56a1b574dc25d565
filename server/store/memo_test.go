package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The token cache never answers for a token that is gone: deleting it, deleting its
// authorization, or a transaction that read it and rolled back. The cache epoch moves with every
// write that can change a cached user, application or token.
func TestTokenCacheAndEpoch(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.PutAuthorization(ctx, &Authorization{ID: 9, AppID: 1, UserID: 2, Scopes: []string{"identify"}}); err != nil {
		t.Fatal(err)
	}
	insert := func(hash string) {
		t.Helper()
		if err := s.InsertToken(ctx, &Token{Hash: []byte(hash), Kind: AccessToken, AuthorizationID: 9, AppID: 1, UserID: 2, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(hash string) error {
		t.Helper()
		for range 2 { // the second read comes from the cache
			tok, err := s.GetToken(ctx, []byte(hash))
			if err != nil {
				return err
			}
			if tok.UserID != 2 || !tok.ExpiresAt.Equal(exp) {
				t.Fatalf("token %+v", tok)
			}
		}
		return nil
	}
	gone := func(hash, why string) {
		t.Helper()
		if _, err := s.GetToken(ctx, []byte(hash)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("token %q after %s: %v", hash, why, err)
		}
	}

	insert("a")
	insert("b")
	if read("a") != nil || read("b") != nil {
		t.Fatal("tokens not found")
	}
	epoch := s.CacheEpoch()
	if err := s.DeleteToken(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	gone("a", "DeleteToken")
	if s.CacheEpoch() == epoch {
		t.Fatal("DeleteToken did not move the epoch")
	}
	if read("b") != nil {
		t.Fatal("b lost")
	}
	if err := s.DeleteAuthorization(ctx, 9); err != nil {
		t.Fatal(err)
	}
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
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
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
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.CacheEpoch() == epoch {
			t.Fatalf("%s did not move the epoch", name)
		}
	}
}
