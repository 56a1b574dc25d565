package oidc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/oidc"
	"sdkpp/server/servertest"
	"sdkpp/server/store"
)

func TestIssuerURLRules(t *testing.T) {
	strict := oidc.Options{}
	cases := map[string]string{
		"http://issuer.example.com":            "https",
		"https://issuer.example.com?x=1":       "query",
		"https://issuer.example.com/?":         "query",
		"https://issuer.example.com#frag":      "fragment",
		"https://user:pw@issuer.example.com":   "credentials",
		"https://127.0.0.1:8443":               "IP",
		"https://[::1]:8443":                   "IP",
		"https://10.1.2.3":                     "IP",
		"https://localhost":                    "localhost",
		"https://intranet":                     "DNS name",
		"https://bad_host.example.com":         "DNS name",
		"https://":                             "host",
		"https:issuer.example.com":             "host",
		"https://issuer.example.com:8443/path": "",
	}
	for raw, want := range cases {
		_, err := strict.CheckURL("issuer", raw, false)
		if want == "" {
			assert.NoError(t, err, "rule AU-9: %q refused", raw)
			continue
		}
		assert.ErrorContains(t, err, want, "rule AU-9: %q", raw)
	}
	// The test switch admits loopback only, never other IPs.
	loop := oidc.Options{AllowLoopback: true}
	_, err := loop.CheckURL("issuer", "https://127.0.0.1:8443", false)
	assert.NoError(t, err, "loopback with the test switch")
	_, err = loop.CheckURL("issuer", "https://10.1.2.3", false)
	assert.Error(t, err, "rule AU-9: the test switch admitted a non-loopback IP")
}

func TestIssuerDiscoveryValidation(t *testing.T) {
	iss := servertest.NewOIDCIssuer(t)
	ctx := context.Background()
	opts := oidc.Options{HTTPClient: iss.Client, AllowLoopback: true}
	v, err := opts.ValidateIssuer(ctx, iss.URL)
	require.NoError(t, err, "valid issuer refused")
	require.Equal(t, iss.URL+"/jwks", v.JWKSURI, "valid issuer refused")
	require.NotEmpty(t, v.JWKS, "valid issuer refused")
	// Without the test switch the loopback IP issuer is refused (rule AU-9).
	_, err = (oidc.Options{HTTPClient: iss.Client}).ValidateIssuer(ctx, iss.URL)
	require.ErrorContains(t, err, "IP", "rule AU-9: IP issuer accepted without the test switch")
	// A redirect during discovery or key-set fetching fails (rule AU-9).
	iss.SetRedirects(true, false)
	_, err = opts.ValidateIssuer(ctx, iss.URL)
	require.ErrorContains(t, err, "redirect", "rule AU-9: redirect during discovery")
	iss.SetRedirects(false, true)
	var oe *oidc.Error
	_, err = opts.ValidateIssuer(ctx, iss.URL)
	require.ErrorAs(t, err, &oe, "rule AU-9: redirect during JWKS")
	require.Equal(t, "jwks", oe.Field, "rule AU-9: redirect during JWKS: %v", err)
	require.Contains(t, oe.Reason, "redirect", "rule AU-9: redirect during JWKS: %v", err)
	iss.SetRedirects(false, false)
	// The discovery document's issuer must be the configured one.
	_, err = opts.ValidateIssuer(ctx, iss.URL+"/")
	require.ErrorContains(t, err, "does not match", "issuer mismatch accepted")
}

func TestIssuerNeedsSupportedAlgorithmsAndAsymmetricKeys(t *testing.T) {
	var algs []string
	var keys string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/jwks" {
			io.WriteString(w, keys)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"issuer": "https://" + r.Host, "jwks_uri": "https://" + r.Host + "/jwks",
			"id_token_signing_alg_values_supported": algs})
	}))
	defer srv.Close()
	opts := oidc.Options{HTTPClient: srv.Client(), AllowLoopback: true}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &ec.PublicKey, KeyID: "k", Algorithm: "ES256", Use: "sig"}}})
	oct, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "k", Algorithm: "HS256"}}})
	noKid, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &ec.PublicKey, Algorithm: "ES256"}}})
	cases := []struct {
		algs []string
		keys string
		want string
	}{
		{[]string{"HS256", "none"}, string(good), "none of the signing algorithms"}, // rule AU-9
		{[]string{"ES256"}, string(oct), "no RSA or EC signing key"},                // rule AU-9
		{[]string{"ES256"}, string(noKid), "no RSA or EC signing key"},
		{[]string{"ES256"}, "not json", "not a JSON Web Key Set"},
		{[]string{"HS256", "ES256"}, string(good), ""},
	}
	for _, c := range cases {
		algs, keys = c.algs, c.keys
		_, err := opts.ValidateIssuer(context.Background(), srv.URL)
		if c.want == "" {
			assert.NoError(t, err, "%v", c.algs)
		} else {
			assert.ErrorContains(t, err, c.want, "rule AU-9: %v %s", c.algs, c.keys)
		}
	}
}

func TestVerifyIDToken(t *testing.T) {
	iss := servertest.NewOIDCIssuer(t)
	ctx := context.Background()
	opts := oidc.Options{HTTPClient: iss.Client, AllowLoopback: true}
	v, err := opts.ValidateIssuer(ctx, iss.URL)
	require.NoError(t, err)
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	want := oidc.Expect{Issuer: iss.URL, ClientID: iss.ClientID, Now: now}
	verify := func(tok string, w oidc.Expect) error {
		_, _, err := oidc.VerifyIDToken(ctx, tok, v.JWKS, w, nil)
		return err
	}
	c, _, err := oidc.VerifyIDToken(ctx, iss.Token(t, now, nil), v.JWKS, want, nil)
	require.NoError(t, err, "valid RS256 token")
	require.Equal(t, "oidc-user-1", c.Subject, "valid RS256 token")
	es := iss.Sign(t, jose.SigningKey{Algorithm: jose.ES256, Key: iss.ECKey()}, "ec-1", now, nil)
	require.NoError(t, verify(es, want), "valid ES256 token")
	hs := iss.Sign(t, jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, "rsa-1", now, nil)
	cases := map[string]struct {
		tok  string
		want string
		exp  oidc.Expect
	}{
		"HS256":          {hs, "RS/ES/PS", want},
		"no kid":         {iss.Sign(t, jose.SigningKey{Algorithm: jose.ES256, Key: iss.ECKey()}, "", now, nil), "kid", want},
		"missing iss":    {iss.Token(t, now, map[string]any{"iss": nil}), "missing iss", want},
		"missing sub":    {iss.Token(t, now, map[string]any{"sub": nil}), "missing sub", want},
		"missing aud":    {iss.Token(t, now, map[string]any{"aud": nil}), "missing aud", want},
		"missing exp":    {iss.Token(t, now, map[string]any{"exp": nil}), "missing exp", want},
		"missing iat":    {iss.Token(t, now, map[string]any{"iat": nil}), "missing iat", want},
		"old iat":        {iss.Token(t, now, map[string]any{"iat": now.Add(-7*24*time.Hour - time.Minute).Unix()}), "7 days", want},
		"future iat":     {iss.Token(t, now, map[string]any{"iat": now.Add(time.Hour).Unix()}), "future", want},
		"wrong aud":      {iss.Token(t, now, map[string]any{"aud": "someone-else"}), "aud", want},
		"wrong iss":      {iss.Token(t, now, map[string]any{"iss": "https://other.example.com"}), "iss", want},
		"expired":        {iss.Token(t, now.Add(-2*time.Hour), nil), "expired", want},
		"nonce mismatch": {iss.Token(t, now, map[string]any{"nonce": "abc"}), "nonce", oidc.Expect{Issuer: iss.URL, ClientID: iss.ClientID, Now: now, Nonce: "xyz"}},
		"nonce missing":  {iss.Token(t, now, nil), "nonce", oidc.Expect{Issuer: iss.URL, ClientID: iss.ClientID, Now: now, Nonce: "xyz"}},
		"unknown kid":    {iss.Sign(t, jose.SigningKey{Algorithm: jose.ES256, Key: iss.ECKey()}, "nope", now, nil), "no key", want},
		"alg/kid clash":  {iss.Sign(t, jose.SigningKey{Algorithm: jose.ES256, Key: iss.ECKey()}, "rsa-1", now, nil), "no key", want},
		"garbage":        {"not.a.jwt", "JWS", want},
	}
	for name, c := range cases {
		err := verify(c.tok, c.exp)
		assert.ErrorContains(t, err, c.want, "rule AU-9/AA-4: %s", name)
	}
	// The nonce is checked when given and matches (rule AA-4); audience lists work.
	ok := iss.Token(t, now, map[string]any{"nonce": "xyz", "aud": []string{"other", iss.ClientID}})
	require.NoError(t, verify(ok, oidc.Expect{Issuer: iss.URL, ClientID: iss.ClientID, Now: now, Nonce: "xyz"}), "rule AA-4: matching nonce refused")
	// iat just within 7 days is fine.
	require.NoError(t, verify(iss.Token(t, now, map[string]any{"iat": now.Add(-7*24*time.Hour + time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}), want), "iat within 7 days refused")
}

func TestKeyRotationRefetchesWithoutRedirects(t *testing.T) {
	iss := servertest.NewOIDCIssuer(t)
	ctx := context.Background()
	opts := oidc.Options{HTTPClient: iss.Client, AllowLoopback: true}
	v, err := opts.ValidateIssuer(ctx, iss.URL)
	require.NoError(t, err)
	newKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	iss.AddKey(jose.JSONWebKey{Key: &newKey.PublicKey, KeyID: "ec-2", Algorithm: "ES256", Use: "sig"})
	now := time.Now()
	tok := iss.Sign(t, jose.SigningKey{Algorithm: jose.ES256, Key: newKey}, "ec-2", now, nil)
	refetch := func(ctx context.Context) ([]byte, error) { return opts.FetchKeys(ctx, v.JWKSURI) }
	_, jwks, err := oidc.VerifyIDToken(ctx, tok, v.JWKS, oidc.Expect{Issuer: iss.URL, ClientID: iss.ClientID, Now: now}, refetch)
	require.NoError(t, err, "rotated key")
	require.Contains(t, string(jwks), "ec-2", "rotated key")
	iss.SetRedirects(false, true)
	tok2 := iss.Sign(t, jose.SigningKey{Algorithm: jose.ES256, Key: newKey}, "ec-3", now, nil)
	_, _, err = oidc.VerifyIDToken(ctx, tok2, v.JWKS, oidc.Expect{Issuer: iss.URL, ClientID: iss.ClientID, Now: now}, refetch)
	require.ErrorContains(t, err, "redirect", "rule AU-9: key refetch followed a redirect")
}

func TestProviderSignsVerifiableIDTokens(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	require.NoError(t, err)
	defer st.Close()
	p, err := oidc.NewProvider(ctx, st, "http://127.0.0.1:7710")
	require.NoError(t, err)
	now := time.Now()
	tok, err := p.IDToken("42", "1001", "n-1", now)
	require.NoError(t, err)
	set := p.KeySet()
	raw, _ := set.Keys[0].MarshalJSON()
	jwks := []byte(`{"keys":[` + string(raw) + `]}`)
	c, _, err := oidc.VerifyIDToken(ctx, tok, jwks, oidc.Expect{Issuer: "http://127.0.0.1:7710", ClientID: "1001", Nonce: "n-1", Now: now}, nil)
	require.NoError(t, err, "rule AA-4: own ID token: %+v", c)
	require.Equal(t, "42", c.Subject, "rule AA-4: own ID token: %+v", c)
	require.Equal(t, "n-1", c.Nonce, "rule AA-4: own ID token: %+v", c)
	// The key survives a restart (same store).
	p2, err := oidc.NewProvider(ctx, st, "http://127.0.0.1:7710")
	require.NoError(t, err)
	require.Equal(t, set.Keys[0].KeyID, p2.KeySet().Keys[0].KeyID, "signing key changed across a restart")
}
