package wire

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// agreeTokenResponse fails unless AppendJSON writes exactly encoding/json's bytes for r.
func agreeTokenResponse(t *testing.T, r TokenResponse) {
	t.Helper()
	want, err := json.Marshal(r)
	require.NoError(t, err)
	require.Equal(t, string(want), string(r.AppendJSON(nil)))
	require.Equal(t, "prefix"+string(want), string(r.AppendJSON([]byte("prefix"))), "AppendJSON appends")
}

// AppendJSON writes exactly the bytes encoding/json writes, with the optional fields absent and
// present and every string tricky in turn.
func TestTokenResponseEncodesAsEncodingJSON(t *testing.T) {
	agreeTokenResponse(t, TokenResponse{})
	agreeTokenResponse(t, TokenResponse{AccessToken: "FeE_hJeAAAE.JGXW34Oo", TokenType: "Bearer", ExpiresIn: 604800, Scope: "identify"})
	for i, s := range tricky {
		agreeTokenResponse(t, TokenResponse{AccessToken: s, TokenType: s, ExpiresIn: int64(i) - 3, RefreshToken: s, Scope: s, IDToken: s})
	}
	for _, n := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
		agreeTokenResponse(t, TokenResponse{ExpiresIn: n, RefreshToken: "r", IDToken: "i"})
	}
}

func FuzzTokenResponseEncoding(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, s, s, int64(len(s)))
	}
	f.Fuzz(func(t *testing.T, access, refresh, scope string, expires int64) {
		agreeTokenResponse(t, TokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: expires, RefreshToken: refresh, Scope: scope, IDToken: refresh})
	})
}
