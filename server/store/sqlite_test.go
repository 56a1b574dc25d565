package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestMigrationsAndRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.CreateUser(ctx, &User{ID: 42, Username: "alice", PasswordHash: []byte("x"), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, &User{ID: 43, Username: "alice", CreatedAt: now}); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate username: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening applies no migration twice and keeps the data.
	s, err = OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.GetUserByUsername(ctx, "alice")
	if err != nil || u.ID != 42 || !u.CreatedAt.Equal(now) {
		t.Fatalf("after restart: %+v %v", u, err)
	}
	if max, _ := s.MaxID(ctx); max != 42 {
		t.Fatalf("MaxID = %d", max)
	}
}

func TestAuthCodeIsUsedOnce(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	if err := s.InsertAuthCode(ctx, &AuthCode{Hash: []byte("h"), AppID: 1, UserID: 2, Scopes: []string{"identify"}, IntegrationType: 1}); err != nil {
		t.Fatal(err)
	}
	c, err := s.UseAuthCode(ctx, []byte("h"))
	if err != nil || c.Used || c.IntegrationType != 1 || c.Scopes[0] != "identify" {
		t.Fatalf("first use: %+v %v", c, err)
	}
	c, err = s.UseAuthCode(ctx, []byte("h"))
	if err != nil || !c.Used {
		t.Fatalf("second use must report used: %+v %v", c, err)
	}
	if _, err := s.UseAuthCode(ctx, []byte("nope")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown code: %v", err)
	}
}

func TestTransactionRollsBack(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	boom := errors.New("boom")
	err := s.WithTx(ctx, func(tx Store) error {
		if err := tx.CreateUser(ctx, &User{ID: 7, Username: "x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := s.GetUser(ctx, 7); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rolled-back user exists: %v", err)
	}
	// Deleting an authorization deletes its tokens; deleting a token twice reports the second.
	a := &Authorization{ID: 9, AppID: 1, UserID: 2, Scopes: []string{"identify"}}
	if err := s.PutAuthorization(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertToken(ctx, &Token{Hash: []byte("t"), Kind: AccessToken, AuthorizationID: 9}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAuthorization(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteToken(ctx, []byte("t")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("token survived its authorization: %v", err)
	}
}

// Two first grants of one user and application at once (two token requests racing) make one
// authorization: neither fails on the unique index, and both get its id.
func TestPutAuthorizationRace(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 16
	ids := make([]uint64, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &Authorization{ID: uint64(100 + i), AppID: 1, UserID: 2, Scopes: []string{"identify"}}
			errs <- s.PutAuthorization(ctx, a)
			ids[i] = a.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ListAuthorizationsByUser(ctx, 2)
	if err != nil || len(list) != 1 {
		t.Fatalf("%d authorizations (%v)", len(list), err)
	}
	for _, id := range ids {
		if id != list[0].ID {
			t.Fatalf("ids %v, stored %d", ids, list[0].ID)
		}
	}
	// A later grant updates the scopes in place.
	a := &Authorization{ID: 999, AppID: 1, UserID: 2, Scopes: []string{"identify", "email"}}
	if err := s.PutAuthorization(ctx, a); err != nil || a.ID != list[0].ID {
		t.Fatalf("update: id %d, %v", a.ID, err)
	}
	if got, err := s.GetAuthorization(ctx, a.ID); err != nil || len(got.Scopes) != 2 {
		t.Fatalf("scopes after update: %+v %v", got, err)
	}
}

// openMemory opens an in-memory store that the test closes when it ends.
func openMemory(t *testing.T) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
