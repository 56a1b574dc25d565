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
