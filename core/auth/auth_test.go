package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/redact"
	"sdkpp/core/rest"
	"sdkpp/core/token"
	"sdkpp/internal/clock"
)

// tokenService answers /oauth2/token with the status status() gives, and counts the refresh
// tokens presented to it.
type tokenService struct {
	mu        sync.Mutex
	presented []string
	status    int
}

func (s *tokenService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.presented = append(s.presented, r.FormValue("refresh_token"))
	if s.status != http.StatusOK {
		w.WriteHeader(s.status)
		return
	}
	json.NewEncoder(w).Encode(Tokens{AccessToken: "access-2", RefreshToken: "refresh-2", ExpiresIn: 3600})
}

func (s *tokenService) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.presented...)
}

func newFlows(t *testing.T, h http.Handler) *Flows {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var secrets redact.Set
	f := New(Deps{API: &rest.Client{Base: srv.URL, HTTP: srv.Client()}, Clock: clock.Real{}, Secrets: &secrets,
		Logf: func(Severity, string, ...any) {}})
	f.Tokens = token.New(clock.Real{}, token.Timers{})
	t.Cleanup(f.Tokens.Stop)
	return f
}

// A refresh token is presented once: a second refresh with it fails locally (RFC 9700 4.14.2),
// unless the first provably never reached the service.
func TestRefreshPresentsATokenOnce(t *testing.T) {
	svc := &tokenService{status: http.StatusServiceUnavailable}
	f := newFlows(t, svc)
	ctx := context.Background()

	_, err := f.Refresh(1, "refresh-1")(ctx)
	var re *rest.Error
	require.ErrorAs(t, err, &re)
	require.True(t, re.Unprocessed(), "503 is unprocessed: %v", err)

	svc.mu.Lock()
	svc.status = http.StatusOK
	svc.mu.Unlock()
	got, err := f.Refresh(1, "refresh-1")(ctx)
	require.NoError(t, err, "an unprocessed refresh gives its token back")
	assert.Equal(t, "access-2", got.AccessToken)

	_, err = f.Refresh(1, "refresh-1")(ctx)
	assert.ErrorIs(t, err, ErrSpentRefresh)
	assert.Equal(t, []string{"refresh-1", "refresh-1"}, svc.seen(), "the spent token was sent again")
}

func TestGrantsAndChecks(t *testing.T) {
	g := CodeGrant(7, "code", "verifier", "http://127.0.0.1/cb").WithExternal("OIDC", "ext")
	assert.Equal(t, []string{"authorization_code"}, g["grant_type"])
	assert.Equal(t, []string{"7"}, g["client_id"])
	assert.Equal(t, []string{"OIDC"}, g["external_auth_type"])
	assert.Equal(t, []string{"ext"}, g["external_auth_token"])

	scopes, err := CheckDevice(7, "  openid   sdk.social_layer ")
	require.NoError(t, err)
	assert.Equal(t, "openid sdk.social_layer", scopes)
	var ve *sdkerr.ValidationError
	_, err = CheckDevice(7, " ")
	assert.ErrorAs(t, err, &ve, "no scopes")
	_, err = CheckDevice(0, "openid")
	assert.ErrorAs(t, err, &ve, "no application")
	assert.ErrorIs(t, Validate(Args{ClientID: 1}, 0), ErrNoScopes)
}
