package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuerAudience is the client id the game's ID tokens are issued for.
const issuerAudience = "sdkpp-e2e-game"

// issuer is an OpenID Connect provider with TLS on loopback that signs ID tokens with RS256.
type issuer struct {
	srv    *httptest.Server
	key    *rsa.PrivateKey
	signer jose.Signer
}

func newIssuer(t *testing.T) *issuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.url(),
			"jwks_uri":                              is.url() + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &key.PublicKey, KeyID: "e2e-key", Algorithm: string(jose.RS256), Use: "sig"},
		}})
	})
	is.srv = httptest.NewTLSServer(mux)
	t.Cleanup(is.srv.Close)
	is.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "e2e-key"))
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (is *issuer) url() string          { return is.srv.URL }
func (is *issuer) client() *http.Client { return is.srv.Client() }

// mint signs an ID token for subject, valid for an hour.
func (is *issuer) mint(t *testing.T, subject, nonce string) string {
	now := time.Now()
	claims := struct {
		jwt.Claims
		Nonce string `json:"nonce,omitempty"`
	}{jwt.Claims{
		Issuer:   is.url(),
		Subject:  subject,
		Audience: jwt.Audience{issuerAudience},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(time.Hour)),
	}, nonce}
	tok, err := jwt.Signed(is.signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
