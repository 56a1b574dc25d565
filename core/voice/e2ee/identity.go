package e2ee

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hpke"
	"fmt"
	"io"
)

// Suite is the first byte of an encoded PublicKeys: it names this protocol's algorithms (X25519
// for HPKE, Ed25519 for signatures, AES-128-GCM for frames). A later protocol version gets a new
// value, so a client never mistakes one for the other.
const Suite byte = 1

// PublicKeysSize is the length of an encoded PublicKeys: the suite byte, the X25519 public key and
// the Ed25519 public key.
const PublicKeysSize = 1 + 32 + ed25519.PublicKeySize

// maxCallID bounds the call id so that it always fits a 16-bit length prefix.
const maxCallID = 1024

// PublicKeys is the public half of a participant's Identity: what signaling publishes for each
// participant of a call. The zero value is not a valid key set; obtain one from Identity.Public or
// ParsePublicKeys. PublicKeys is comparable and may be used as a map key.
type PublicKeys struct {
	kem [32]byte                    // X25519 public key: HPKE recipient key for sender keys
	sig [ed25519.PublicKeySize]byte // Ed25519 public key: verifies this participant's frames and key messages
}

// ParsePublicKeys decodes the PublicKeysSize bytes that PublicKeys.Bytes produced. It refuses
// input of any other length, an unknown suite, and an X25519 key of small order (one that would
// make every key agreement with it yield the all-zero secret).
func ParsePublicKeys(b []byte) (PublicKeys, error) {
	var pk PublicKeys
	if len(b) != PublicKeysSize {
		return pk, fmt.Errorf("e2ee: parse public keys: %d bytes, want %d: %w", len(b), PublicKeysSize, ErrMalformed)
	}
	if b[0] != Suite {
		return pk, fmt.Errorf("e2ee: parse public keys: suite %d, want %d: %w", b[0], Suite, ErrMalformed)
	}
	copy(pk.kem[:], b[1:33])
	copy(pk.sig[:], b[33:])
	if _, err := pk.hpkeKey(); err != nil {
		return PublicKeys{}, fmt.Errorf("e2ee: parse public keys: %w", err)
	}
	return pk, nil
}

// Bytes returns the PublicKeysSize-byte encoding: Suite, then the X25519 key, then the Ed25519 key.
func (pk PublicKeys) Bytes() []byte {
	b, _ := pk.AppendBinary(make([]byte, 0, PublicKeysSize))
	return b
}

// AppendBinary appends the encoding returned by Bytes to b (encoding.BinaryAppender).
func (pk PublicKeys) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, Suite)
	b = append(b, pk.kem[:]...)
	return append(b, pk.sig[:]...), nil
}

// MarshalBinary returns the encoding returned by Bytes (encoding.BinaryMarshaler).
func (pk PublicKeys) MarshalBinary() ([]byte, error) { return pk.Bytes(), nil }

// UnmarshalBinary decodes b as ParsePublicKeys does (encoding.BinaryUnmarshaler).
func (pk *PublicKeys) UnmarshalBinary(b []byte) error {
	p, err := ParsePublicKeys(b)
	if err != nil {
		return err
	}
	*pk = p
	return nil
}

// IsZero reports whether pk is the zero value, which no participant has.
func (pk PublicKeys) IsZero() bool { return pk == PublicKeys{} }

// signer returns the Ed25519 public key that verifies this participant's signatures.
func (pk PublicKeys) signer() ed25519.PublicKey { return pk.sig[:] }

// probeKey is a fixed X25519 scalar. Every clamped scalar is a multiple of the cofactor 8, so a
// key agreement with it yields the all-zero secret (which crypto/ecdh reports as an error)
// exactly for the public keys of small order.
var probeKey = func() *ecdh.PrivateKey {
	k, err := ecdh.X25519().NewPrivateKey([]byte("sdkpp e2ee small-order key probe"))
	if err != nil {
		panic(err)
	}
	return k
}()

// hpkeKey returns pk's X25519 key as an HPKE recipient key, refusing small-order points.
func (pk PublicKeys) hpkeKey() (hpke.PublicKey, error) {
	pub, err := ecdh.X25519().NewPublicKey(pk.kem[:])
	if err != nil {
		return nil, fmt.Errorf("x25519 key: %w", ErrMalformed)
	}
	if _, err := probeKey.ECDH(pub); err != nil {
		return nil, fmt.Errorf("x25519 key of small order: %w", ErrMalformed)
	}
	k, err := hpke.NewDHKEMPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("hpke recipient key: %w", err)
	}
	return k, nil
}

// Identity is one participant's key pair for one call: an X25519 key that sender keys are
// encrypted to (HPKE) and an Ed25519 key that signs this participant's frames and key messages.
// It is made fresh for every call and bound to that call's id; it must not be reused in another
// call. An Identity is immutable and safe for concurrent use.
type Identity struct {
	callID []byte
	kem    *ecdh.PrivateKey
	hpke   hpke.PrivateKey
	sig    ed25519.PrivateKey
	public PublicKeys
}

// NewIdentity makes a fresh identity for the call callID, reading 64 bytes from rand (use
// crypto/rand.Reader; tests pass a seeded reader). The call id is whatever opaque bytes signaling
// uses to name the call (at most 1024 bytes); every participant must use the same bytes.
func NewIdentity(callID []byte, rand io.Reader) (*Identity, error) {
	if len(callID) == 0 || len(callID) > maxCallID {
		return nil, fmt.Errorf("e2ee: new identity: call id of %d bytes, want 1 to %d", len(callID), maxCallID)
	}
	var seed [64]byte
	if _, err := io.ReadFull(rand, seed[:]); err != nil {
		return nil, fmt.Errorf("e2ee: new identity: read randomness: %w", err)
	}
	defer clear(seed[:])
	kem, err := ecdh.X25519().NewPrivateKey(seed[:32])
	if err != nil {
		return nil, fmt.Errorf("e2ee: new identity: x25519 key: %w", err)
	}
	hk, err := hpke.NewDHKEMPrivateKey(kem)
	if err != nil {
		return nil, fmt.Errorf("e2ee: new identity: hpke key: %w", err)
	}
	id := &Identity{
		callID: append([]byte(nil), callID...),
		kem:    kem,
		hpke:   hk,
		sig:    ed25519.NewKeyFromSeed(seed[32:]),
	}
	copy(id.public.kem[:], kem.PublicKey().Bytes())
	copy(id.public.sig[:], id.sig.Public().(ed25519.PublicKey))
	if _, err := id.public.hpkeKey(); err != nil {
		return nil, fmt.Errorf("e2ee: new identity: %w", err)
	}
	return id, nil
}

// Public returns the identity's public keys, to be published through signaling.
func (id *Identity) Public() PublicKeys { return id.public }

// CallID returns a copy of the call id the identity is bound to.
func (id *Identity) CallID() []byte { return append([]byte(nil), id.callID...) }
