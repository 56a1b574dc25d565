package store

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenInsertTexts(t *testing.T) {
	for n := 1; n <= tokenGroups.Max; n++ {
		want := `INSERT INTO tokens (` + tokenColumns + `) VALUES ` + strings.Repeat(tokenPlaceholders+",", n-1) + tokenPlaceholders
		require.Equal(t, want, tokenInsert(n), "%d rows", n)
	}
}

// tokenArgs are the values of t's columns, in tokenColumns' order, as the database/sql
// conversions take them.
func tokenArgs(t *Token) []any {
	return []any{t.ID, t.Hash, b2i(t.Legacy), t.Kind, t.AuthorizationID, t.AppID, t.UserID, joinScopes(t.Scopes),
		ts(t.ExpiresAt), ts(t.CreatedAt), t.GrantID, ts(t.UsedAt)}
}

// A group's rows carry each token's own values, whichever it shares with the token before it,
// on either store.
func TestTokenGroupRows(t *testing.T) {
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tokens := []*Token{testToken(1, exp), testToken(2, exp), testToken(3, exp), testToken(4, exp), testToken(5, exp)}
	tokens[1].Scopes = []string{"identify", "email"}
	tokens[2].Kind, tokens[2].GrantID, tokens[2].UsedAt = RefreshToken, 9, exp.Add(-time.Minute)
	tokens[3].AuthorizationID, tokens[3].AppID, tokens[3].UserID, tokens[3].Legacy = 8, 9, 10, true
	tokens[4].ExpiresAt = exp.Add(time.Hour)

	args := tokenRowsArgs(tokens)
	for i, tok := range tokens {
		want := tokenArgs(tok)
		for j, v := range args[i*tokenArgCount : (i+1)*tokenArgCount] {
			switch w := want[j].(type) {
			case uint64:
				assert.Equal(t, int64(w), v, "token %d, column %d", i, j)
			case int:
				assert.Equal(t, int64(w), v, "token %d, column %d", i, j)
			default:
				assert.Equal(t, w, v, "token %d, column %d", i, j)
			}
		}
	}

	forEachStore(t, func(t *testing.T, s *DB) {
		ctx := context.Background()
		insert := s.insertTokenRows
		if s.group == nil { // PostgreSQL: the values go in binary, on the connection's protocol
			insert = s.insertTokenRowsPostgres
		}
		require.NoError(t, insert(ctx, tokens))
		// A token alone: its own statement, on either store (as in a transaction).
		alone := testToken(6, exp)
		alone.Kind, alone.GrantID, alone.UsedAt, alone.Legacy = RefreshToken, 7, exp.Add(-time.Hour), true
		require.NoError(t, s.insertToken(ctx, alone))
		for _, want := range append(tokens, alone) {
			got, err := s.readToken(ctx, `id=?`, want.ID)
			require.NoError(t, err)
			assert.Equal(t, want.Hash, got.Hash)
			assert.Equal(t, want.Legacy, got.Legacy)
			assert.Equal(t, want.Kind, got.Kind)
			assert.Equal(t, []uint64{want.AuthorizationID, want.AppID, want.UserID, want.GrantID},
				[]uint64{got.AuthorizationID, got.AppID, got.UserID, got.GrantID})
			assert.Equal(t, want.Scopes, got.Scopes)
			assert.True(t, want.ExpiresAt.Equal(got.ExpiresAt) && want.CreatedAt.Equal(got.CreatedAt) &&
				want.UsedAt.Equal(got.UsedAt), "token %d's times", want.ID)
		}
	})
}

// PostgreSQL's INSERT of n tokens is that of the most cut after its nth row, with each
// placeholder cast to its column's type, under a name of its own.
func TestPostgresTokenInsertTexts(t *testing.T) {
	row := func(i int) string {
		var cols []string
		for j, typ := range pgTokenTypes {
			cols = append(cols, "$"+strconv.Itoa(i*tokenArgCount+j+1)+"::"+typ)
		}
		return "(" + strings.Join(cols, ",") + ")"
	}
	names := map[string]bool{}
	want := `INSERT INTO tokens (` + tokenColumns + `) VALUES ` + row(0)
	for n := 1; n <= tokenGroups.Max; n++ {
		if n > 1 {
			want += "," + row(n-1)
		}
		name, text := pgTokenInsert(n)
		require.Equal(t, want, text, "%d rows", n)
		assert.False(t, names[name], "%d rows: name %s taken", n, name)
		names[name] = true
	}
}

// A group with a taken id stores none of its tokens on PostgreSQL, and the writer then gives
// each caller its own token's outcome.
func TestPostgresTokenGroupTakenID(t *testing.T) {
	s := openPostgres(t)
	ctx := context.Background()
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.insertTokenRowsPostgres(ctx, []*Token{testToken(2, exp)}))
	group := []*Token{testToken(1, exp), testToken(2, exp), testToken(3, exp)}
	err := s.insertTokenRowsPostgres(ctx, group)
	require.True(t, s.isUnique(err), "%v", err)
	_, err = s.readToken(ctx, `id=?`, uint64(1))
	require.ErrorIs(t, err, ErrNotFound, "the group's statement stored none of its tokens")

	errs := make([]error, len(group))
	require.NoError(t, s.insertTokensPostgres(ctx, group, errs))
	assert.NoError(t, errs[0])
	assert.True(t, s.isUnique(errs[1]), "%v", errs[1])
	assert.NoError(t, errs[2])
	for _, id := range []uint64{1, 3} {
		_, err := s.readToken(ctx, `id=?`, id)
		assert.NoError(t, err, "token %d", id)
	}
}

// A group of one client's tokens boxes their shared values once: two allocations a token beyond
// the first (its id and its hash), where each of its 12 values took one or more.
func TestTokenGroupArgsAllocations(t *testing.T) {
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tokens := make([]*Token, 8)
	for i := range tokens {
		tokens[i] = testToken(uint64(1000+i), exp)
	}
	allocs := testing.AllocsPerRun(100, func() { tokenRowsArgs(tokens) })
	assert.LessOrEqual(t, allocs, float64(1+10+2*7))
}
