package store

import (
	"context"
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
		require.NoError(t, s.insertTokenRows(ctx, tokens))
		for _, want := range tokens {
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
