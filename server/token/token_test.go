package token

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
)

// What a grant may do (RFC 9700 4.14.2): a refresh token is used once and its second
// presentation is told apart from an unknown token; a revoked grant issues nothing and its
// tokens are gone.
func TestGrantRules(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := &store.Authorization{ID: 1, AppID: 10, UserID: 20, Scopes: []string{"identify"}, CreatedAt: now}
	require.NoError(t, st.PutAuthorization(ctx, a))
	require.NoError(t, NewGrant(ctx, st, 5, now, 10, 20))

	first, err := Issue(ctx, st, now, a, Options{Refresh: true, Grant: 5})
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

	second, err := Issue(ctx, st, now, a, Options{Refresh: true, Grant: 5})
	require.NoError(t, err)
	g, err := RevokeGrant(ctx, st, now, 5)
	require.NoError(t, err)
	assert.Equal(t, uint64(20), g.UserID)
	for _, tok := range []string{second.Access, first.Access} {
		_, err = Lookup(ctx, st, now, tok, store.AccessToken)
		assert.ErrorIs(t, err, ErrInvalid, "an access token of the revoked grant")
	}
	_, err = Issue(ctx, st, now, a, Options{Refresh: true, Grant: 5})
	assert.ErrorIs(t, err, ErrGrantRevoked, "a revoked grant issues nothing")
	_, err = RevokeGrant(ctx, st, now, 0)
	assert.ErrorIs(t, err, store.ErrNotFound, "grant 0 is none")
}
