// Package oidc validates applications' OpenID Connect issuers and verifies the ID tokens they
// issue (rule AU-9), and signs the service's own ID tokens.
//
// Issuer configuration is validated when it is edited:
//   - the issuer URL is https, without query, fragment or credentials, and its host is a DNS name
//     with at least two labels (no IP literal, no "localhost");
//   - discovery at <issuer>/.well-known/openid-configuration is fetched without following redirects
//     (a 3xx fails), its "issuer" must equal the configured issuer, its jwks_uri must pass the same
//     URL checks, and if it lists id_token_signing_alg_values_supported at least one of them must be
//     allowed;
//   - the key set is fetched without following redirects and must hold at least one asymmetric
//     signing key with a kid;
//   - allowed algorithms: RS256/384/512, ES256/384/512, PS256/384/512 (never HS* or none).
//
// Options.AllowLoopback admits https issuers on loopback IPs and localhost; it exists only so that
// tests can run their own TLS issuer (httptest.NewTLSServer) and must stay off in production.
package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Algorithms are the accepted ID token signing algorithms.
var Algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512,
}

// Options tunes fetching and host checks.
type Options struct {
	// HTTPClient fetches discovery and key sets. Its redirect policy is replaced so that no
	// redirect is ever followed. Default: 10 s timeout.
	HTTPClient *http.Client
	// AllowLoopback admits loopback IPs and localhost as issuer hosts. Tests only.
	AllowLoopback bool
}

// Error is a validation failure; Field names what failed ("issuer", "discovery", "jwks",
// "id_token").
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string { return e.Field + ": " + e.Reason }

func fail(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// CheckURL applies the issuer URL rules to raw; field names the URL in errors.
func (o Options) CheckURL(field, raw string, allowQuery bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fail(field, "not a URL")
	}
	switch {
	case u.Scheme != "https":
		return nil, fail(field, "must use https")
	case u.User != nil:
		return nil, fail(field, "must not contain credentials")
	case !allowQuery && (u.RawQuery != "" || u.ForceQuery):
		return nil, fail(field, "must not contain a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fail(field, "must not contain a fragment")
	case u.Opaque != "" || u.Host == "":
		return nil, fail(field, "must have a host")
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil {
		if o.AllowLoopback && ip.IsLoopback() {
			return u, nil
		}
		return nil, fail(field, "host must be a DNS name, not an IP address")
	}
	if host == "localhost" {
		if o.AllowLoopback {
			return u, nil
		}
		return nil, fail(field, "host must not be localhost")
	}
	if !validDNSName(host) {
		return nil, fail(field, "host is not a valid DNS name with at least two labels")
	}
	return u, nil
}

// validDNSName: letters, digits, hyphens; labels 1..63, not starting or ending with a hyphen; at
// least two labels; the last one not all digits.
func validDNSName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	labels := strings.Split(h, ".")
	if len(h) > 253 || len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// Discovery is the part of an OpenID provider configuration the service reads.
type Discovery struct {
	Issuer     string   `json:"issuer"`
	JWKSURI    string   `json:"jwks_uri"`
	Algorithms []string `json:"id_token_signing_alg_values_supported"`
}

// Validated is a checked issuer configuration.
type Validated struct {
	Issuer     string
	JWKSURI    string
	JWKS       []byte
	Algorithms []string // the allowed algorithms the issuer's keys and discovery support
}

func (o Options) client() *http.Client {
	c := http.Client{Timeout: 10 * time.Second}
	if o.HTTPClient != nil {
		c = *o.HTTPClient
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// get fetches a JSON document (at most 1 MiB) without following redirects.
func (o Options) get(ctx context.Context, field, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fail(field, "bad URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := o.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fail(field, "fetch failed: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, fail(field, "HTTP redirects are not followed (got %d)", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fail(field, "fetch answered HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20+1))
	if err != nil || len(body) > 1<<20 {
		return nil, fail(field, "unreadable or larger than 1 MiB")
	}
	return body, nil
}

// ValidateIssuer checks issuer and fetches its discovery document and key set (rule AU-9).
func (o Options) ValidateIssuer(ctx context.Context, issuer string) (*Validated, error) {
	if _, err := o.CheckURL("issuer", issuer, false); err != nil {
		return nil, err
	}
	body, err := o.get(ctx, "discovery", strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration")
	if err != nil {
		return nil, err
	}
	var d Discovery
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, fail("discovery", "not a JSON provider configuration")
	}
	if d.Issuer != issuer {
		return nil, fail("discovery", "issuer %q does not match the configured issuer", d.Issuer)
	}
	if _, err := o.CheckURL("jwks_uri", d.JWKSURI, true); err != nil {
		return nil, err
	}
	algs := allowedNames()
	if len(d.Algorithms) > 0 {
		algs = slices.DeleteFunc(slices.Clone(d.Algorithms), func(a string) bool { return !allowed(a) })
		if len(algs) == 0 {
			return nil, fail("discovery", "none of the signing algorithms %v is supported (RS/ES/PS 256/384/512)", d.Algorithms)
		}
	}
	jwks, err := o.FetchKeys(ctx, d.JWKSURI)
	if err != nil {
		return nil, err
	}
	return &Validated{Issuer: issuer, JWKSURI: d.JWKSURI, JWKS: jwks, Algorithms: algs}, nil
}

// FetchKeys fetches and checks a key set.
func (o Options) FetchKeys(ctx context.Context, jwksURI string) ([]byte, error) {
	body, err := o.get(ctx, "jwks", jwksURI)
	if err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fail("jwks", "not a JSON Web Key Set: %v", err)
	}
	usable := 0
	for _, k := range set.Keys {
		if usableKey(k) {
			usable++
		}
	}
	if usable == 0 {
		return nil, fail("jwks", "no RSA or EC signing key with a kid")
	}
	return body, nil
}

func usableKey(k jose.JSONWebKey) bool {
	if k.KeyID == "" || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
		return false
	}
	if k.Algorithm != "" && !allowed(k.Algorithm) {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return true
	}
	return false
}

func allowed(alg string) bool {
	return slices.Contains(Algorithms, jose.SignatureAlgorithm(alg))
}

func allowedNames() []string {
	out := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		out[i] = string(a)
	}
	return out
}
