package token

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/store/pgtest"
)

// TestMain stops the PostgreSQL that pgtest starts for the tests across nodes.
func TestMain(m *testing.M) { pgtest.Main(m) }

// A client_credentials token is signed: issuing it writes no row, and it is found by its
// claims, which carry what the row did, while its authorization stands.
func TestSignedTokenIssueAndUse(t *testing.T) {
	ctx, st, now, a, ids := setup(t)
	a.Scopes = []string{"identify", "applications.commands"}
	require.NoError(t, st.PutAuthorization(ctx, a))
	maxBefore, err := st.MaxID(ctx)
	require.NoError(t, err)

	issued, err := Issue(ctx, st, ids, now, a, Options{Signed: true, ExpiresAt: now.Add(time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, issued.Refresh)
	assert.Equal(t, a.Scopes, issued.Scopes)
	assert.Equal(t, 2, strings.Count(issued.Access, "."), "id.claims.mac")
	assert.LessOrEqual(t, len(issued.Access), MaxSignedLen)

	got, err := Lookup(ctx, st, now, issued.Access, store.AccessToken)
	require.NoError(t, err)
	assert.Equal(t, store.Token{ID: got.ID, Signed: true, Kind: store.AccessToken, AuthorizationID: a.ID,
		AppID: a.AppID, UserID: a.UserID, Scopes: a.Scopes, ExpiresAt: now.Add(time.Hour), CreatedAt: now}, *got)
	enc, _, _ := strings.Cut(issued.Access, ".")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	require.NoError(t, err)
	assert.Equal(t, got.ID, binary.BigEndian.Uint64(raw), "the id is the token's snowflake, in its text")
	assert.Positive(t, got.ID)

	_, err = st.GetToken(ctx, got.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "a signed token has no row")
	maxAfter, err := st.MaxID(ctx)
	require.NoError(t, err)
	assert.Equal(t, maxBefore, maxAfter, "nothing was written")

	second, err := Issue(ctx, st, ids, now, a, Options{Signed: true})
	require.NoError(t, err)
	assert.NotEqual(t, issued.Access, second.Access)
	assert.Equal(t, now.Add(AccessTTL), second.ExpiresAt)

	for name, o := range map[string]Options{"with a refresh token": {Signed: true, Refresh: true}, "in a grant": {Signed: true, Grant: 5}} {
		_, err := Issue(ctx, st, ids, now, a, o)
		assert.Error(t, err, name)
	}
	a.Scopes = []string{strings.Repeat("s", maxScopesLen+1)}
	_, err = Issue(ctx, st, ids, now, a, Options{Signed: true})
	assert.Error(t, err, "claims over the bound")
}

// keyStore is a store whose TokenKey is another's.
type keyStore struct {
	store.Store
	key []byte
}

func (s keyStore) TokenKey() []byte { return s.key }

// A signed token that is forged, altered, cut, padded, of another key, expired or of the wrong
// kind is refused, as an unknown token is.
func TestSignedTokenRefused(t *testing.T) {
	ctx, st, now, a, ids := setup(t)
	issued, err := Issue(ctx, st, ids, now, a, Options{Signed: true, ExpiresAt: now.Add(time.Hour)})
	require.NoError(t, err)
	tok := issued.Access
	encID, rest, _ := strings.Cut(tok, ".")
	encClaims, encMAC, _ := strings.Cut(rest, ".")
	claims, err := base64.RawURLEncoding.DecodeString(encClaims)
	require.NoError(t, err)
	alter := func(f func(c []byte)) string {
		c := append([]byte(nil), claims...)
		f(c)
		return encID + "." + base64.RawURLEncoding.EncodeToString(c) + "." + encMAC
	}
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	// respell sets the unused low bits of a part's last character: the same bytes, spelled
	// otherwise (a strict decoding refuses it).
	respell := func(s string) string {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		i := strings.IndexByte(alphabet, s[len(s)-1])
		return s[:len(s)-1] + string(alphabet[i^1])
	}
	// oversized is a token with a valid MAC whose claims are over the bounds.
	oversized := func() string {
		c := append(append([]byte(nil), claims...), " "+strings.Repeat("s", maxScopesLen)...)
		text := encID + "." + base64.RawURLEncoding.EncodeToString(c)
		return text + "." + base64.RawURLEncoding.EncodeToString(signedMAC(st.TokenKey(), []byte(text), nil))
	}()
	otherKey := make([]byte, store.TokenKeySize)
	other := &store.Token{Kind: store.AccessToken, AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID,
		Scopes: a.Scopes, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	otherTok, err := sign(otherKey, ids, other)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		tok  string
		at   time.Time
		kind string
		st   store.Store
	}{
		{name: "forged MAC", tok: encID + "." + encClaims + "." + flip(encMAC, 5)},
		{name: "another app in the claims", tok: alter(func(c []byte) { c[16]++ })},
		{name: "another expiry in the claims", tok: alter(func(c []byte) { c[33]++ })},
		{name: "more scopes in the claims", tok: encID + "." + base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), claims...), " guilds"...)) + "." + encMAC},
		{name: "another id", tok: flip(encID, 3) + "." + encClaims + "." + encMAC},
		{name: "truncated", tok: tok[:len(tok)-1]},
		{name: "truncated claims", tok: encID + "." + encClaims[:len(encClaims)-4] + "." + encMAC},
		{name: "oversized", tok: tok + strings.Repeat("A", MaxSignedLen)},
		{name: "oversized claims under a valid MAC", tok: oversized},
		{name: "the MAC spelled otherwise", tok: encID + "." + encClaims + "." + respell(encMAC)},
		{name: "the id spelled otherwise", tok: respell(encID) + "." + encClaims + "." + encMAC},
		{name: "a dot more", tok: tok + "."},
		{name: "padded MAC", tok: tok + "="},
		{name: "another key", tok: otherTok},
		{name: "the key of another store", tok: tok, st: keyStore{Store: st, key: otherKey}},
		{name: "expired", tok: tok, at: now.Add(time.Hour)},
		{name: "as a refresh token", tok: tok, kind: store.RefreshToken},
		{name: "empty parts", tok: ".."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, kind, s := now, store.AccessToken, store.Store(st)
			if !tc.at.IsZero() {
				at = tc.at
			}
			if tc.kind != "" {
				kind = tc.kind
			}
			if tc.st != nil {
				s = tc.st
			}
			_, err := Lookup(ctx, s, at, tc.tok, kind)
			assert.ErrorIs(t, err, ErrInvalid)
		})
	}
	_, err = UseRefresh(ctx, st, now, tok)
	assert.ErrorIs(t, err, ErrInvalid, "a signed token is no refresh token")
	_, err = Lookup(ctx, st, now, tok, store.AccessToken)
	require.NoError(t, err, "the token itself, after all that")
}

// A signed token is refused once its authorization is gone, by every path that deleted a
// token's row: the authorization deleted (the revocation endpoint, RFC 7009, and the console's
// revocation; an unlink, rule AU-7; a ban, rule ST-1: each deletes the authorization), and made
// again under another id. An authorization whose scopes changed keeps its id and its tokens,
// as their rows were kept.
func TestSignedTokenRevokedWithItsAuthorization(t *testing.T) {
	ctx, st, now, a, ids := setup(t)
	issue := func() string {
		issued, err := Issue(ctx, st, ids, now, a, Options{Signed: true})
		require.NoError(t, err)
		return issued.Access
	}
	valid := func(tok string) bool {
		_, err := Lookup(ctx, st, now, tok, store.AccessToken)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
		}
		return err == nil
	}
	first := issue()
	require.True(t, valid(first))

	// Scopes changed: the same authorization (PutAuthorization keeps its id).
	changed := &store.Authorization{ID: 99, AppID: a.AppID, UserID: a.UserID, Scopes: []string{"identify", "email"}, CreatedAt: now}
	require.NoError(t, st.PutAuthorization(ctx, changed))
	require.Equal(t, a.ID, changed.ID)
	assert.True(t, valid(first), "the authorization's scopes changed")

	require.NoError(t, st.DeleteAuthorization(ctx, a.ID))
	assert.False(t, valid(first), "rules AU-7, ST-1: the authorization was deleted")
	_, err := Find(ctx, st, first)
	assert.ErrorIs(t, err, store.ErrNotFound)

	again := &store.Authorization{ID: 2, AppID: a.AppID, UserID: a.UserID, Scopes: a.Scopes, CreatedAt: now}
	require.NoError(t, st.PutAuthorization(ctx, again))
	assert.False(t, valid(first), "the authorization was made again, under another id")
	a = again
	second := issue()
	assert.True(t, valid(second))

	// A token naming another user's authorization (of the same app) is not that user's.
	bob := &store.Authorization{ID: 3, AppID: a.AppID, UserID: 21, Scopes: a.Scopes, CreatedAt: now}
	require.NoError(t, st.PutAuthorization(ctx, bob))
	claims := &store.Token{Kind: store.AccessToken, AuthorizationID: bob.ID, AppID: a.AppID, UserID: a.UserID,
		Scopes: a.Scopes, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	mixed, err := sign(st.TokenKey(), ids, claims)
	require.NoError(t, err)
	assert.False(t, valid(mixed), "an authorization of another user")
}

// A signed token stays valid across a restart: the key is the database's.
func TestSignedTokenSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st, err := store.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	a := &store.Authorization{ID: 1, AppID: 10, UserID: 20, Scopes: []string{"identify"}, CreatedAt: now}
	require.NoError(t, st.PutAuthorization(ctx, a))
	issued, err := Issue(ctx, st, snowflake.New(clock.NewFake(now), 0), now, a, Options{Signed: true})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, err = store.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer st.Close()
	got, err := Lookup(ctx, st, now, issued.Access, store.AccessToken)
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.AuthorizationID)

	other, err := store.OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, other.PutAuthorization(ctx, a))
	_, err = Lookup(ctx, other, now, issued.Access, store.AccessToken)
	assert.ErrorIs(t, err, ErrInvalid, "another database, another key")
}

// parseSigned takes any input without panicking, and a token it accepts is the one sign makes
// of its claims: one spelling per token.
func FuzzParseSigned(f *testing.F) {
	key := make([]byte, store.TokenKeySize)
	key[0] = 1
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ids := &countIDs{n: 1 << 60}
	for _, scopes := range [][]string{nil, {"identify"}, {"identify", "applications.commands"}} {
		tok, err := sign(key, ids, &store.Token{Kind: store.AccessToken, AuthorizationID: 1, AppID: 2, UserID: 3,
			Scopes: scopes, ExpiresAt: now.Add(time.Hour), CreatedAt: now})
		require.NoError(f, err)
		f.Add(tok)
		f.Add(tok[:len(tok)-1])
		f.Add(tok + "A")
	}
	f.Add("..")
	f.Add("AAAAAAAAAAA.AAAA.")
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := parseSigned(key, tok)
		if err != nil {
			return
		}
		id := got.ID
		again, err := sign(key, fixedID(id), got)
		require.NoError(t, err)
		assert.Equal(t, tok, again)
	})
}

// fixedID gives one id.
type fixedID uint64

func (f fixedID) Next() uint64 { return uint64(f) }

// BenchmarkSign is the making of a token the endpoint does at every client_credentials
// request.
func BenchmarkSign(b *testing.B) {
	ids := &countIDs{n: 1 << 60}
	key := make([]byte, store.TokenKeySize)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		t := store.Token{Kind: store.AccessToken, AuthorizationID: 1, AppID: 2, UserID: 3,
			Scopes: []string{"identify", "applications.commands"}, ExpiresAt: now, CreatedAt: now}
		if _, err := sign(key, ids, &t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSigned is the check of a signed token's MAC and claims.
func BenchmarkParseSigned(b *testing.B) {
	ids := &countIDs{n: 1 << 60}
	key := make([]byte, store.TokenKeySize)
	now := time.Now()
	tok, err := sign(key, ids, &store.Token{Kind: store.AccessToken, AuthorizationID: 1, AppID: 2, UserID: 3,
		Scopes: []string{"identify", "applications.commands"}, ExpiresAt: now, CreatedAt: now})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseSigned(key, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// On PostgreSQL, two nodes: a signed token one node issued is checked by the other with the
// same key, and once the other revokes its authorization it is refused on the first at once, as
// a deleted row was; only a read under store.MayBeBehind may be answered from the first node's
// memo until the database's notice arrives, as a token's row was.
func TestSignedTokenAcrossNodes(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t, "", nil)
	open := func(node int) *store.DB {
		st, err := store.OpenPostgres(ctx, dsn, store.PostgresOptions{NodeID: node})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	a, b := open(1), open(2)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	auth := &store.Authorization{ID: 1, AppID: 10, UserID: 20, Scopes: []string{"identify"}, CreatedAt: now}
	require.NoError(t, a.PutAuthorization(ctx, auth))
	issued, err := Issue(ctx, a, snowflake.New(clock.NewFake(now), 1), now, auth, Options{Signed: true})
	require.NoError(t, err)
	for name, st := range map[string]*store.DB{"the issuing node": a, "another node": b} {
		_, err := Lookup(ctx, st, now, issued.Access, store.AccessToken)
		require.NoError(t, err, name)
		_, err = Lookup(store.MayBeBehind(ctx), st, now, issued.Access, store.AccessToken)
		require.NoError(t, err, name)
	}

	require.NoError(t, b.DeleteAuthorization(ctx, auth.ID))
	for name, st := range map[string]*store.DB{"the issuing node": a, "the revoking node": b} {
		_, err := Lookup(ctx, st, now, issued.Access, store.AccessToken)
		assert.ErrorIs(t, err, ErrInvalid, "%s, at once", name)
	}
	_, err = Lookup(store.MayBeBehind(ctx), b, now, issued.Access, store.AccessToken)
	assert.ErrorIs(t, err, ErrInvalid, "the revoking node's memo forgot it")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := Lookup(store.MayBeBehind(ctx), a, now, issued.Access, store.AccessToken)
		assert.ErrorIs(c, err, ErrInvalid)
	}, 10*time.Second, 10*time.Millisecond, "the issuing node's memo, once notified")
}

// ctxStore records the contexts its authorizations are read under.
type ctxStore struct {
	store.Store
	ctxs []context.Context
}

func (s *ctxStore) FindAuthorization(ctx context.Context, appID, userID uint64) (*store.Authorization, error) {
	s.ctxs = append(s.ctxs, ctx)
	return s.Store.FindAuthorization(ctx, appID, userID)
}

// A signed token's authorization is read under the caller's context as it is, as a token's row
// was: a memo answers it on PostgreSQL only when the caller said it may be behind
// (store.MayBeBehind), never because the token is signed.
func TestSignedTokenReadsItsAuthorizationAsARow(t *testing.T) {
	ctx, db, now, a, ids := setup(t)
	issued, err := Issue(ctx, db, ids, now, a, Options{Signed: true})
	require.NoError(t, err)
	st := &ctxStore{Store: db}
	type key struct{}
	for _, c := range []context.Context{context.WithValue(ctx, key{}, 1), store.MayBeBehind(ctx)} {
		_, err := Lookup(c, st, now, issued.Access, store.AccessToken)
		require.NoError(t, err)
		require.NotEmpty(t, st.ctxs)
		assert.True(t, st.ctxs[len(st.ctxs)-1] == c, "the authorization was read under another context")
	}
}
