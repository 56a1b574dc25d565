package core

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if got := ClientGetDefaultCommunicationScopes(); got != "openid sdk.social_layer" { // rule SC-1
		t.Fatalf("communication scopes = %q", got)
	}
	if got := ClientGetDefaultPresenceScopes(); got != "openid sdk.social_layer_presence" { // rule SC-2
		t.Fatalf("presence scopes = %q", got)
	}
}

// rule LIM-3: the HTTP timeout defaults to 30000 ms and refuses non-positive values.
func TestHTTPTimeout(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityWarning)
	if got := c.GetHttpRequestTimeout(); got != 30000 {
		t.Fatalf("default = %d ms", got)
	}
	c.SetHttpRequestTimeout(2500)
	if c.GetHttpRequestTimeout() != 2500 || c.HTTPTimeout().Milliseconds() != 2500 {
		t.Fatalf("after set = %d", c.GetHttpRequestTimeout())
	}
	c.SetHttpRequestTimeout(0)
	c.SetHttpRequestTimeout(-7)
	if c.GetHttpRequestTimeout() != 2500 {
		t.Fatalf("a refused value changed the timeout to %d", c.GetHttpRequestTimeout())
	}
	if l := logs(); len(l) != 2 || !strings.Contains(l[1], "-7 ms") {
		t.Fatalf("logs = %q", l)
	}
}

// rule OPT-1: the three create options, and bases that are not URLs fall back with a log.
func TestClientCreateOptions(t *testing.T) {
	o := NewClientCreateOptions()
	if o.ExperimentalAudioSystem() != AudioSystemStandard || o.ExperimentalAndroidPreventCommsForBluetooth() {
		t.Fatal("defaults")
	}
	if _, ok := o.CpuAffinityMask(); ok {
		t.Fatal("CpuAffinityMask set by default")
	}
	mask := uint64(0b1010)
	o.SetExperimentalAudioSystem(AudioSystemGame)
	o.SetExperimentalAndroidPreventCommsForBluetooth(true)
	o.SetCpuAffinityMask(&mask)
	mask = 0 // the option holds its own copy
	cp := o.Clone()
	o.SetCpuAffinityMask(nil)
	if m, ok := cp.CpuAffinityMask(); !ok || m != 0b1010 || cp.ExperimentalAudioSystem() != AudioSystemGame || !cp.ExperimentalAndroidPreventCommsForBluetooth() {
		t.Fatalf("clone = %+v", cp)
	}
	c := NewClientWithBases("ftp://example", "not a url")
	defer c.Close()
	if c.apiBase != DefaultAPIBase || c.webBase != DefaultWebBase {
		t.Fatalf("bases = %q %q", c.apiBase, c.webBase)
	}
	c2 := NewClientWithBases("http://127.0.0.1:9/api", "https://web.example")
	defer c2.Close()
	if c2.apiBase != "http://127.0.0.1:9/api" || c2.webBase != "https://web.example" {
		t.Fatalf("bases = %q %q", c2.apiBase, c2.webBase)
	}
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
	if v, ok := a.State(); !ok || v != "state" {
		t.Fatal("clone shares State")
	}
	if a.CodeChallenge().Challenge() != "abc" || b.CodeChallenge().Challenge() != "abc" {
		t.Fatal("challenge not copied")
	}
}

// rule AA-5 (local part): the verifier and challenge are a valid S256 PKCE pair.
func TestCreateAuthorizationCodeVerifier(t *testing.T) {
	c := NewClient()
	defer c.Close()
	v := c.CreateAuthorizationCodeVerifier()
	if n := len(v.Verifier()); n < 43 || n > 128 {
		t.Fatalf("verifier length %d", n)
	}
	sum := sha256.Sum256([]byte(v.Verifier()))
	if want := base64.RawURLEncoding.EncodeToString(sum[:]); v.Challenge().Challenge() != want {
		t.Fatalf("challenge %q, want %q", v.Challenge().Challenge(), want)
	}
	if v.Challenge().Method() != AuthenticationCodeChallengeMethodS256 {
		t.Fatal("method")
	}
	if w := c.CreateAuthorizationCodeVerifier(); w.Verifier() == v.Verifier() {
		t.Fatal("two verifiers are equal")
	}
}

func fixedRand(b []byte) error {
	for i := range b {
		b[i] = byte(i)
	}
	return nil
}

func TestAuthorizeRequest(t *testing.T) {
	mobile := RedirectTarget{}
	desktop := RedirectTarget{Loopback: "127.0.0.1:53124"}
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
		target RedirectTarget
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
			req, err := buildAuthorizeRequest(args, c.appID, "http://127.0.0.1:7710/", c.target, fixedRand)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				if c.name == "rule AA-2 no scopes" && !errors.Is(err, ErrNoScopes) {
					t.Fatalf("err = %v, want ErrNoScopes", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(req.URL)
			if err != nil || u.Path != "/oauth2/authorize" || u.Host != "127.0.0.1:7710" {
				t.Fatalf("URL %q", req.URL)
			}
			q := u.Query()
			for k, v := range c.want {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			for _, k := range c.absent {
				if q.Has(k) {
					t.Errorf("%s present", k)
				}
			}
			if q.Get("state") != req.State || q.Get("redirect_uri") != req.RedirectURI {
				t.Errorf("request fields disagree with URL: %+v", req)
			}
			if c.redir != "" && req.RedirectURI != c.redir {
				t.Errorf("redirect = %q, want %q", req.RedirectURI, c.redir)
			}
		})
	}
	// Without an injected source the state is random.
	args := NewAuthorizationArgs()
	args.SetScopes("openid")
	r1, _ := buildAuthorizeRequest(args, 1, DefaultWebBase, desktop, nil)
	r2, _ := buildAuthorizeRequest(args, 1, DefaultWebBase, desktop, nil)
	if r1.State == r2.State || len(r1.State) < 40 {
		t.Fatalf("states %q %q", r1.State, r2.State)
	}
}

// rule AU-10: no log sink ever sees a credential, at any level.
func TestLogsAreRedacted(t *testing.T) {
	c := NewClient()
	defer c.Close()
	dir := t.TempDir()
	if !c.SetLogDir(dir, LoggingSeverityVerbose) {
		t.Fatal("SetLogDir failed")
	}
	logs := captureLogs(c, LoggingSeverityVerbose)
	v := c.CreateAuthorizationCodeVerifier()
	c.logf(LoggingSeverityVerbose, "token response: %s", `{"access_token":"at-123456789","refresh_token":"rt-987654321"}`)
	c.logf(LoggingSeverityInfo, "GET /users/@me Authorization: Bearer abc.def-ghi")
	c.logf(LoggingSeverityError, "exchanging code with verifier %s", v.Verifier())
	Log(LoggingSeverityWarning, "global: client_secret=s3cr3t-value")
	file, err := os.ReadFile(filepath.Join(dir, "sdkpp.log"))
	if err != nil {
		t.Fatal(err)
	}
	got := logs()
	if len(got) != 4 {
		t.Fatalf("got %d messages: %q", len(got), got)
	}
	all := strings.Join(got, "\n") + string(file)
	for _, secret := range []string{"at-123456789", "rt-987654321", "abc.def-ghi", v.Verifier(), "s3cr3t-value"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q reached a log:\n%s", secret, all)
		}
	}
	if strings.Count(string(file), "\n") != 4 {
		t.Errorf("log file:\n%s", file)
	}
}

func TestLogSeverityFilterAndBacklogBound(t *testing.T) {
	c := NewClient()
	defer c.Close()
	var got []string
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) { got = append(got, m) }), LoggingSeverityWarning)
	c.logf(LoggingSeverityInfo, "quiet")
	for i := 0; i < maxPendingLogs+5; i++ {
		c.logf(LoggingSeverityError, "loud %d", i)
	}
	drain()
	// The backlog holds maxPendingLogs messages; the first delivery says how many were dropped.
	if len(got) != maxPendingLogs+1 || !strings.Contains(got[0], "5 log messages were dropped") || got[1] != "loud 0" {
		t.Fatalf("delivered %d, first %q", len(got), got[:2])
	}
	c.logf(LoggingSeverityError, "after")
	drain()
	if got[len(got)-1] != "after" || len(got) != maxPendingLogs+2 {
		t.Fatalf("tail = %q", got[len(got)-2:])
	}
}

func TestSetLogDirFailure(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityError)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if c.SetLogDir(filepath.Join(file, "sub"), LoggingSeverityInfo) {
		t.Fatal("SetLogDir under a file succeeded")
	}
	if c.SetLogDir("", LoggingSeverityInfo) {
		t.Fatal("empty SetLogDir succeeded")
	}
	if l := logs(); len(l) != 2 || !strings.Contains(l[0], "SetLogDir") {
		t.Fatalf("logs = %q", l)
	}
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
	if len(installed)+len(results) != 0 {
		t.Fatal("callbacks ran outside RunCallbacks")
	}
	drain()
	if len(installed) != 1 || installed[0] || len(results) != 1 || results[0].Type() != ErrorTypeClientNotReady || released != 2 {
		t.Fatalf("installed=%v results=%v released=%d", installed, results, released)
	}
	c.OpenConnectedGamesSettingsInPlatform(Callback[ClientOpenConnectedGamesSettingsInPlatformCallback]{
		Fn: func(r *ClientResult) { results = append(results, r) }, Release: rel})
	c.Close()
	c.Close()
	if released != 3 {
		t.Fatalf("log callback not released on Close: %d", released)
	}
	drain()
	if len(results) != 2 || results[1].Type() != ErrorTypeClientDestroyed || released != 4 {
		t.Fatalf("results=%v released=%d", results, released)
	}
	if !strings.Contains(results[1].ToString(), "ClientDestroyed") {
		t.Fatal(results[1].ToString())
	}
	// Calls on a closed client still answer exactly once.
	c.IsDiscordAppInstalled(Callback[ClientIsDiscordAppInstalledCallback]{Fn: func(b bool) { installed = append(installed, b) }, Release: rel})
	drain()
	if len(installed) != 2 || released != 5 {
		t.Fatalf("after close: installed=%v released=%d", installed, released)
	}
}

func TestClientResultToString(t *testing.T) {
	if Success().ToString() != "ClientResult{Successful}" {
		t.Fatal(Success().ToString())
	}
	r := Failure(ErrorTypeHTTPError, "rate limited, Bearer abcdefghijk")
	r.SetStatus(HttpStatusCodeTooManyRequests)
	r.SetErrorCode(0)
	r.SetRetryable(true)
	r.SetRetryAfter(1.5)
	s := r.ToString()
	if !strings.Contains(s, "HTTPError") || !strings.Contains(s, "429") || !strings.Contains(s, "RetryAfter: 1.5s") || strings.Contains(s, "abcdefghijk") {
		t.Fatal(s)
	}
	if !HttpStatusCode(418).Valid() || HttpStatusCode(418).String() != "unknown" {
		t.Fatal("HttpStatusCode is an open enum")
	}
	if IntegrationType(5).Valid() {
		t.Fatal("IntegrationType(5) is valid")
	}
}

func TestManyClients(t *testing.T) {
	for i := 0; i < 500; i++ {
		c := NewClient()
		c.SetApplicationId(uint64(i))
		c.IsDiscordAppInstalled(Func(func(bool) {}))
		c.Close()
	}
	drain()
	clients.mu.Lock()
	n := len(clients.set)
	clients.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d clients still registered", n)
	}
}
