// Package secret makes and checks the service's secrets: random tokens, their SHA-256 hashes for
// storage, and salted PBKDF2 password hashes.
package secret

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"io"
	"strings"
)

// Reader is the randomness of every secret; tests may replace it only before the service starts.
var Reader io.Reader = rand.Reader

// Random returns n random bytes, base64url encoded without padding.
func Random(n int) string {
	b := make([]byte, n)
	if _, err := io.ReadFull(Reader, b); err != nil {
		panic("secret: no randomness: " + err.Error()) // crypto/rand does not fail
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Token returns a new bearer secret (32 random bytes).
func Token() string { return Random(32) }

// tokenLen is the length of Token's secrets: 32 random bytes, base64url encoded.
var tokenLen = base64.RawURLEncoding.EncodedLen(32)

// NewToken returns prefix followed by a new bearer secret (Token's 32 random bytes, base64url
// encoded), and the SHA-256 of the secret alone (Hash of it). It is Token and Hash in two
// allocations instead of five, for the token endpoint, which makes one a request: the random
// bytes never leave the stack's buffers, and are cleared before it returns.
func NewToken(prefix []byte) (tok string, hash []byte) {
	buf := make([]byte, 32+sha256.Size) // the random bytes, then their secret's hash
	raw, sum := buf[:32], buf[32:]
	if _, err := io.ReadFull(Reader, raw); err != nil {
		panic("secret: no randomness: " + err.Error()) // crypto/rand does not fail
	}
	var b strings.Builder
	b.Grow(len(prefix) + tokenLen)
	b.Write(prefix)
	var enc [64]byte
	base64.RawURLEncoding.Encode(enc[:tokenLen], raw)
	clear(raw)
	b.Write(enc[:tokenLen])
	tok = b.String()
	h := sha256.Sum256(enc[:tokenLen])
	clear(enc[:])
	copy(sum, h[:])
	return tok, sum[:sha256.Size:sha256.Size]
}

// Hash returns the SHA-256 of s, the form a secret is stored and looked up in.
func Hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// Matches tells, in constant time, whether s hashes to hash.
func Matches(hash []byte, s string) bool {
	return len(hash) == sha256.Size && subtle.ConstantTimeCompare(hash, Hash(s)) == 1
}

// Password hashing: "pbkdf2-sha256" || salt (16) || key (32), iterations fixed.
const (
	pwIterations = 60000
	pwPrefix     = "pbkdf2-sha256:"
	pwSaltLen    = 16
	pwKeyLen     = 32
)

// HashPassword returns a salted PBKDF2-SHA256 hash of pw.
func HashPassword(pw string) ([]byte, error) {
	salt := make([]byte, pwSaltLen)
	if _, err := io.ReadFull(Reader, salt); err != nil {
		return nil, err
	}
	key, err := pbkdf2.Key(sha256.New, pw, salt, pwIterations, pwKeyLen)
	if err != nil {
		return nil, err
	}
	out := append([]byte(pwPrefix), salt...)
	return append(out, key...), nil
}

// CheckPassword tells whether pw matches hash.
func CheckPassword(hash []byte, pw string) bool {
	if len(hash) != len(pwPrefix)+pwSaltLen+pwKeyLen || string(hash[:len(pwPrefix)]) != pwPrefix {
		return false
	}
	salt := hash[len(pwPrefix) : len(pwPrefix)+pwSaltLen]
	key, err := pbkdf2.Key(sha256.New, pw, salt, pwIterations, pwKeyLen)
	if err != nil {
		return false
	}
	return hmac.Equal(key, hash[len(pwPrefix)+pwSaltLen:])
}
