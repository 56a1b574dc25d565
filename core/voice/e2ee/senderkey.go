package e2ee

import (
	"crypto/ed25519"
	"crypto/hpke"
	"encoding/binary"
	"fmt"
	"io"
)

// KeySize is the length of a sender's media key: an AES-128-GCM key.
const KeySize = 16

// KeyMessageSize is the length of a key message made by Identity.SealKeyFor: the generation
// (4 bytes), the HPKE encapsulated key (32), the HPKE ciphertext of the media key (KeySize plus a
// 16-byte tag) and the sender's Ed25519 signature (64).
const KeyMessageSize = 4 + hpkeEncSize + KeySize + 16 + ed25519.SignatureSize

const hpkeEncSize = 32 // DHKEM(X25519) encapsulated key

// Labels that begin every signed message and every HPKE info, so that no message made for one
// purpose is valid for another.
const (
	labelKeyInfo  = "sdkpp-e2ee-v1 sender key\x00"
	labelKeySig   = "sdkpp-e2ee-v1 key message\x00"
	labelFrameSig = "sdkpp-e2ee-v1 frame\x00"
)

// HPKE suite for key messages: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, Base mode.
var (
	hpkeKDF  = hpke.HKDFSHA256()
	hpkeAEAD = hpke.AES128GCM()
)

// SenderKey is one generation of a sender's media key. Generations start at 1 and only grow; a
// sender never seals under an older generation again, and receivers refuse an older one.
type SenderKey struct {
	// Generation numbers the key among its sender's keys in this call.
	Generation uint32
	// Secret is the AES-128-GCM key that seals the sender's frames.
	Secret [KeySize]byte
}

// NewSenderKey reads a fresh media key from rand (crypto/rand.Reader outside tests) for the
// given generation, which must not be zero.
func NewSenderKey(rand io.Reader, generation uint32) (SenderKey, error) {
	k := SenderKey{Generation: generation}
	if generation == 0 {
		return k, fmt.Errorf("e2ee: new sender key: generation 0 is reserved")
	}
	if _, err := io.ReadFull(rand, k.Secret[:]); err != nil {
		return k, fmt.Errorf("e2ee: new sender key: read randomness: %w", err)
	}
	return k, nil
}

// appendCallContext appends label, the call id with a 2-byte length and the given public keys in
// their encoding. The call id is at most maxCallID bytes, so the result parses one way only.
func appendCallContext(b []byte, label string, callID []byte, pks ...PublicKeys) []byte {
	b = append(b, label...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(callID)))
	b = append(b, callID...)
	for _, pk := range pks {
		b, _ = pk.AppendBinary(b)
	}
	return b
}

// keyInfo is the HPKE info of a key message: it binds the call, the sender, the recipient and
// the generation, so a key message opens only for the recipient it was made for, in that call,
// as that sender's key of that generation.
func keyInfo(callID []byte, sender, recipient PublicKeys, generation uint32) []byte {
	b := appendCallContext(nil, labelKeyInfo, callID, sender, recipient)
	return binary.BigEndian.AppendUint32(b, generation)
}

// keySigned is the message a key message's signature covers: the label, the info and the HPKE
// output (encapsulated key and ciphertext).
func keySigned(info, sealed []byte) []byte {
	b := make([]byte, 0, len(labelKeySig)+len(info)+len(sealed))
	b = append(b, labelKeySig...)
	b = append(b, info...)
	return append(b, sealed...)
}

// SealKeyFor encrypts key to recipient with HPKE and signs the result, giving the key message
// that signaling carries to that recipient alone: generation (4 bytes, big endian) || HPKE enc
// (32) || HPKE ciphertext (32) || Ed25519 signature (64). The relay and the service see only
// ciphertext; only recipient can open it, and only as a key from this identity.
func (id *Identity) SealKeyFor(recipient PublicKeys, key SenderKey) ([]byte, error) {
	if key.Generation == 0 {
		return nil, fmt.Errorf("e2ee: seal key: generation 0 is reserved")
	}
	pk, err := recipient.hpkeKey()
	if err != nil {
		return nil, fmt.Errorf("e2ee: seal key: recipient: %w", err)
	}
	info := keyInfo(id.callID, id.public, recipient, key.Generation)
	sealed, err := hpke.Seal(pk, hpkeKDF, hpkeAEAD, info, key.Secret[:])
	if err != nil {
		return nil, fmt.Errorf("e2ee: seal key: hpke: %w", err)
	}
	msg := make([]byte, 0, KeyMessageSize)
	msg = binary.BigEndian.AppendUint32(msg, key.Generation)
	msg = append(msg, sealed...)
	msg = append(msg, ed25519.Sign(id.sig, keySigned(info, sealed))...)
	if len(msg) != KeyMessageSize {
		return nil, fmt.Errorf("e2ee: seal key: message of %d bytes, want %d", len(msg), KeyMessageSize)
	}
	return msg, nil
}

// OpenKey checks and decrypts a key message that sender made for this identity with SealKeyFor.
// It refuses a message of the wrong length, one whose signature is not sender's (ErrBadSignature:
// made by someone else, for another call or recipient, or altered) and one that does not decrypt
// (ErrDecrypt).
func (id *Identity) OpenKey(sender PublicKeys, msg []byte) (SenderKey, error) {
	var key SenderKey
	if len(msg) != KeyMessageSize {
		return key, fmt.Errorf("e2ee: open key: %d bytes, want %d: %w", len(msg), KeyMessageSize, ErrMalformed)
	}
	gen := binary.BigEndian.Uint32(msg)
	if gen == 0 {
		return key, fmt.Errorf("e2ee: open key: generation 0: %w", ErrMalformed)
	}
	sealed := msg[4 : KeyMessageSize-ed25519.SignatureSize]
	sig := msg[KeyMessageSize-ed25519.SignatureSize:]
	info := keyInfo(id.callID, sender, id.public, gen)
	if !ed25519.Verify(sender.signer(), keySigned(info, sealed), sig) {
		return key, fmt.Errorf("e2ee: open key: generation %d: %w", gen, ErrBadSignature)
	}
	secret, err := hpkeOpen(id, info, sealed)
	if err != nil || len(secret) != KeySize {
		return key, fmt.Errorf("e2ee: open key: generation %d: %w", gen, ErrDecrypt)
	}
	key.Generation = gen
	copy(key.Secret[:], secret)
	clear(secret)
	return key, nil
}

// hpkeOpen decrypts the HPKE part of a key message (encapsulated key and ciphertext) with id's
// private key.
func hpkeOpen(id *Identity, info, sealed []byte) ([]byte, error) {
	return hpke.Open(id.hpke, hpkeKDF, hpkeAEAD, info, sealed)
}
