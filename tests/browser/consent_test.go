// Package browser_test proves that the OAuth2 consent page of the platform service works in a real
// browser. A headless Chromium, driven over the DevTools protocol, loads GET /oauth2/authorize for
// the dev application (a public client using PKCE S256 and an RFC 8252 loopback redirect URI served
// by the test), and then:
//
//   - Approve: fills in the login form as alice and presses Approve. The browser must land on the
//     loopback redirect URI with a code and the request's state, and the code must be exchangeable
//     at POST /oauth2/token (with the PKCE verifier) for an access token that belongs to alice.
//   - Deny: presses Deny without logging in (the button skips form validation). The browser must
//     land on the redirect URI with error=access_denied and the state, and without a code.
//
// Each case saves a PNG screenshot of the consent page: in $SDKPP_ARTIFACTS_DIR/browser when that
// variable is set (a relative value is taken from the module root, so SDKPP_ARTIFACTS_DIR=build/test
// writes to build/test/browser), else in the test's temporary directory.
//
// The test needs Debian's chromium package. Without it the test is skipped, or fails when
// SDKPP_REQUIRE_BROWSER=1.
package browser_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// testTimeout bounds the whole test, browsers included.
const testTimeout = 60 * time.Second

// callbackPath is the path of an RFC 8252 loopback redirect URI the server accepts for public
// clients on any port.
const callbackPath = "/authorize/callback"

func TestConsentPageInChromium(t *testing.T) {
	chromium := findChromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()

	env := servertest.Start(t)
	alice := env.User("alice")
	shots := screenshotDir(t)

	tests := []struct {
		name   string
		login  bool   // fill in the login form before pressing the button
		button string // value of the submit button: "approve" or "deny"
		check  func(t *testing.T, got url.Values, verifier, redirectURI string)
	}{
		{
			name: "approve", login: true, button: "approve",
			check: func(t *testing.T, got url.Values, verifier, redirectURI string) {
				require.NotEmpty(t, got.Get("code"), "redirect query %q: want a code and no error", got.Encode())
				require.False(t, got.Has("error"), "redirect query %q: want a code and no error", got.Encode())
				tr := exchangeCode(t, ctx, env.APIURL, env.App.ID.String(), got.Get("code"), verifier, redirectURI)
				require.NotEmpty(t, tr.AccessToken, "token response %+v: want a Bearer access token and an id_token", tr)
				require.Equal(t, "Bearer", tr.TokenType, "token response %+v: want a Bearer access token and an id_token", tr)
				require.NotEmpty(t, tr.IDToken, "token response %+v: want a Bearer access token and an id_token", tr)
				me := getMe(t, ctx, env.APIURL, tr.AccessToken)
				require.Equal(t, alice.ID, me.ID, "users/@me = %+v, want %s", me, alice.Username)
				require.Equal(t, alice.Username, me.Username, "users/@me = %+v, want %s", me, alice.Username)
			},
		},
		{
			name: "deny", login: false, button: "deny",
			check: func(t *testing.T, got url.Values, _, _ string) {
				require.Equal(t, "access_denied", got.Get("error"), "redirect query %q: want error=access_denied and no code", got.Encode())
				require.False(t, got.Has("code"), "redirect query %q: want error=access_denied and no code", got.Encode())
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			callback := startCallback(t)
			redirectURI := callback.URL + callbackPath
			verifier, state := randomString(t), randomString(t)
			sum := sha256.Sum256([]byte(verifier))
			authorizeURL := env.URL + "/oauth2/authorize?" + url.Values{
				"response_type":         {"code"},
				"client_id":             {env.App.ID.String()},
				"redirect_uri":          {redirectURI},
				"scope":                 {"openid sdk.social_layer"},
				"state":                 {state},
				"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
				"code_challenge_method": {"S256"},
			}.Encode()

			browser := startBrowser(t, ctx, chromium)

			resp, err := chromedp.Run(browser, chromedp.NavigateResponse(authorizeURL))
			require.NoError(t, err, "load consent page")
			require.Equal(t, int64(http.StatusOK), resp.Status, "consent page: HTTP %d", resp.Status)
			heading, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("h1"), chromedp.NodeVisible))
			require.NoError(t, err, "consent page heading")
			want := "Authorize " + env.App.Name
			assert.Equal(t, want, heading, "consent page heading %q, want %q", heading, want)
			if tc.login {
				require.NoError(t, chromedp.Do(browser,
					chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), alice.Username, chromedp.NodeVisible),
					chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), alice.Password, chromedp.NodeVisible),
				), "fill in the login form")
			}
			png, err := chromedp.Run(browser, chromedp.FullScreenshot(100)) // quality 100 = PNG
			require.NoError(t, err, "screenshot")
			shot := filepath.Join(shots, "consent-"+tc.name+".png")
			require.NoError(t, os.WriteFile(shot, png, 0o644))
			t.Logf("consent page screenshot: %s", shot)

			// Press the button; RunResponse waits for the page the click leads to (after the
			// server's 302 to the redirect URI).
			button := chromedp.CSS(fmt.Sprintf(`button[name="action"][value=%q]`, tc.button))
			resp, err = chromedp.RunResponse(browser, chromedp.Click(button, chromedp.NodeVisible))
			require.NoError(t, err, "press %s", tc.button)
			location, err := chromedp.Run(browser, chromedp.Location())
			require.NoError(t, err, "browser location")
			landed, err := url.Parse(location)
			require.NoError(t, err, "browser location %q", location)
			require.Equal(t, int64(http.StatusOK), resp.Status, "after %s the browser is at %s (HTTP %d), want the redirect URI %s", tc.button, location, resp.Status, redirectURI)
			require.Equal(t, redirectURI, landed.Scheme+"://"+landed.Host+landed.Path, "after %s the browser is at %s (HTTP %d), want the redirect URI %s", tc.button, location, resp.Status, redirectURI)
			got := landed.Query()
			assert.Equal(t, state, got.Get("state"), "redirect state %q, want %q", got.Get("state"), state)
			served := callback.query(t, ctx)
			assert.Equal(t, got.Encode(), served.Encode(), "the callback listener got %q, the browser shows %q", served.Encode(), got.Encode())
			tc.check(t, got, verifier, redirectURI)
		})
	}
}

// findChromium returns the path of the chromium binary, or skips (fails with
// SDKPP_REQUIRE_BROWSER=1) when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const msg = "no chromium binary on PATH: install Debian's chromium package (apt-get install -y --no-install-recommends chromium)"
	if os.Getenv("SDKPP_REQUIRE_BROWSER") == "1" {
		require.FailNow(t, msg)
	}
	t.Skip(msg)
	return ""
}

// startBrowser starts a headless Chromium with a fresh profile and no background networking; it
// is closed when the test ends.
func startBrowser(t *testing.T, ctx context.Context, chromium string) context.Context {
	t.Helper()
	profile := t.TempDir() // before the Cleanups below, so it is removed after Chromium exits
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(900, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	return browser
}

// callback is the application's loopback redirect endpoint.
type callback struct {
	URL     string // http://127.0.0.1:<port>
	queries chan url.Values
}

func startCallback(t *testing.T) *callback {
	t.Helper()
	c := &callback{queries: make(chan url.Values, 4)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+callbackPath, func(w http.ResponseWriter, r *http.Request) {
		select {
		case c.queries <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Signed in</title><p>You can close this window.</p>")
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// query returns the query of the first request the callback got.
func (c *callback) query(t *testing.T, ctx context.Context) url.Values {
	t.Helper()
	select {
	case q := <-c.queries:
		return q
	case <-ctx.Done():
		require.FailNow(t, "the callback listener got no request", "%v", ctx.Err())
		return nil
	}
}

// exchangeCode redeems an authorization code as the public client (no secret, PKCE verifier).
func exchangeCode(t *testing.T, ctx context.Context, apiURL, clientID, code, verifier, redirectURI string) wire.TokenResponse {
	t.Helper()
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"client_id":     {clientID},
		"code":          {code},
		"code_verifier": {verifier},
		"redirect_uri":  {redirectURI},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/oauth2/token", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tr wire.TokenResponse
	doJSON(t, req, &tr)
	return tr
}

// getMe returns the user of an access token.
func getMe(t *testing.T, ctx context.Context, apiURL, accessToken string) wire.User {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/users/@me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+accessToken)
	var u wire.User
	doJSON(t, req, &u)
	return u
}

// doJSON sends req and decodes a 200 JSON answer into v.
func doJSON(t *testing.T, req *http.Request, v any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s %s", req.Method, req.URL.Path)
	defer resp.Body.Close()
	var body json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body), "%s %s: HTTP %d, body not JSON", req.Method, req.URL.Path, resp.StatusCode)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: HTTP %d %s", req.Method, req.URL.Path, resp.StatusCode, body)
	require.NoError(t, json.Unmarshal(body, v), "%s %s", req.Method, req.URL.Path)
}

// randomString returns 32 random bytes in base64url: 43 characters, a valid PKCE verifier.
func randomString(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString(b)
}

// screenshotDir is $SDKPP_ARTIFACTS_DIR/browser (created) when the variable is set, else a
// temporary directory of the test.
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("SDKPP_ARTIFACTS_DIR")
	if root == "" {
		return t.TempDir()
	}
	if !filepath.IsAbs(root) {
		mod, err := moduleRoot()
		require.NoError(t, err)
		root = filepath.Join(mod, root)
	}
	dir := filepath.Join(root, "browser")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// moduleRoot is the nearest directory above the working directory (the package's) with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
