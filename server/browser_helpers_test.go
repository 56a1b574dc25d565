package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/browser"
)

type browserSession struct{ b *browser.Browser }

func newBrowserSession(t *testing.T) *browserSession { return &browserSession{b: browser.New()} }

func (s *browserSession) approve(t *testing.T, u, user, pw string) string {
	t.Helper()
	loc, err := s.b.Authorize(context.Background(), u, browser.Choice{Username: user, Password: pw})
	require.NoError(t, err)
	return loc
}

// get loads a URL in the session and returns the redirect Location.
func (s *browserSession) get(t *testing.T, u string) string {
	t.Helper()
	p, err := s.b.Get(context.Background(), u)
	require.NoError(t, err)
	require.Equal(t, http.StatusFound, p.Status, "GET %s: %d, want a redirect", u, p.Status)
	return p.Location
}

func verifierFor(seed string) string { v, _ := pkce(seed); return v }
