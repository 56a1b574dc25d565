package e2ee

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

var testCallID = []byte("call-1234")

// seeded returns a deterministic randomness source for seed.
func seeded(seed uint64) io.Reader {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	return rand.NewChaCha8(s)
}

// newIdentity returns the identity of call testCallID made from seed.
func newIdentity(t testing.TB, seed uint64) *Identity {
	t.Helper()
	id, err := NewIdentity(testCallID, seeded(seed))
	require.NoError(t, err)
	return id
}

// newKey returns a sender key of generation gen made from seed.
func newKey(t testing.TB, seed uint64, gen uint32) SenderKey {
	t.Helper()
	k, err := NewSenderKey(seeded(seed), gen)
	require.NoError(t, err)
	return k
}

// pair returns a sealer for a fresh identity and an opener for its frames, both holding key.
func pair(t testing.TB, key SenderKey) (*Identity, *Sealer, *Opener) {
	t.Helper()
	id := newIdentity(t, 1)
	s, err := NewSealer(id, key)
	require.NoError(t, err)
	o := NewOpener(testCallID, id.Public(), 0)
	require.NoError(t, o.AddKey(key, 0))
	return id, s, o
}

// seal seals payload under header and fails the test on error.
func seal(t testing.TB, s *Sealer, header, payload []byte) []byte {
	t.Helper()
	f, err := s.Seal(nil, header, payload)
	require.NoError(t, err)
	return f
}

// opusFrame is an 80-byte stand-in for a 20 ms Opus frame at 32 kbps.
func opusFrame(i int) []byte {
	b := make([]byte, 80)
	for j := range b {
		b[j] = byte(i*7 + j)
	}
	return b
}
