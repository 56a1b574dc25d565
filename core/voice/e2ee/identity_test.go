package e2ee

import (
	"bytes"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdentityIsDeterministicPerSeed(t *testing.T) {
	a, b, c := newIdentity(t, 7), newIdentity(t, 7), newIdentity(t, 8)
	assert.Equal(t, a.Public(), b.Public())
	assert.NotEqual(t, a.Public(), c.Public())
	assert.Equal(t, testCallID, a.CallID())
}

func TestNewIdentityRefuses(t *testing.T) {
	_, err := NewIdentity(nil, seeded(1))
	assert.Error(t, err, "empty call id")
	_, err = NewIdentity(make([]byte, maxCallID+1), seeded(1))
	assert.Error(t, err, "call id too long")
	_, err = NewIdentity(testCallID, iotest.ErrReader(assert.AnError))
	assert.ErrorIs(t, err, assert.AnError)
	_, err = NewIdentity(testCallID, bytes.NewReader(make([]byte, 40)))
	assert.Error(t, err, "short randomness")
}

func TestPublicKeysRoundTrip(t *testing.T) {
	pk := newIdentity(t, 3).Public()
	b := pk.Bytes()
	require.Len(t, b, PublicKeysSize)
	assert.Equal(t, Suite, b[0])

	got, err := ParsePublicKeys(b)
	require.NoError(t, err)
	assert.Equal(t, pk, got)

	m, err := pk.MarshalBinary()
	require.NoError(t, err)
	var u PublicKeys
	require.NoError(t, u.UnmarshalBinary(m))
	assert.Equal(t, pk, u)
	assert.False(t, u.IsZero())
	assert.True(t, PublicKeys{}.IsZero())
}

func TestParsePublicKeysRefusesGarbage(t *testing.T) {
	good := newIdentity(t, 3).Public().Bytes()
	with := func(kem []byte) []byte {
		b := bytes.Clone(good)
		copy(b[1:33], kem)
		return b
	}
	// Little-endian u-coordinates of X25519 points of small order.
	u1 := make([]byte, 32)
	u1[0] = 1
	order8 := []byte{0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
		0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00}
	pMinus1 := bytes.Repeat([]byte{0xff}, 32)
	pMinus1[0], pMinus1[31] = 0xec, 0x7f
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"one short", good[:PublicKeysSize-1]},
		{"one long", append(bytes.Clone(good), 0)},
		{"suite 0", append([]byte{0}, good[1:]...)},
		{"suite 2", append([]byte{2}, good[1:]...)},
		{"x25519 zero", with(make([]byte, 32))},
		{"x25519 one", with(u1)},
		{"x25519 order 8", with(order8)},
		{"x25519 p-1", with(pMinus1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePublicKeys(tt.in)
			assert.ErrorIs(t, err, ErrMalformed)
			var pk PublicKeys
			assert.Error(t, pk.UnmarshalBinary(tt.in))
			assert.True(t, pk.IsZero(), "a refused parse leaves the value unchanged")
		})
	}
}
