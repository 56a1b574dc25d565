package token

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/server/store"
)

// A signed access token is issued for client_credentials: it carries its claims and writes
// nothing. It is
//
//	<id>.<claims>.<mac>
//
// each part base64url without padding (canonical: Strict): id is the token's snowflake (8
// bytes, big-endian), as an opaque token's; claims are signedVersion, then the authorization,
// application and user ids (8 bytes each), the creation and expiry times (Unix nanoseconds, 8
// bytes each) and the scopes, joined by spaces; mac is HMAC-SHA256, under the store's TokenKey,
// of signedDomain and the token's text before its last dot. An opaque token has one dot and a
// legacy one none, so the three forms never meet.
const (
	signedVersion = 1
	// signedDomain is put before the text the MAC covers, so that no other MAC under the key
	// (should the key ever sign anything else) can be taken for a token's.
	signedDomain = "sdkpp signed access token\x00"
	// claimsHead is the claims' length before the scopes.
	claimsHead = 1 + 8*5
	// maxScopesLen bounds the scopes' text in a token's claims.
	maxScopesLen = 512
	// MaxSignedLen bounds a signed token's length: longer text is refused before any decoding.
	MaxSignedLen = idLenConst + 1 + (4*(claimsHead+maxScopesLen)+2)/3 + 1 + macLen
	// idLenConst is idLen as a constant; macLen is the MAC's encoded length.
	idLenConst = (8*4 + 2) / 3
	macLen     = (sha256.Size*4 + 2) / 3
)

// b64 is the strict base64url of every part: a part with trailing bits set, or padding, is
// refused, so that each token has one spelling only.
var b64 = base64.RawURLEncoding.Strict()

// errSigned is what every malformed, forged or refused signed token gives inside this package;
// outside it is store.ErrNotFound.
var errSigned = errors.New("token: not a valid signed token")

// sign makes the signed token of t (an access token, its fields set but ID) under key: t.ID is
// set from ids, and t is marked Signed. It writes nothing.
func sign(key []byte, ids IDs, t *store.Token) (string, error) {
	scopes := strings.Join(t.Scopes, " ")
	if len(scopes) > maxScopesLen {
		return "", errors.New("token: too many scopes for a signed token")
	}
	if len(key) == 0 {
		return "", errors.New("token: the store has no token key")
	}
	t.ID, t.Signed, t.Hash = ids.Next(), true, nil
	claims := make([]byte, claimsHead, claimsHead+len(scopes))
	claims[0] = signedVersion
	binary.BigEndian.PutUint64(claims[1:], t.AuthorizationID)
	binary.BigEndian.PutUint64(claims[9:], t.AppID)
	binary.BigEndian.PutUint64(claims[17:], t.UserID)
	binary.BigEndian.PutUint64(claims[25:], uint64(t.CreatedAt.UnixNano()))
	binary.BigEndian.PutUint64(claims[33:], uint64(t.ExpiresAt.UnixNano()))
	claims = append(claims, scopes...)
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], t.ID)
	n := idLenConst + 1 + b64.EncodedLen(len(claims))
	buf := make([]byte, n+1+macLen)
	b64.Encode(buf, id[:])
	buf[idLenConst] = '.'
	b64.Encode(buf[idLenConst+1:], claims)
	buf[n] = '.'
	var sum [sha256.Size]byte
	b64.Encode(buf[n+1:], signedMAC(key, buf[:n], sum[:0]))
	return string(buf), nil
}

// signedMAC appends the MAC of text (a token's text before its last dot) under key to dst.
func signedMAC(key, text, dst []byte) []byte {
	p := macsOf(key)
	m := p.pool.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(signedDomain))
	m.Write(text)
	dst = m.Sum(dst)
	p.pool.Put(m)
	return dst
}

// macPool keeps the HMACs of one key: hmac.New costs a dozen allocations, where a used HMAC's
// Reset costs none.
type macPool struct {
	key  []byte
	pool sync.Pool
}

// macs is the pool of the last key used (one per process but in tests).
var macs atomic.Pointer[macPool]

// macsOf returns the pool of key's HMACs.
func macsOf(key []byte) *macPool {
	if p := macs.Load(); p != nil && bytes.Equal(p.key, key) {
		return p
	}
	p := &macPool{key: bytes.Clone(key)}
	p.pool.New = func() any { return hmac.New(sha256.New, p.key) }
	macs.Store(p)
	return p
}

// parseSigned returns the token that the signed token tok carries when its MAC under key
// matches (compared in constant time) and its claims are well formed; its validity (expiry,
// authorization) is not checked. Any other input, of any length or content, gives errSigned.
func parseSigned(key []byte, tok string) (*store.Token, error) {
	if len(tok) > MaxSignedLen || len(key) == 0 {
		return nil, errSigned
	}
	dot := strings.LastIndexByte(tok, '.')
	if dot < 0 || len(tok)-dot-1 != macLen {
		return nil, errSigned
	}
	text, encMAC := tok[:dot], tok[dot+1:]
	encID, encClaims, ok := strings.Cut(text, ".")
	if !ok || len(encID) != idLenConst || strings.Contains(encClaims, ".") {
		return nil, errSigned
	}
	var mac, want [sha256.Size]byte
	if n, err := b64.Decode(mac[:], []byte(encMAC)); err != nil || n != sha256.Size {
		return nil, errSigned
	}
	if !hmac.Equal(mac[:], signedMAC(key, []byte(text), want[:0])) {
		return nil, errSigned
	}
	// The MAC matched: the rest was made by sign, checked all the same.
	var id [8]byte
	if n, err := b64.Decode(id[:], []byte(encID)); err != nil || n != 8 {
		return nil, errSigned
	}
	claims, err := b64.DecodeString(encClaims)
	if err != nil || len(claims) < claimsHead || claims[0] != signedVersion || len(claims)-claimsHead > maxScopesLen {
		return nil, errSigned
	}
	t := &store.Token{ID: binary.BigEndian.Uint64(id[:]), Signed: true, Kind: store.AccessToken,
		AuthorizationID: binary.BigEndian.Uint64(claims[1:]),
		AppID:           binary.BigEndian.Uint64(claims[9:]),
		UserID:          binary.BigEndian.Uint64(claims[17:]),
		CreatedAt:       time.Unix(0, int64(binary.BigEndian.Uint64(claims[25:]))).UTC(),
		ExpiresAt:       time.Unix(0, int64(binary.BigEndian.Uint64(claims[33:]))).UTC()}
	if scopes := string(claims[claimsHead:]); scopes != "" {
		t.Scopes = strings.Split(scopes, " ")
		for _, s := range t.Scopes {
			if s == "" {
				return nil, errSigned
			}
		}
	}
	return t, nil
}

// findSigned returns the token that the signed token tok carries, when its MAC matches under
// st's key and its authorization still stands: the top-level authorization of its application
// and user is the one it names (an authorization revoked, by the revocation endpoint, an
// unlink or a ban, is deleted, and one made again has another id). That read is the one a
// token's row was: answered by the store's memo under the same rules (store.MayBeBehind).
// Anything else is store.ErrNotFound. Its expiry is the caller's to check, as a row's is.
func findSigned(ctx context.Context, st store.Store, tok string) (*store.Token, error) {
	t, err := parseSigned(st.TokenKey(), tok)
	if err != nil {
		return nil, store.ErrNotFound
	}
	a, err := st.FindAuthorization(ctx, t.AppID, t.UserID)
	if err != nil {
		return nil, err // store.ErrNotFound when it is gone
	}
	if a.ID != t.AuthorizationID {
		return nil, store.ErrNotFound
	}
	return t, nil
}
