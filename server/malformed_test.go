package server_test

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// TestMalformedInputNeverGives5xx sends broken bodies, headers and parameters to every route: each
// answer must be a 4xx (the helper fails the test on any 5xx).
func TestMalformedInputNeverGives5xx(t *testing.T) {
	e := servertest.Start(t)
	type route struct{ method, path string }
	api := []route{
		{"POST", "/oauth2/token"}, {"POST", "/oauth2/token/revoke"}, {"POST", "/oauth2/device/authorize"},
		{"GET", "/users/@me"}, {"PATCH", "/users/@me/provisional-display-name"},
		{"POST", "/partner-sdk/token/bot"}, {"POST", "/partner-sdk/token"},
		{"POST", "/partner-sdk/provisional-accounts/unmerge"}, {"POST", "/partner-sdk/provisional-accounts/unmerge/bot"},
		{"POST", "/partner-sdk/child-token"}, {"PUT", "/applications/" + e.App.ID.String() + "/oidc-config"},
		{"PUT", "/applications/abc/oidc-config"}, {"PUT", "/dev/users/xyz/ban"}, {"PUT", "/dev/users/1/ban"},
		{"POST", "/dev/external-token"}, {"POST", "/dev/clock/advance"}, {"PUT", "/dev/applications/1/webhook"},
	}
	web := []route{{"GET", "/oauth2/authorize"}, {"POST", "/oauth2/authorize"}, {"GET", "/activate"}, {"POST", "/activate"}}
	headers := []http.Header{
		nil,
		{"Content-Type": {"application/json"}},
		{"Content-Type": {"application/x-www-form-urlencoded"}},
		{"Content-Type": {"application/json"}, "Authorization": {"Bot " + e.App.BotToken}},
		{"Content-Type": {"application/json"}, "Authorization": {"Admin " + e.Creds.AdminToken}},
		{"Content-Type": {"application/json; charset=\""}, "Authorization": {"Bearer"}},
		{"Content-Type": {"multipart/form-data; boundary=x"}, "Authorization": {"Basic !!!"}},
	}
	bodies := []string{"", "{", "[]", "null", `{"client_id": "not-a-number"}`, `{"client_id": -1, "external_auth_type": 5}`,
		`{"external_user_id": ` + strings.Repeat("[", 1000) + `}`, "grant_type=authorization_code&code=%zz",
		"grant_type=refresh_token&refresh_token=", "a=1&a=2&client_id=1&client_id=2", "\xff\xfe\x00",
		`{"global_name": "\ud800"}`, `{"until": "yesterday"}`, `{"seconds": "x"}`, strings.Repeat("x", 1<<20+10),
		`{"parent_access_token": "x", "child_application_id": "99999999999999999999999"}`,
		`{"issuer": "https://[::1", "client_id": "c"}`}
	rng := rand.New(rand.NewPCG(1, 2)) // deterministic random bodies
	for i := 0; i < 20; i++ {
		b := make([]byte, rng.IntN(200))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		bodies = append(bodies, string(b))
	}
	for _, r := range api {
		for _, h := range headers {
			for _, b := range bodies {
				do(t, r.method, e.APIURL+r.path, bytes.NewReader([]byte(b)), h)
			}
		}
	}
	for _, r := range web {
		for _, b := range bodies {
			do(t, r.method, e.URL+r.path, strings.NewReader(b), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
		}
	}
	queries := []string{"", "?client_id=abc", "?client_id=1&redirect_uri=%zz", "?response_type=code&client_id=" + e.App.ID.String() +
		"&redirect_uri=" + loopbackRedirect + "&scope=identify&code_challenge=short&code_challenge_method=S256",
		"?client_id=" + e.App.ID.String() + "&client_id=2", "?user_code=%00%01", "?user_code=" + strings.Repeat("A", 5000),
		"?response_type=code&client_id=" + e.App.ID.String() + "&redirect_uri=" + loopbackRedirect + "&scope=identify&state=\xff"}
	for _, q := range queries {
		do(t, "GET", e.URL+"/oauth2/authorize"+q, nil, nil)
		do(t, "GET", e.URL+"/activate"+q, nil, nil)
	}
	for _, p := range []string{"/api/v9/users/@me", "/api/v10/", "/api//users/@me", "/api/v10/users/%2e%2e/x", "/nope", "/api/v10/oauth2/token/"} {
		r := do(t, "GET", e.URL+p, nil, nil)
		if r.Status < 300 {
			assert.Equal(t, "/api/v10/", p, "%s: %d", p, r.Status)
		}
	}
}

// TestAPIVersionPrefixes checks that /api/v10 and /api serve the same routes, and that the health
// check and discovery answer.
func TestAPIVersionPrefixes(t *testing.T) {
	e := servertest.Start(t)
	for _, base := range []string{e.URL + "/api/v10", e.URL + "/api"} {
		r := do(t, "GET", base+"/users/@me", nil, nil)
		assert.Equal(t, 401, r.Status, "%s/users/@me: %d %s", base, r.Status, r.Body)
		assert.Equal(t, "401: Unauthorized", r.apiError(t).Message, "%s/users/@me: %d %s", base, r.Status, r.Body)
	}
	r := do(t, "GET", e.URL+"/healthz", nil, nil)
	require.Equal(t, 200, r.Status, "healthz: %d", r.Status)
	var disc map[string]any
	do(t, "GET", e.URL+"/.well-known/openid-configuration", nil, nil).json(t, &disc)
	require.Equal(t, e.URL, disc["issuer"], "discovery %v", disc)
	require.Equal(t, e.APIURL+"/oauth2/token", disc["token_endpoint"], "discovery %v", disc)
	r = do(t, "GET", e.APIURL+"/oauth2/keys", nil, nil)
	require.Equal(t, 200, r.Status, "keys: %d %s", r.Status, r.Body)
	require.Contains(t, string(r.Body), `"ES256"`, "keys: %d %s", r.Status, r.Body)
	r = do(t, "DELETE", e.APIURL+"/oauth2/token", nil, nil)
	require.Equal(t, 405, r.Status, "405: %d %s", r.Status, r.Body)
	require.Equal(t, "405: Method Not Allowed", r.apiError(t).Message, "405: %d %s", r.Status, r.Body)
}
