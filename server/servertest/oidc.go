package servertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"
)

// OIDCIssuer is an OpenID provider on loopback TLS for tests (rule AU-9): it serves discovery and
// a key set (an RSA key "rsa-1" and a P-256 key "ec-1") and signs ID tokens. The server must be
// started WithOIDCTestIssuer(issuer.Client) to accept it.
type OIDCIssuer struct {
	URL      string       // https://127.0.0.1:<port>
	ClientID string       // the audience its tokens carry by default
	Client   *http.Client // trusts the issuer's certificate

	srv *httptest.Server
	mu  sync.Mutex
	// redirect answers discovery or the key set with a 302 when set.
	redirectDiscovery, redirectJWKS bool
	extraKeys                       []jose.JSONWebKey
}

var (
	keysOnce sync.Once
	rsaKey   *rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
)

func testKeys() (*rsa.PrivateKey, *ecdsa.PrivateKey) {
	keysOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
	return rsaKey, ecKey
}

// NewOIDCIssuer starts an issuer; it stops when the test ends.
func NewOIDCIssuer(t testing.TB) *OIDCIssuer {
	i := &OIDCIssuer{ClientID: "sdkpp-test-client"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		redirect := i.redirectDiscovery
		i.mu.Unlock()
		if redirect {
			http.Redirect(w, r, i.URL+"/elsewhere/.well-known/openid-configuration", http.StatusFound)
			return
		}
		writeJSON(w, map[string]any{"issuer": i.URL, "jwks_uri": i.URL + "/jwks",
			"authorization_endpoint": i.URL + "/authorize", "response_types_supported": []string{"id_token"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256", "ES256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		redirect, extra := i.redirectJWKS, i.extraKeys
		i.mu.Unlock()
		if redirect {
			http.Redirect(w, r, i.URL+"/other-jwks", http.StatusFound)
			return
		}
		writeJSON(w, i.keySet(extra))
	})
	i.srv = httptest.NewTLSServer(mux)
	i.URL, i.Client = i.srv.URL, i.srv.Client()
	t.Cleanup(i.srv.Close)
	return i
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (i *OIDCIssuer) keySet(extra []jose.JSONWebKey) jose.JSONWebKeySet {
	rk, ek := testKeys()
	keys := []jose.JSONWebKey{
		{Key: &rk.PublicKey, KeyID: "rsa-1", Algorithm: "RS256", Use: "sig"},
		{Key: &ek.PublicKey, KeyID: "ec-1", Algorithm: "ES256", Use: "sig"},
	}
	return jose.JSONWebKeySet{Keys: append(keys, extra...)}
}

// SetRedirects makes discovery and/or the key set answer with a redirect.
func (i *OIDCIssuer) SetRedirects(discovery, jwks bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.redirectDiscovery, i.redirectJWKS = discovery, jwks
}

// AddKey publishes another public key (key rotation).
func (i *OIDCIssuer) AddKey(k jose.JSONWebKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.extraKeys = append(i.extraKeys, k)
}

// Claims returns the default claims of a token issued at now: iss, sub "oidc-user-1", aud
// ClientID, iat now, exp now+1h.
func (i *OIDCIssuer) Claims(now time.Time) map[string]any {
	return map[string]any{"iss": i.URL, "sub": "oidc-user-1", "aud": i.ClientID, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Token signs the default claims at now, changed by overrides (a nil value removes a claim), with
// RS256 and kid "rsa-1".
func (i *OIDCIssuer) Token(t testing.TB, now time.Time, overrides map[string]any) string {
	t.Helper()
	rk, _ := testKeys()
	return i.Sign(t, jose.SigningKey{Algorithm: jose.RS256, Key: rk}, "rsa-1", now, overrides)
}

// Sign signs the default claims (changed by overrides) with key, putting kid in the header when not
// empty.
func (i *OIDCIssuer) Sign(t testing.TB, key jose.SigningKey, kid string, now time.Time, overrides map[string]any) string {
	t.Helper()
	claims := i.Claims(now)
	for k, v := range overrides {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(key, opts)
	require.NoError(t, err)
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	require.NoError(t, err)
	return tok
}

// ECKey returns the issuer's P-256 signing key (kid "ec-1").
func (i *OIDCIssuer) ECKey() *ecdsa.PrivateKey { _, ek := testKeys(); return ek }
