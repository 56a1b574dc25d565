package core

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"sdkpp/core/auth"
	"sdkpp/core/logs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drain runs every queued callback.
func drain() {
	for RunCallbacks() > 0 {
	}
}

// captureLogs adds a log callback to c and returns the messages it received so far.
func captureLogs(c *Client, min LoggingSeverity) func() []string {
	var got []string
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) { got = append(got, m) }), min)
	return func() []string { drain(); return got }
}

func TestDefaultScopes(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() string
		want string
	}{
		{"communication scopes", ClientGetDefaultCommunicationScopes, "openid sdk.social_layer"}, // rule SC-1
		{"presence scopes", ClientGetDefaultPresenceScopes, "openid sdk.social_layer_presence"},  // rule SC-2
	} {
		assert.Equal(t, tc.want, tc.got(), tc.name)
	}
}

// rule LIM-3: the HTTP timeout defaults to 30000 ms and refuses non-positive values.
func TestHTTPTimeout(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityWarning)
	got := c.GetHttpRequestTimeout()
	require.EqualValues(t, 30000, got, "default = %d ms", got)
	c.SetHttpRequestTimeout(2500)
	require.EqualValues(t, 2500, c.GetHttpRequestTimeout(), "after set = %d", c.GetHttpRequestTimeout())
	require.EqualValues(t, 2500, c.HTTPTimeout().Milliseconds(), "after set = %d", c.GetHttpRequestTimeout())
	c.SetHttpRequestTimeout(0)
	c.SetHttpRequestTimeout(-7)
	require.EqualValues(t, 2500, c.GetHttpRequestTimeout(), "a refused value changed the timeout to %d", c.GetHttpRequestTimeout())
	l := logs()
	require.Len(t, l, 2, "logs = %q", l)
	assert.Contains(t, l[1], "-7 ms", "logs = %q", l)
}

// rule OPT-1: the three create options, and bases that are not URLs fall back with a log.
func TestClientCreateOptions(t *testing.T) {
	o := NewClientCreateOptions()
	require.Equal(t, AudioSystemStandard, o.ExperimentalAudioSystem(), "defaults")
	require.False(t, o.ExperimentalAndroidPreventCommsForBluetooth(), "defaults")
	_, ok := o.CpuAffinityMask()
	require.False(t, ok, "CpuAffinityMask set by default")
	mask := uint64(0b1010)
	o.SetExperimentalAudioSystem(AudioSystemGame)
	o.SetExperimentalAndroidPreventCommsForBluetooth(true)
	o.SetCpuAffinityMask(&mask)
	mask = 0 // the option holds its own copy
	cp := o.Clone()
	o.SetCpuAffinityMask(nil)
	m, ok := cp.CpuAffinityMask()
	require.True(t, ok, "clone = %+v", cp)
	require.EqualValues(t, 0b1010, m, "clone = %+v", cp)
	require.Equal(t, AudioSystemGame, cp.ExperimentalAudioSystem(), "clone = %+v", cp)
	require.True(t, cp.ExperimentalAndroidPreventCommsForBluetooth(), "clone = %+v", cp)
	c := NewClientWithBases("ftp://example", "not a url")
	defer c.Close()
	require.Equal(t, DefaultAPIBase, c.apiBase, "bases = %q %q", c.apiBase, c.webBase)
	require.Equal(t, DefaultWebBase, c.webBase, "bases = %q %q", c.apiBase, c.webBase)
	c2 := NewClientWithBases("http://127.0.0.1:9/api", "https://web.example")
	defer c2.Close()
	assert.Equal(t, "http://127.0.0.1:9/api", c2.apiBase, "bases = %q %q", c2.apiBase, c2.webBase)
	assert.Equal(t, "https://web.example", c2.webBase, "bases = %q %q", c2.apiBase, c2.webBase)
}

func TestAuthorizationArgsCloneIsDeep(t *testing.T) {
	a := NewAuthorizationArgs()
	s, it := "state", IntegrationTypeUserInstall
	a.SetState(&s)
	a.SetIntegrationType(&it)
	ch := NewAuthorizationCodeChallenge()
	ch.SetChallenge("abc")
	a.SetCodeChallenge(ch)
	ch.SetChallenge("changed") // the args hold a copy
	b := a.Clone()
	b.SetState(nil)
	b.CodeChallenge().SetChallenge("ignored") // getters return copies
	v, ok := a.State()
	assert.True(t, ok, "clone shares State")
	assert.Equal(t, "state", v, "clone shares State")
	assert.Equal(t, "abc", a.CodeChallenge().Challenge(), "challenge not copied")
	assert.Equal(t, "abc", b.CodeChallenge().Challenge(), "challenge not copied")
}

// rule AA-5 (local part): the verifier and challenge are a valid S256 PKCE pair.
func TestCreateAuthorizationCodeVerifier(t *testing.T) {
	c := NewClient()
	defer c.Close()
	v := c.CreateAuthorizationCodeVerifier()
	n := len(v.Verifier())
	require.GreaterOrEqual(t, n, 43, "verifier length %d", n)
	require.LessOrEqual(t, n, 128, "verifier length %d", n)
	sum := sha256.Sum256([]byte(v.Verifier()))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	require.Equal(t, want, v.Challenge().Challenge(), "challenge %q, want %q", v.Challenge().Challenge(), want)
	require.Equal(t, AuthenticationCodeChallengeMethodS256, v.Challenge().Method(), "method")
	w := c.CreateAuthorizationCodeVerifier()
	assert.NotEqual(t, v.Verifier(), w.Verifier(), "two verifiers are equal")
}

func fixedRand(b []byte) error {
	for i := range b {
		b[i] = byte(i)
	}
	return nil
}

func TestAuthorizeRequest(t *testing.T) {
	mobile := auth.RedirectTarget{}
	desktop := auth.RedirectTarget{Loopback: "127.0.0.1:53124"}
	state := "fixed-state"
	ch := NewAuthorizationCodeChallenge()
	ch.SetChallenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
	guild := IntegrationTypeGuildInstall
	scheme := "mygame"
	badScheme := "9bad scheme"

	cases := []struct {
		name   string
		args   func(*AuthorizationArgs)
		appID  uint64
		target auth.RedirectTarget
		want   map[string]string // query values that must be present
		absent []string
		redir  string
		err    string
	}{
		{name: "rule AA-2 no scopes", args: func(a *AuthorizationArgs) {}, appID: 1, err: "Scopes is required"},
		{name: "rule AA-2 blank scopes", args: func(a *AuthorizationArgs) { a.SetScopes("   ") }, appID: 1, err: "Scopes is required"},
		{name: "rule AA-1 client id from SetApplicationId",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid  sdk.social_layer") }, appID: 77, target: desktop,
			want:  map[string]string{"client_id": "77", "scope": "openid sdk.social_layer", "response_type": "code"},
			redir: "http://127.0.0.1:53124/authorize/callback"},
		{name: "rule AA-1 explicit client id wins",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid"); a.SetClientId(9) }, appID: 77, target: desktop,
			want: map[string]string{"client_id": "9"}},
		{name: "no application id at all", args: func(a *AuthorizationArgs) { a.SetScopes("openid") }, err: "no application id"},
		{name: "rule AA-3 generated state",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid") }, appID: 1, target: desktop,
			want: map[string]string{"state": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}},
		{name: "rule AA-3 given state, rule AA-4 nonce, rule AA-6 integration type, PKCE",
			args: func(a *AuthorizationArgs) {
				n := "n-1"
				a.SetScopes("openid")
				a.SetState(&state)
				a.SetNonce(&n)
				a.SetIntegrationType(&guild)
				a.SetCodeChallenge(ch)
			}, appID: 1, target: desktop,
			want: map[string]string{"state": "fixed-state", "nonce": "n-1", "integration_type": "0",
				"code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256"}},
		{name: "rule AA-6 unset integration type is not sent",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid") }, appID: 1, target: desktop,
			absent: []string{"integration_type", "nonce", "code_challenge"}},
		{name: "rule AA-7 default mobile redirect",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid") }, appID: 1234, target: mobile,
			redir: "sdkpp-1234:/authorize/callback"},
		{name: "rule AA-7 custom scheme",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid"); a.SetCustomSchemeParam(&scheme) }, appID: 1234, target: mobile,
			redir: "mygame:/authorize/callback"},
		{name: "rule AA-7 invalid custom scheme",
			args: func(a *AuthorizationArgs) { a.SetScopes("openid"); a.SetCustomSchemeParam(&badScheme) }, appID: 1, target: mobile,
			err: "not a URI scheme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := NewAuthorizationArgs()
			c.args(args)
			req, err := auth.BuildRequest(authArgs(args), c.appID, "http://127.0.0.1:7710/", c.target, fixedRand)
			if c.err != "" {
				require.Error(t, err, "err = %v, want %q", err, c.err)
				require.Contains(t, err.Error(), c.err, "err = %v, want %q", err, c.err)
				if c.name == "rule AA-2 no scopes" {
					require.ErrorIs(t, err, ErrNoScopes, "err = %v, want ErrNoScopes", err)
				}
				return
			}
			require.NoError(t, err)
			u, err := url.Parse(req.URL)
			require.NoError(t, err, "URL %q", req.URL)
			require.Equal(t, "/oauth2/authorize", u.Path, "URL %q", req.URL)
			require.Equal(t, "127.0.0.1:7710", u.Host, "URL %q", req.URL)
			q := u.Query()
			for k, v := range c.want {
				assert.Equal(t, v, q.Get(k), "%s = %q, want %q", k, q.Get(k), v)
			}
			for _, k := range c.absent {
				assert.False(t, q.Has(k), "%s present", k)
			}
			assert.Equal(t, req.State, q.Get("state"), "request fields disagree with URL: %+v", req)
			assert.Equal(t, req.RedirectURI, q.Get("redirect_uri"), "request fields disagree with URL: %+v", req)
			if c.redir != "" {
				assert.Equal(t, c.redir, req.RedirectURI, "redirect = %q, want %q", req.RedirectURI, c.redir)
			}
		})
	}
	// Without an injected source the state is random.
	args := NewAuthorizationArgs()
	args.SetScopes("openid")
	r1, _ := auth.BuildRequest(authArgs(args), 1, DefaultWebBase, desktop, nil)
	r2, _ := auth.BuildRequest(authArgs(args), 1, DefaultWebBase, desktop, nil)
	assert.NotEqual(t, r2.State, r1.State, "states %q %q", r1.State, r2.State)
	assert.GreaterOrEqual(t, len(r1.State), 40, "states %q %q", r1.State, r2.State)
}

// rule AU-10: no log sink ever sees a credential, at any level.
func TestLogsAreRedacted(t *testing.T) {
	c := NewClient()
	defer c.Close()
	dir := t.TempDir()
	require.True(t, c.SetLogDir(dir, LoggingSeverityVerbose), "SetLogDir failed")
	logs := captureLogs(c, LoggingSeverityVerbose)
	v := c.CreateAuthorizationCodeVerifier()
	c.logf(LoggingSeverityVerbose, "token response: %s", `{"access_token":"at-123456789","refresh_token":"rt-987654321"}`)
	c.logf(LoggingSeverityInfo, "GET /users/@me Authorization: Bearer abc.def-ghi")
	c.logf(LoggingSeverityError, "exchanging code with verifier %s", v.Verifier())
	Log(LoggingSeverityWarning, "global: client_secret=s3cr3t-value")
	file, err := os.ReadFile(filepath.Join(dir, "sdkpp.log"))
	require.NoError(t, err)
	got := logs()
	require.Len(t, got, 4, "got %d messages: %q", len(got), got)
	all := strings.Join(got, "\n") + string(file)
	for _, secret := range []string{"at-123456789", "rt-987654321", "abc.def-ghi", v.Verifier(), "s3cr3t-value"} {
		assert.NotContains(t, all, secret, "%q reached a log:\n%s", secret, all)
	}
	assert.EqualValues(t, 4, strings.Count(string(file), "\n"), "log file:\n%s", file)
}

func TestLogSeverityFilterAndBacklogBound(t *testing.T) {
	c := NewClient()
	defer c.Close()
	var got []string
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) { got = append(got, m) }), LoggingSeverityWarning)
	c.logf(LoggingSeverityInfo, "quiet")
	for i := 0; i < logs.MaxPending+5; i++ {
		c.logf(LoggingSeverityError, "loud %d", i)
	}
	drain()
	// The backlog holds logs.MaxPending messages; the first delivery says how many were dropped.
	require.Len(t, got, logs.MaxPending+1, "delivered %d, first %q", len(got), got[:2])
	require.Contains(t, got[0], "5 log messages were dropped", "delivered %d, first %q", len(got), got[:2])
	require.Equal(t, "loud 0", got[1], "delivered %d, first %q", len(got), got[:2])
	c.logf(LoggingSeverityError, "after")
	drain()
	assert.Equal(t, "after", got[len(got)-1], "tail = %q", got[len(got)-2:])
	assert.Len(t, got, logs.MaxPending+2, "tail = %q", got[len(got)-2:])
}

func TestSetLogDirFailure(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityError)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	require.False(t, c.SetLogDir(filepath.Join(file, "sub"), LoggingSeverityInfo), "SetLogDir under a file succeeded")
	require.False(t, c.SetLogDir("", LoggingSeverityInfo), "empty SetLogDir succeeded")
	l := logs()
	require.Len(t, l, 2, "logs = %q", l)
	assert.Contains(t, l[0], "SetLogDir", "logs = %q", l)
}

// One-shots fire once inside RunCallbacks; a Client closed first makes them ClientDestroyed, and
// every callback is released.
func TestOneShotsAndClose(t *testing.T) {
	c := NewClient()
	released := 0
	rel := func() { released++ }
	var results []*ClientResult
	installed := []bool{}
	c.IsDiscordAppInstalled(Callback[ClientIsDiscordAppInstalledCallback]{Fn: func(b bool) { installed = append(installed, b) }, Release: rel})
	c.OpenConnectedGamesSettingsInPlatform(Callback[ClientOpenConnectedGamesSettingsInPlatformCallback]{
		Fn: func(r *ClientResult) { results = append(results, r) }, Release: rel})
	c.AddLogCallback(Callback[ClientLogCallback]{Fn: func(string, LoggingSeverity) {}, Release: rel}, LoggingSeverityInfo)
	require.Empty(t, installed, "callbacks ran outside RunCallbacks")
	require.Empty(t, results, "callbacks ran outside RunCallbacks")
	drain()
	require.Len(t, installed, 1, "installed=%v results=%v released=%d", installed, results, released)
	require.False(t, installed[0], "installed=%v results=%v released=%d", installed, results, released)
	require.Len(t, results, 1, "installed=%v results=%v released=%d", installed, results, released)
	require.Equal(t, ErrorTypeClientNotReady, results[0].Type(), "installed=%v results=%v released=%d", installed, results, released)
	require.EqualValues(t, 2, released, "installed=%v results=%v released=%d", installed, results, released)
	c.OpenConnectedGamesSettingsInPlatform(Callback[ClientOpenConnectedGamesSettingsInPlatformCallback]{
		Fn: func(r *ClientResult) { results = append(results, r) }, Release: rel})
	c.Close()
	c.Close()
	require.EqualValues(t, 3, released, "log callback not released on Close: %d", released)
	drain()
	require.Len(t, results, 2, "results=%v released=%d", results, released)
	require.Equal(t, ErrorTypeClientDestroyed, results[1].Type(), "results=%v released=%d", results, released)
	require.EqualValues(t, 4, released, "results=%v released=%d", results, released)
	require.Contains(t, results[1].ToString(), "ClientDestroyed", results[1].ToString())
	// Calls on a closed client still answer exactly once.
	c.IsDiscordAppInstalled(Callback[ClientIsDiscordAppInstalledCallback]{Fn: func(b bool) { installed = append(installed, b) }, Release: rel})
	drain()
	assert.Len(t, installed, 2, "after close: installed=%v released=%d", installed, released)
	assert.EqualValues(t, 5, released, "after close: installed=%v released=%d", installed, released)
}

func TestManyClients(t *testing.T) {
	for i := 0; i < 500; i++ {
		c := NewClient()
		c.SetApplicationId(uint64(i))
		c.IsDiscordAppInstalled(Func(func(bool) {}))
		c.Close()
	}
	drain()
	n := clients.Len()
	assert.Zero(t, n, "%d clients still registered", n)
}
