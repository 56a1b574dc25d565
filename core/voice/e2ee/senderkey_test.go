package e2ee

import (
	"bytes"
	"testing"
	"testing/cryptotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSenderKeyRoundTrip(t *testing.T) {
	cryptotest.SetGlobalRandom(t, 1) // HPKE's ephemeral keys
	alice, bob := newIdentity(t, 1), newIdentity(t, 2)
	key := newKey(t, 10, 3)

	msg, err := alice.SealKeyFor(bob.Public(), key)
	require.NoError(t, err)
	assert.Len(t, msg, KeyMessageSize)
	assert.False(t, bytes.Contains(msg, key.Secret[:]), "the key travels encrypted")

	got, err := bob.OpenKey(alice.Public(), msg)
	require.NoError(t, err)
	assert.Equal(t, key, got)
}

func TestNewSenderKeyRefusesGenerationZero(t *testing.T) {
	_, err := NewSenderKey(seeded(1), 0)
	assert.Error(t, err)
	_, err = newIdentity(t, 1).SealKeyFor(newIdentity(t, 2).Public(), SenderKey{})
	assert.Error(t, err)
}

func TestOpenKeyRefuses(t *testing.T) {
	cryptotest.SetGlobalRandom(t, 2)
	alice, bob, carol := newIdentity(t, 1), newIdentity(t, 2), newIdentity(t, 3)
	msg, err := alice.SealKeyFor(bob.Public(), newKey(t, 10, 3))
	require.NoError(t, err)
	otherCall, err := NewIdentity([]byte("call-9999"), seeded(2))
	require.NoError(t, err)

	tests := []struct {
		name   string
		opener *Identity
		sender PublicKeys
		msg    []byte
		want   error
	}{
		{"wrong recipient", carol, alice.Public(), msg, ErrBadSignature},
		{"claimed by another sender", bob, carol.Public(), msg, ErrBadSignature},
		{"same keys in another call", otherCall, alice.Public(), msg, ErrBadSignature},
		{"short", bob, alice.Public(), msg[:KeyMessageSize-1], ErrMalformed},
		{"long", bob, alice.Public(), append(bytes.Clone(msg), 0), ErrMalformed},
		{"generation 0", bob, alice.Public(), append([]byte{0, 0, 0, 0}, msg[4:]...), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.opener.OpenKey(tt.sender, tt.msg)
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// TestOpenKeyRefusesEveryFlippedBit flips each bit of a key message in turn.
func TestOpenKeyRefusesEveryFlippedBit(t *testing.T) {
	cryptotest.SetGlobalRandom(t, 3)
	alice, bob := newIdentity(t, 1), newIdentity(t, 2)
	msg, err := alice.SealKeyFor(bob.Public(), newKey(t, 10, 3))
	require.NoError(t, err)
	for i := range msg {
		bad := bytes.Clone(msg)
		bad[i] ^= 1 << (i % 8)
		_, err := bob.OpenKey(alice.Public(), bad)
		assert.Error(t, err, "byte %d", i)
	}
}

// TestWrongRecipientCannotDecrypt shows that the HPKE layer alone refuses: even a recipient who
// skips the signature check cannot decrypt a key sealed to someone else.
func TestWrongRecipientCannotDecrypt(t *testing.T) {
	cryptotest.SetGlobalRandom(t, 4)
	alice, bob, carol := newIdentity(t, 1), newIdentity(t, 2), newIdentity(t, 3)
	key := newKey(t, 10, 3)
	msg, err := alice.SealKeyFor(bob.Public(), key)
	require.NoError(t, err)
	sealed := msg[4 : KeyMessageSize-64]
	for _, info := range [][]byte{
		keyInfo(testCallID, alice.Public(), carol.Public(), 3), // carol, honestly
		keyInfo(testCallID, alice.Public(), bob.Public(), 3),   // carol pretending to be bob
	} {
		_, err := hpkeOpen(carol, info, sealed)
		assert.Error(t, err)
	}
	secret, err := hpkeOpen(bob, keyInfo(testCallID, alice.Public(), bob.Public(), 3), sealed)
	require.NoError(t, err)
	assert.Equal(t, key.Secret[:], secret)
}
