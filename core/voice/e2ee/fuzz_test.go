package e2ee

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzOpen feeds arbitrary (header, frame) pairs to a fresh Opener holding the sender's key. Open
// must not panic, and must accept exactly the genuine frames with their own headers.
func FuzzOpen(f *testing.F) {
	key := newKey(f, 1, 1)
	id, s, _ := pair(f, key)
	type genuine struct{ header, payload []byte }
	sealed := map[string]genuine{}
	headers := [][]byte{testHeader, nil, {0x80}}
	for i := range 4 {
		h := headers[i%len(headers)]
		fr := seal(f, s, h, opusFrame(i)[:10*i])
		sealed[string(fr)] = genuine{h, opusFrame(i)[:10*i]}
		f.Add(h, fr)
		bad := bytes.Clone(fr)
		bad[len(bad)/2] ^= 1
		f.Add(h, bad)
	}
	f.Add([]byte{}, []byte{})
	f.Add(testHeader, make([]byte, FrameOverhead))

	f.Fuzz(func(t *testing.T, header, frame []byte) {
		o := NewOpener(testCallID, id.Public(), 0)
		require.NoError(t, o.AddKey(key, 0))
		got, err := o.Open(nil, header, frame, 0)
		g, ok := sealed[string(frame)]
		if err != nil {
			assert.False(t, ok && bytes.Equal(g.header, header), "a genuine frame was refused: %v", err)
			return
		}
		require.True(t, ok, "a frame that was never sealed opened")
		assert.True(t, bytes.Equal(g.header, header), "header")
		assert.True(t, bytes.Equal(g.payload, got), "payload")
		_, err = o.Open(nil, header, frame, 0)
		assert.ErrorIs(t, err, ErrReplay)
	})
}

// FuzzParsePublicKeys: parsing never panics, and what parses encodes back to the same bytes.
func FuzzParsePublicKeys(f *testing.F) {
	good := newIdentity(f, 1).Public().Bytes()
	f.Add(good)
	f.Add(good[:PublicKeysSize-1])
	f.Add(append(bytes.Clone(good), 0))
	f.Add(append([]byte{Suite}, make([]byte, PublicKeysSize-1)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pk, err := ParsePublicKeys(b)
		if err != nil {
			assert.True(t, pk.IsZero())
			return
		}
		assert.Equal(t, b, pk.Bytes())
		_, err = pk.hpkeKey()
		assert.NoError(t, err)
	})
}

// FuzzOpenKey: opening a key message never panics and accepts only messages alice made (HPKE's
// ephemeral keys differ in each fuzz worker, so the seed message need not be this process's).
func FuzzOpenKey(f *testing.F) {
	alice, bob := newIdentity(f, 1), newIdentity(f, 2)
	key := newKey(f, 3, 7)
	msg, err := alice.SealKeyFor(bob.Public(), key)
	require.NoError(f, err)
	f.Add(msg)
	f.Add(msg[:len(msg)-1])
	f.Add(make([]byte, KeyMessageSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := bob.OpenKey(alice.Public(), b)
		if err != nil {
			assert.NotEqual(t, msg, b)
			return
		}
		assert.Equal(t, key, got)
	})
}
