package secret

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPasswordAndHash(t *testing.T) {
	h, err := HashPassword("correct horse")
	require.NoError(t, err)
	require.True(t, CheckPassword(h, "correct horse"), "password check wrong")
	require.False(t, CheckPassword(h, "wrong"), "password check wrong")
	require.False(t, CheckPassword(nil, ""), "password check wrong")
	tok := Token()
	require.Len(t, tok, 43, "token hash check wrong")
	require.True(t, Matches(Hash(tok), tok), "token hash check wrong")
	require.False(t, Matches(Hash(tok), tok+"x"), "token hash check wrong")
	require.False(t, Matches(nil, tok), "token hash check wrong")
}

func TestNewToken(t *testing.T) {
	tok, hash := NewToken([]byte("AAAAAAAAAAA."))
	require.Len(t, tok, 12+43)
	require.Equal(t, "AAAAAAAAAAA.", tok[:12])
	sec := tok[12:]
	require.Equal(t, Hash(sec), hash, "the hash is the secret's alone, as Hash makes it")
	require.True(t, Matches(hash, sec))
	require.Len(t, hash, 32)
	require.Equal(t, 32, cap(hash), "an append to the hash cannot reach other bytes")
	again, hash2 := NewToken(nil)
	require.Len(t, again, 43)
	require.NotEqual(t, sec, again)
	require.NotEqual(t, hash, hash2)
}

func BenchmarkNewToken(b *testing.B) {
	prefix := []byte("AAAAAAAAAAA.")
	b.ReportAllocs()
	for b.Loop() {
		NewToken(prefix)
	}
}
