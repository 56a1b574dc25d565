package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"sdkpp/server/httpx"
	"sdkpp/server/store"
)

// IDTokenTTL is the lifetime of the service's own ID tokens.
const IDTokenTTL = time.Hour

const signingKeySetting = "oidc.signing_key"

// Provider is the service as an OpenID provider: it signs ID tokens (ES256, key kept in the store
// so it survives restarts) and serves its discovery document and key set.
type Provider struct {
	Issuer string // the service's public base URL
	APIURL string // Issuer + "/api/v10"
	key    *ecdsa.PrivateKey
	kid    string
	signer jose.Signer
}

// NewProvider loads the signing key from st, creating it on first use (by the first of the
// nodes that start together: store.InitSetting, so that all sign with one key).
func NewProvider(ctx context.Context, st store.Store, issuer string) (*Provider, error) {
	der, err := st.GetSetting(ctx, signingKeySetting)
	if errors.Is(err, store.ErrNotFound) {
		fresh, gerr := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if gerr != nil {
			return nil, fmt.Errorf("oidc: make the signing key: %w", gerr)
		}
		if der, err = x509.MarshalECPrivateKey(fresh); err == nil {
			der, err = st.InitSetting(ctx, signingKeySetting, der)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("oidc: signing key: %w", err)
	}
	key, err := x509.ParseECPrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("oidc: stored signing key: %w", err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	sum := sha256.Sum256(pub)
	kid := base64.RawURLEncoding.EncodeToString(sum[:12])
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return nil, err
	}
	issuer = strings.TrimRight(issuer, "/")
	return &Provider{Issuer: issuer, APIURL: issuer + "/api/v10", key: key, kid: kid, signer: signer}, nil
}

// IDToken returns a signed ID token for subject (a user id) and audience (a client id), carrying
// nonce when not empty (rule AA-4).
func (p *Provider) IDToken(subject, audience, nonce string, now time.Time) (string, error) {
	claims := jwt.Claims{
		Issuer: p.Issuer, Subject: subject, Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(IDTokenTTL)),
	}
	b := jwt.Signed(p.signer).Claims(claims)
	if nonce != "" {
		b = b.Claims(map[string]any{"nonce": nonce})
	}
	return b.Serialize()
}

// KeySet returns the public key set.
func (p *Provider) KeySet() jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: string(jose.ES256), Use: "sig"}}}
}

// ServeDiscovery serves GET /.well-known/openid-configuration.
func (p *Provider) ServeDiscovery(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.Issuer,
		"authorization_endpoint":                p.Issuer + "/oauth2/authorize",
		"token_endpoint":                        p.APIURL + "/oauth2/token",
		"revocation_endpoint":                   p.APIURL + "/oauth2/token/revoke",
		"device_authorization_endpoint":         p.APIURL + "/oauth2/device/authorize",
		"jwks_uri":                              p.APIURL + "/oauth2/keys",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{string(jose.ES256)},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
		"grant_types_supported": []string{"authorization_code", "refresh_token", "client_credentials",
			"urn:ietf:params:oauth:grant-type:device_code"},
	})
}

// ServeKeys serves GET /oauth2/keys.
func (p *Provider) ServeKeys(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, p.KeySet())
}
