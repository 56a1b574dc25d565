package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rule AU-10: credentials are masked in every shape a log line may carry them.
func TestPatterns(t *testing.T) {
	cases := []struct {
		name, in string
		secret   string // must be gone
		keep     string // must stay
	}{
		{"bearer header", "Authorization: Bearer mF_9.B5f-4.1JqM", "mF_9.B5f-4.1JqM", "Authorization"},
		{"bot token", "using Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "Cl2FMQ", "using Bot"},
		{"json access token", `{"access_token": "abc123secret", "token_type": "Bearer"}`, "abc123secret", "token_type"},
		{"json refresh token", `{"refresh_token":"r3fr3sh-value","expires_in":604800}`, "r3fr3sh-value", "604800"},
		{"escaped json", `body="{\"client_secret\":\"shh-very-secret\"}"`, "shh-very-secret", "client_secret"},
		{"form code", "grant_type=authorization_code&code=SplxlOBeZQQYbYS6WxSbIA&redirect_uri=x", "SplxlOBeZQQYbYS6WxSbIA", "redirect_uri=x"},
		{"verifier in query", "?code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&x=1", "dBjftJeZ4CVP", "x=1"},
		{"jwt", "id token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl ok", "eyJzdWIiOiIxMjMifQ", "ok"},
		{"password", "password=hunter2 user=bob", "hunter2", "user=bob"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := Patterns(c.in)
			assert.NotContains(t, out, c.secret, "secret survived: %q", out)
			assert.Contains(t, out, Mask, "over- or under-redacted: %q", out)
			assert.Contains(t, out, c.keep, "over- or under-redacted: %q", out)
		})
	}
}

func TestPlainTextIsKept(t *testing.T) {
	for _, s := range []string{
		"ClientResult{Type: HTTPError, ErrorCode: 50035}",
		`{"code": 50035, "message": "Invalid Form Body"}`,
		"SetHttpRequestTimeout: -1 ms is not a positive timeout",
	} {
		got := Patterns(s)
		assert.Equal(t, s, got, "Patterns(%q) = %q", s, got)
	}
}

// rule AU-10: a registered secret is masked wherever it appears, even without a telltale key.
func TestSetMasksKnownValues(t *testing.T) {
	var s Set
	s.Add("short")
	s.Add("opaque-token-value-123")
	out := s.String("path /tmp/opaque-token-value-123/x and short")
	require.NotContains(t, out, "opaque-token-value-123", "got %q", out)
	require.Contains(t, out, "short", "got %q", out)
	var nilSet *Set
	assert.Equal(t, "Bearer "+Mask, nilSet.String("Bearer abcdefgh"), "nil Set does not apply patterns")
}

func TestSetForgetsOldest(t *testing.T) {
	s := Set{limit: 2}
	s.Add("secret-one-111")
	s.Add("secret-two-222")
	s.Add("secret-three-333")
	out := s.String("secret-one-111 secret-two-222 secret-three-333")
	assert.Contains(t, out, "secret-one-111", "got %q", out)
	assert.NotContains(t, out, "secret-two-222", "got %q", out)
	assert.NotContains(t, out, "secret-three-333", "got %q", out)
}
