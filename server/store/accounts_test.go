package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMigrationsAndRestart(t *testing.T) { forEachDatabase(t, testMigrationsAndRestart) }

func testMigrationsAndRestart(t *testing.T, open func() (*DB, error)) {
	ctx := context.Background()
	s, err := open()
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateUser(ctx, &User{ID: 42, Username: "alice", PasswordHash: []byte("x"), CreatedAt: now}))
	require.ErrorIs(t, s.CreateUser(ctx, &User{ID: 43, Username: "alice", CreatedAt: now}), ErrConflict, "duplicate username")
	require.NoError(t, s.Close())
	// Reopening applies no migration twice and keeps the data.
	s, err = open()
	require.NoError(t, err)
	defer s.Close()
	u, err := s.GetUserByUsername(ctx, "alice")
	require.NoError(t, err, "after restart: %+v", u)
	require.Equal(t, uint64(42), u.ID, "after restart: %+v", u)
	require.True(t, u.CreatedAt.Equal(now), "after restart: %+v", u)
	max, _ := s.MaxID(ctx)
	require.Equal(t, uint64(42), max, "MaxID = %d", max)
}

func TestAuthCodeIsUsedOnce(t *testing.T) { forEachStore(t, testAuthCodeIsUsedOnce) }

func testAuthCodeIsUsedOnce(t *testing.T, s *DB) {
	ctx := context.Background()
	require.NoError(t, s.InsertAuthCode(ctx, &AuthCode{Hash: []byte("h"), AppID: 1, UserID: 2, Scopes: []string{"identify"}, IntegrationType: 1}))
	c, err := s.UseAuthCode(ctx, []byte("h"), Grant{ID: 70})
	require.NoError(t, err, "first use: %+v", c)
	require.False(t, c.Used, "first use: %+v", c)
	require.Equal(t, 1, c.IntegrationType, "first use: %+v", c)
	require.Equal(t, "identify", c.Scopes[0], "first use: %+v", c)
	require.Equal(t, uint64(70), c.GrantID, "the first use opens the grant")
	g, err := s.GetGrant(ctx, 70)
	require.NoError(t, err)
	require.Equal(t, Grant{ID: 70, AppID: 1, UserID: 2}, *g, "the grant is the code's app and user")
	c, err = s.UseAuthCode(ctx, []byte("h"), Grant{ID: 71})
	require.NoError(t, err, "second use must report used: %+v", c)
	require.True(t, c.Used, "second use must report used: %+v", c)
	require.Equal(t, uint64(70), c.GrantID, "a replay names the first use's grant")
	_, err = s.GetGrant(ctx, 71)
	require.ErrorIs(t, err, ErrNotFound, "a replay opens no grant")
	_, err = s.UseAuthCode(ctx, []byte("nope"), Grant{ID: 72})
	require.ErrorIs(t, err, ErrNotFound, "unknown code")

	// Uses at once: exactly one use of each code finds it unused.
	const codes, uses = 20, 8
	for i := range codes {
		require.NoError(t, s.InsertAuthCode(ctx, &AuthCode{Hash: []byte{'r', byte(i)}, AppID: 1, UserID: 2}))
	}
	var mu sync.Mutex
	unused := map[byte]int{}
	var wg sync.WaitGroup
	for i := range codes * uses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.UseAuthCode(ctx, []byte{'r', byte(i % codes)}, Grant{ID: uint64(1000 + i)})
			if assert.NoError(t, err) && !c.Used {
				mu.Lock()
				unused[byte(i%codes)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := range codes {
		require.Equal(t, 1, unused[byte(i)], "uses of code %d that found it unused", i)
	}
}

// A token is used once; revoking a grant deletes its tokens, keeps its first revocation time,
// and leaves other grants' tokens alone.
func TestTokenUseAndGrantRevocation(t *testing.T) { forEachStore(t, testTokenUseAndGrantRevocation) }

func testTokenUseAndGrantRevocation(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateGrant(ctx, &Grant{ID: 5, AppID: 1, UserID: 2, CreatedAt: t0}))
	require.NoError(t, s.CreateGrant(ctx, &Grant{ID: 6, AppID: 1, UserID: 2, CreatedAt: t0}))
	max, err := s.MaxID(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(6), max, "grant ids count for MaxID: a restart's id floor is above them")
	for _, tok := range []Token{
		{ID: 51, Hash: []byte("a5"), Kind: AccessToken, GrantID: 5},
		{ID: 52, Hash: []byte("r5"), Kind: RefreshToken, GrantID: 5},
		{ID: 61, Hash: []byte("a6"), Kind: AccessToken, GrantID: 6},
	} {
		require.NoError(t, s.InsertToken(ctx, &tok))
	}
	max, err = s.MaxID(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(61), max, "token ids count for MaxID")
	got, err := s.GetToken(ctx, 52)
	require.NoError(t, err)
	require.True(t, got.UsedAt.IsZero())
	require.Equal(t, []byte("r5"), got.Hash)
	require.NoError(t, s.UseToken(ctx, 52, t0.Add(time.Minute)))
	require.ErrorIs(t, s.UseToken(ctx, 52, t0.Add(2*time.Minute)), ErrNotFound, "a token is used once")
	require.ErrorIs(t, s.UseToken(ctx, 99, t0), ErrNotFound)
	got, err = s.GetToken(ctx, 52)
	require.NoError(t, err, "a used token is kept")
	require.True(t, got.UsedAt.Equal(t0.Add(time.Minute)), "used at %v", got.UsedAt)
	require.Equal(t, uint64(5), got.GrantID)

	g, err := s.RevokeGrant(ctx, 5, t0.Add(time.Hour))
	require.NoError(t, err)
	require.True(t, g.RevokedAt.Equal(t0.Add(time.Hour)))
	for _, id := range []uint64{51, 52} {
		_, err := s.GetToken(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, "token %d of the revoked grant", id)
	}
	_, err = s.GetToken(ctx, 61)
	require.NoError(t, err, "another grant's token stays")
	g, err = s.RevokeGrant(ctx, 5, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.True(t, g.RevokedAt.Equal(t0.Add(time.Hour)), "the first revocation time is kept")
	_, err = s.RevokeGrant(ctx, 99, t0)
	require.ErrorIs(t, err, ErrNotFound)
}

func TestTransactionRollsBack(t *testing.T) { forEachStore(t, testTransactionRollsBack) }

func testTransactionRollsBack(t *testing.T, s *DB) {
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.WithTx(ctx, func(tx Store) error {
		if err := tx.CreateUser(ctx, &User{ID: 7, Username: "x"}); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = s.GetUser(ctx, 7)
	require.ErrorIs(t, err, ErrNotFound, "rolled-back user exists")
	// Deleting an authorization deletes its tokens; deleting a token twice reports the second.
	a := &Authorization{ID: 9, AppID: 1, UserID: 2, Scopes: []string{"identify"}}
	require.NoError(t, s.PutAuthorization(ctx, a))
	require.NoError(t, s.InsertToken(ctx, &Token{ID: 3, Hash: []byte("t"), Kind: AccessToken, AuthorizationID: 9}))
	require.NoError(t, s.DeleteAuthorization(ctx, 9))
	require.ErrorIs(t, s.DeleteToken(ctx, 3), ErrNotFound, "token survived its authorization")
}

// Two first grants of one user and application at once (two token requests racing) make one
// authorization: neither fails on the unique index, and both get its id.
func TestPutAuthorizationRace(t *testing.T) { forEachDatabase(t, testPutAuthorizationRace) }

func testPutAuthorizationRace(t *testing.T, open func() (*DB, error)) {
	ctx := context.Background()
	s, err := open()
	require.NoError(t, err)
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
		require.NoError(t, err)
	}
	list, err := s.ListAuthorizationsByUser(ctx, 2)
	require.NoError(t, err, "%d authorizations", len(list))
	require.Len(t, list, 1, "%d authorizations", len(list))
	for _, id := range ids {
		require.Equal(t, list[0].ID, id, "ids %v, stored %d", ids, list[0].ID)
	}
	// A later grant updates the scopes in place.
	a := &Authorization{ID: 999, AppID: 1, UserID: 2, Scopes: []string{"identify", "email"}}
	require.NoError(t, s.PutAuthorization(ctx, a), "update: id %d", a.ID)
	require.Equal(t, list[0].ID, a.ID, "update: id %d", a.ID)
	got, err := s.GetAuthorization(ctx, a.ID)
	require.NoError(t, err, "scopes after update: %+v", got)
	require.Len(t, got.Scopes, 2, "scopes after update: %+v", got)
}

// Any string may be looked up, bytes PostgreSQL's text cannot hold included (found in URLs).
func TestLookupOfAnyString(t *testing.T) { forEachStore(t, testLookupOfAnyString) }

func testLookupOfAnyString(t *testing.T, s *DB) {
	ctx := context.Background()
	for _, name := range []string{"\x00", "\xff", "a\x00\xffb"} {
		_, err := s.GetUserByUsername(ctx, name)
		require.ErrorIs(t, err, ErrNotFound, "%q", name)
		_, err = s.GetGuildInvite(ctx, name)
		require.ErrorIs(t, err, ErrNotFound, "%q", name)
	}
	require.NoError(t, s.PutSetting(ctx, "k", []byte{0, 0xff}), "bytes are bytes")
	v, err := s.GetSetting(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0xff}, v)
}

// Concurrent approvals of one device request, as two nodes may make them: exactly one is
// recorded, and the stored request is the winner's; consuming it happens once too.
func TestDeviceCodeAnswersOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		hash := []byte("device-code-hash")
		require.NoError(t, s.InsertDeviceCode(ctx, &DeviceCode{Hash: hash, UserCode: "ABCD-EFGH", AppID: 1,
			Scopes: []string{"openid"}, Status: DevicePending, Interval: 5, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}))
		const approvers = 8
		errs := make([]error, approvers)
		var wg sync.WaitGroup
		for i := range approvers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.WithTx(ctx, func(tx Store) error {
					d, err := tx.GetDeviceCode(ctx, hash)
					if err != nil {
						return err
					}
					d.Status, d.UserID, d.GrantedScopes = DeviceApproved, uint64(100+i), []string{"openid"}
					return tx.UpdateDeviceCode(ctx, d, DevicePending)
				})
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "approvals %d and %d both recorded", winner, i)
				winner = i
			} else {
				require.ErrorIs(t, err, ErrConflict)
			}
		}
		require.NotEqual(t, -1, winner, "one approval recorded")
		d, err := s.GetDeviceCode(ctx, hash)
		require.NoError(t, err)
		assert.Equal(t, DeviceApproved, d.Status)
		assert.Equal(t, uint64(100+winner), d.UserID, "the stored answer is the winner's")

		d.Status = DeviceConsumed
		require.NoError(t, s.UpdateDeviceCode(ctx, d, DeviceApproved))
		require.ErrorIs(t, s.UpdateDeviceCode(ctx, d, DeviceApproved), ErrConflict, "consumed once")
	})
}

// A clone of an application shares no slice with it, its byte slices sharing one array of their
// own; a nil slice stays nil, as slices.Clone keeps it.
func TestApplicationCloneSharesNothing(t *testing.T) {
	a := &Application{ID: 1, RedirectURIs: []string{"http://127.0.0.1/cb"},
		ClientSecretHash: []byte{1, 2, 3}, BotTokenHash: []byte{4, 5}, WebhookKey: nil}
	c := a.clone()
	require.Equal(t, a, c)
	c.ClientSecretHash = append(c.ClientSecretHash, 9)
	c.BotTokenHash[0] = 7
	c.RedirectURIs[0] = "x"
	assert.Equal(t, []byte{1, 2, 3}, a.ClientSecretHash)
	assert.Equal(t, []byte{4, 5}, a.BotTokenHash)
	assert.Equal(t, []byte{7, 5}, c.BotTokenHash, "an append to one clone's slice does not reach the next")
	assert.Equal(t, "http://127.0.0.1/cb", a.RedirectURIs[0])
	assert.Nil(t, c.WebhookKey)
	empty := (&Application{ClientSecretHash: []byte{}}).clone()
	assert.NotNil(t, empty.ClientSecretHash)
	assert.Empty(t, empty.ClientSecretHash)
}

// An application whose byte slices do not fit beside its copy still gets a copy sharing nothing
// with it.
func TestApplicationCloneOfLongSlices(t *testing.T) {
	long := make([]byte, appBytes+1)
	long[0] = 1
	a := &Application{ID: 1, ClientSecretHash: long, WebhookKey: []byte{2}}
	c := a.clone()
	require.Equal(t, a, c)
	c.ClientSecretHash[0] = 9
	c.WebhookKey[0] = 8
	assert.Equal(t, byte(1), a.ClientSecretHash[0])
	assert.Equal(t, []byte{2}, a.WebhookKey)
}

// The memo's copies cost one allocation each for the token endpoint's application and bot
// authorization.
func TestCloneAllocations(t *testing.T) {
	a := &Application{ID: 1, RedirectURIs: []string{}, ClientSecretHash: make([]byte, 32),
		BotTokenHash: make([]byte, 32), WebhookKey: make([]byte, 32)}
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _ = a.clone() }))
	auth := &Authorization{ID: 1, Scopes: []string{"bot", "applications.commands"}}
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _ = auth.clone() }))
}

// A clone of an authorization shares no slice with it, however many scopes it has; nil scopes
// stay nil and empty ones empty, as slices.Clone keeps them.
func TestAuthorizationCloneSharesNothing(t *testing.T) {
	for _, scopes := range [][]string{nil, {}, {"identify"}, {"a", "b", "c", "d"}, {"a", "b", "c", "d", "e"}} {
		a := &Authorization{ID: 1, AppID: 2, UserID: 3, Scopes: slices.Clone(scopes), IntegrationType: -1}
		c := a.clone()
		require.Equal(t, a, c)
		assert.Equal(t, scopes == nil, c.Scopes == nil, "nil stays nil")
		if len(c.Scopes) > 0 {
			c.Scopes[0] = "x"
			assert.Equal(t, scopes[0], a.Scopes[0])
		}
		grown := append(c.Scopes, "y")
		grown[0] = "z"
		assert.Equal(t, scopes, a.Scopes, "an append to the copy does not reach the original")
		if len(c.Scopes) > 0 {
			assert.Equal(t, "x", c.Scopes[0], "nor the copy's own array")
		}
	}
}
