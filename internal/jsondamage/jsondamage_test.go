package jsondamage

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// Damage changes its copy by one to three bytes and never its input.
func TestDamage(t *testing.T) {
	base := []byte(`{"a":[1,"x",true]}`)
	orig := bytes.Clone(base)
	r := rand.New(rand.NewSource(1))
	changed := 0
	for n := 0; n < 1000; n++ {
		d := Damage(r, base)
		require.InDelta(t, len(base), len(d), 3)
		if !bytes.Equal(d, base) {
			changed++
		}
	}
	require.Equal(t, orig, base)
	require.Greater(t, changed, 900) // a byte replaced by itself is the only way to change nothing
}
