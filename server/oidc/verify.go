package oidc

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// MaxIDTokenAge is how old an ID token's iat may be.
const MaxIDTokenAge = 7 * 24 * time.Hour

// Leeway is the clock skew tolerated on exp, nbf and a future iat.
const Leeway = time.Minute

// Expect says what an ID token must carry.
type Expect struct {
	Issuer   string
	ClientID string // must be in aud
	Nonce    string // checked when not empty (rule AA-4)
	Now      time.Time
}

// Claims are the verified claims of an ID token.
type Claims struct {
	Issuer   string
	Subject  string
	Nonce    string
	IssuedAt time.Time
}

type extraClaims struct {
	Nonce *string `json:"nonce"`
}

// VerifyIDToken checks an ID token's signature against jwks and its claims against want: header
// kid and an allowed alg; iss, sub, aud, exp and iat present; iss equal, aud containing the client
// id, not expired, iat within MaxIDTokenAge; nonce equal when want.Nonce is set (rules AU-9,
// AA-4). When the kid is not in jwks and refetch is not nil, refetch is called once for a fresh
// key set (key rotation); the set used is returned so that the caller can store it.
func VerifyIDToken(ctx context.Context, raw string, jwks []byte, want Expect, refetch func(context.Context) ([]byte, error)) (*Claims, []byte, error) {
	tok, err := jwt.ParseSigned(raw, Algorithms)
	if err != nil {
		return nil, jwks, fail("id_token", "not a JWS signed with RS/ES/PS 256/384/512")
	}
	if len(tok.Headers) != 1 {
		return nil, jwks, fail("id_token", "must have exactly one signature")
	}
	h := tok.Headers[0]
	if h.KeyID == "" {
		return nil, jwks, fail("id_token", "header has no kid")
	}
	key, ok := findKey(jwks, h.KeyID, h.Algorithm)
	if !ok && refetch != nil {
		fresh, ferr := refetch(ctx)
		if ferr != nil {
			return nil, jwks, ferr
		}
		jwks = fresh
		key, ok = findKey(jwks, h.KeyID, h.Algorithm)
	}
	if !ok {
		return nil, jwks, fail("id_token", "no key %q for %s in the issuer's key set", h.KeyID, h.Algorithm)
	}
	var std jwt.Claims
	var extra extraClaims
	if err := tok.Claims(key.Key, &std, &extra); err != nil {
		return nil, jwks, fail("id_token", "bad signature or claims")
	}
	switch {
	case std.Issuer == "":
		return nil, jwks, fail("id_token", "missing iss")
	case std.Subject == "":
		return nil, jwks, fail("id_token", "missing sub")
	case len(std.Audience) == 0:
		return nil, jwks, fail("id_token", "missing aud")
	case std.Expiry == nil:
		return nil, jwks, fail("id_token", "missing exp")
	case std.IssuedAt == nil:
		return nil, jwks, fail("id_token", "missing iat")
	case std.Issuer != want.Issuer:
		return nil, jwks, fail("id_token", "iss does not match the configured issuer")
	case !slices.Contains([]string(std.Audience), want.ClientID):
		return nil, jwks, fail("id_token", "aud does not contain the configured client id")
	case !want.Now.Before(std.Expiry.Time().Add(Leeway)):
		return nil, jwks, fail("id_token", "expired")
	case std.NotBefore != nil && want.Now.Add(Leeway).Before(std.NotBefore.Time()):
		return nil, jwks, fail("id_token", "not valid yet (nbf)")
	case want.Now.Sub(std.IssuedAt.Time()) > MaxIDTokenAge:
		return nil, jwks, fail("id_token", "iat is older than 7 days")
	case std.IssuedAt.Time().After(want.Now.Add(Leeway)):
		return nil, jwks, fail("id_token", "iat is in the future")
	}
	nonce := ""
	if extra.Nonce != nil {
		nonce = *extra.Nonce
	}
	if want.Nonce != "" && nonce != want.Nonce {
		return nil, jwks, fail("id_token", "nonce does not match") // rule AA-4
	}
	return &Claims{Issuer: std.Issuer, Subject: std.Subject, Nonce: nonce, IssuedAt: std.IssuedAt.Time()}, jwks, nil
}

// findKey returns the usable key with kid whose alg (if the key names one) equals alg.
func findKey(jwks []byte, kid, alg string) (jose.JSONWebKey, bool) {
	var set jose.JSONWebKeySet
	if json.Unmarshal(jwks, &set) != nil {
		return jose.JSONWebKey{}, false
	}
	for _, k := range set.Key(kid) {
		if usableKey(k) && (k.Algorithm == "" || k.Algorithm == alg) {
			return k, true
		}
	}
	return jose.JSONWebKey{}, false
}
