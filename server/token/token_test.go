package token

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/secret"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// setup opens an in-memory store with authorization 1 (application 10, user 20) and returns it
// with the time of the test and the ids of its tokens.
func setup(t *testing.T) (context.Context, *store.DB, time.Time, *store.Authorization, *snowflake.Generator) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := &store.Authorization{ID: 1, AppID: 10, UserID: 20, Scopes: []string{"identify"}, CreatedAt: now}
	require.NoError(t, st.PutAuthorization(ctx, a))
	return ctx, st, now, a, snowflake.New(clock.NewFake(now), 0)
}

// What a grant may do (RFC 9700 4.14.2): a refresh token is used once and its second
// presentation is told apart from an unknown token; a revoked grant issues nothing and its
// tokens are gone.
func TestGrantRules(t *testing.T) {
	ctx, st, now, a, ids := setup(t)
	require.NoError(t, NewGrant(ctx, st, 5, now, 10, 20))

	first, err := Issue(ctx, st, ids, now, a, Options{Refresh: true, Grant: 5})
	require.NoError(t, err)
	used, err := UseRefresh(ctx, st, now, first.Refresh)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), used.GrantID)
	again, err := UseRefresh(ctx, st, now, first.Refresh)
	require.ErrorIs(t, err, ErrReused)
	assert.Equal(t, uint64(5), again.GrantID, "a reuse names its grant")
	_, err = Lookup(ctx, st, now, first.Refresh, store.RefreshToken)
	assert.ErrorIs(t, err, ErrInvalid, "a used refresh token is not valid")
	_, err = UseRefresh(ctx, st, now, "unknown")
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = UseRefresh(ctx, st, now, first.Access)
	assert.ErrorIs(t, err, ErrInvalid, "an access token is no refresh token")
	_, err = UseRefresh(ctx, st, now.Add(RefreshTTL), first.Refresh)
	assert.ErrorIs(t, err, ErrInvalid, "expired")

	second, err := Issue(ctx, st, ids, now, a, Options{Refresh: true, Grant: 5})
	require.NoError(t, err)
	g, err := RevokeGrant(ctx, st, now, 5)
	require.NoError(t, err)
	assert.Equal(t, uint64(20), g.UserID)
	for _, tok := range []string{second.Access, first.Access} {
		_, err = Lookup(ctx, st, now, tok, store.AccessToken)
		assert.ErrorIs(t, err, ErrInvalid, "an access token of the revoked grant")
	}
	_, err = Issue(ctx, st, ids, now, a, Options{Refresh: true, Grant: 5})
	assert.ErrorIs(t, err, ErrGrantRevoked, "a revoked grant issues nothing")
	_, err = RevokeGrant(ctx, st, now, 0)
	assert.ErrorIs(t, err, store.ErrNotFound, "grant 0 is none")
}

// A token is its row's id and a secret: it is found by the id and taken only when its secret
// matches; a token of the format before (no id) is still found by its hash until it expires.
func TestTokenFormat(t *testing.T) {
	ctx, st, now, a, ids := setup(t)

	first, err := Issue(ctx, st, ids, now, a, Options{})
	require.NoError(t, err)
	second, err := Issue(ctx, st, ids, now, a, Options{})
	require.NoError(t, err)
	for _, tok := range []string{first.Access, second.Access} {
		got, err := Lookup(ctx, st, now, tok, store.AccessToken)
		require.NoError(t, err)
		assert.Equal(t, uint64(20), got.UserID)
		assert.False(t, got.Legacy)
		assert.NotContains(t, string(got.Hash), tok, "the token itself is not stored")
	}
	id1, _, _ := strings.Cut(first.Access, ".")
	id2, sec2, _ := strings.Cut(second.Access, ".")
	assert.Len(t, first.Access, 11+1+43)
	assert.Less(t, id1, id2, "ids grow with each token, in the token's text too")
	for name, tok := range map[string]string{
		"another token's secret": id1 + "." + sec2,
		"a short id":             id1[1:] + "." + sec2,
		"a bad id":               "!!!!!!!!!!!." + sec2,
		"no secret":              id2 + ".",
		"an unknown id":          "AAAAAAAAAAA." + sec2,
		"the secret alone":       sec2,
		"empty":                  "",
	} {
		_, err := Lookup(ctx, st, now, tok, store.AccessToken)
		assert.ErrorIs(t, err, ErrInvalid, name)
		_, err = UseRefresh(ctx, st, now, tok)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}

	// Tokens of the format before: found by the hash of the whole token.
	legacyAccess, legacyRefresh := secret.Token(), secret.Token()
	for i, l := range []struct{ tok, kind string }{{legacyAccess, store.AccessToken}, {legacyRefresh, store.RefreshToken}} {
		require.NoError(t, st.InsertToken(ctx, &store.Token{ID: uint64(i + 1), Hash: secret.Hash(l.tok), Legacy: true,
			Kind: l.kind, AuthorizationID: 1, AppID: 10, UserID: 20, Scopes: a.Scopes, ExpiresAt: now.Add(time.Hour), CreatedAt: now}))
	}
	got, err := Lookup(ctx, st, now, legacyAccess, store.AccessToken)
	require.NoError(t, err)
	assert.True(t, got.Legacy)
	_, err = Lookup(ctx, st, now.Add(time.Hour), legacyAccess, store.AccessToken)
	assert.ErrorIs(t, err, ErrInvalid, "an expired legacy token")
	used, err := UseRefresh(ctx, st, now, legacyRefresh)
	require.NoError(t, err, "a legacy refresh token is used once")
	assert.Equal(t, uint64(2), used.ID)
	_, err = UseRefresh(ctx, st, now, legacyRefresh)
	assert.ErrorIs(t, err, ErrReused)
	enc := base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, 1))
	_, err = Lookup(ctx, st, now, enc+"."+legacyAccess, store.AccessToken)
	assert.ErrorIs(t, err, ErrInvalid, "a legacy row is not found by its id with the old token as the secret")
}

// countingStore counts the token reads that reach the store.
type countingStore struct {
	store.Store
	reads int
}

func (s *countingStore) GetToken(ctx context.Context, id uint64) (*store.Token, error) {
	s.reads++
	return s.Store.GetToken(ctx, id)
}

func (s *countingStore) GetLegacyToken(ctx context.Context, hash []byte) (*store.Token, error) {
	s.reads++
	return s.Store.GetLegacyToken(ctx, hash)
}

// countedAuth issues an access token valid for an hour and returns it with an Auth whose store
// counts its token reads, and whose fake clock starts at the token's issue.
func countedAuth(t *testing.T) (context.Context, Issued, *countingStore, *clock.Fake, Auth) {
	ctx, db, now, a, ids := setup(t)
	issued, err := Issue(ctx, db, ids, now, a, Options{ExpiresAt: now.Add(time.Hour)})
	require.NoError(t, err)
	st := &countingStore{Store: db}
	clk := clock.NewFake(now)
	return ctx, issued, st, clk, Auth{Store: st, Clock: clk}
}

// A request carrying a gateway session's memo reads the session's token once; the memo is
// checked again for expiry, and a request without one reads the store every time.
func TestBearerSessionMemo(t *testing.T) {
	_, issued, st, clk, auth := countedAuth(t)
	request := func(memo *httpx.SessionMemo, tok string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/users/@me", nil)
		if memo != nil {
			r = r.WithContext(httpx.WithSessionMemo(r.Context(), memo))
		}
		r.Header.Set("Authorization", "Bearer "+tok)
		return r
	}

	var memo httpx.SessionMemo
	for range 3 {
		got, err := auth.Bearer(request(&memo, issued.Access))
		require.NoError(t, err)
		assert.Equal(t, uint64(20), got.UserID)
	}
	assert.Equal(t, 1, st.reads, "store reads with a session memo")
	_, err := auth.Bearer(request(&memo, "another"))
	require.Error(t, err, "a credential the memo does not hold is read and refused")
	assert.Equal(t, 2, st.reads)
	for range 2 {
		_, err = auth.Bearer(request(nil, issued.Access))
		require.NoError(t, err)
	}
	assert.Equal(t, 4, st.reads, "store reads without a memo")

	clk.Advance(time.Hour)
	_, err = auth.Bearer(request(&memo, issued.Access))
	require.Error(t, err, "an expired token is refused, memo or not")
}

// SessionBearer gives the token a session's memo holds, the same for each of the session's
// requests and without a read of the store; BearerOf gives a copy of it, which its caller may
// modify without changing what the session's next requests get.
func TestSessionBearerShared(t *testing.T) {
	ctx, issued, st, clk, auth := countedAuth(t)
	bearer := "Bearer " + issued.Access
	var memo httpx.SessionMemo
	mctx := httpx.WithSessionMemo(ctx, &memo)

	_, ok := auth.SessionBearer(mctx, bearer)
	require.False(t, ok, "an empty memo")
	first, err := auth.BearerOf(mctx, bearer)
	require.NoError(t, err)
	first.UserID = 99 // the caller's own copy
	shared, ok := auth.SessionBearer(mctx, bearer)
	require.True(t, ok)
	assert.Equal(t, uint64(20), shared.UserID, "the memo's token is not the one BearerOf gave")
	again, ok := auth.SessionBearer(mctx, bearer)
	require.True(t, ok)
	assert.Same(t, shared, again, "the session's requests share the memo's token")
	copied, err := auth.BearerOf(mctx, bearer)
	require.NoError(t, err)
	assert.NotSame(t, shared, copied, "BearerOf copies it")
	assert.Equal(t, 1, st.reads, "one read of the store for the session")

	_, ok = auth.SessionBearer(mctx, "Bearer another")
	assert.False(t, ok, "another credential")
	_, ok = auth.SessionBearer(ctx, bearer)
	assert.False(t, ok, "no memo")
	clk.Advance(time.Hour)
	_, ok = auth.SessionBearer(mctx, bearer)
	assert.False(t, ok, "an expired token")
}

type countIDs struct{ n uint64 }

func (c *countIDs) Next() uint64 { c.n++; return c.n }

// BenchmarkMint is the making of a token the endpoint does at every request.
func BenchmarkMint(b *testing.B) {
	ids := &countIDs{n: 1 << 60}
	b.ReportAllocs()
	for b.Loop() {
		var t store.Token
		mint(ids, &t)
	}
}
