package core

// Tests of the automatic token refresh against the real service with short-lived access tokens.

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sdkpp/core/gateway"
	"sdkpp/server"
	"sdkpp/server/servertest"
)

// shortTokens starts a service whose access tokens live for ttl.
func shortTokens(t *testing.T, ttl time.Duration) *servertest.Env {
	return servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.AccessTokenTTL = ttl }))
}

// signedIn authorizes alice through a new Client's own exchange and sets the token.
func signedIn(t *testing.T, env *servertest.Env) (*sdkClient, *tokens) {
	t.Helper()
	alice := env.User("alice")
	c := newSDKClient(t, env, func(u string) { follow(t, env.Approve(t, u, alice.Username, alice.Password)) })
	return c, signIn(t, env, c)
}

// signIn authorizes on c, exchanges the code and sets the access token; it returns the tokens.
func signIn(t *testing.T, env *servertest.Env, c *sdkClient) *tokens {
	t.Helper()
	code, redirect, verifier := authorizeCode(t, c)
	var tok *tokens
	c.GetToken(uint64(env.App.ID), code, verifier, redirect, tokenCallback(&tok))
	await(t, "GetToken", func() bool { return tok != nil })
	if !tok.result.Successful() || tok.fresh == "" {
		t.Fatalf("GetToken = %s", tok.result.ToString())
	}
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, tok.access, resultCallback(&up))
	await(t, "UpdateToken", func() bool { return up != nil })
	return tok
}

// logText returns the log lines so far.
func (c *sdkClient) logText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.logs, "\n")
}

// tokenInUse returns the access token the Client uses now.
func (c *Client) tokenInUse() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.auth.token
}

// A token the Client obtained with a refresh token is refreshed before it expires, the gateway
// session is re-authenticated with the new token and keeps delivering lobby events, the status
// never reaches Disconnected, the expiration callback does not run, and the old refresh token is
// spent (rotation; rule AU-6 for its reuse). No token reaches the log.
func TestAutoRefreshRenewsTheConnection(t *testing.T) {
	env := shortTokens(t, 6*time.Second)
	c, first := signedIn(t, env)
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))
	var stored []string // the pair the game would store: access, refresh
	c.SetTokenRefreshedCallback(Func(func(access, refresh string, typ AuthorizationTokenType, expiresIn int32, scopes string) {
		if typ == AuthorizationTokenTypeBearer && expiresIn > 0 && scopes != "" {
			stored = []string{access, refresh}
		}
	}))
	var changes []statusChange
	c.SetStatusChangedCallback(Func(func(s ClientStatus, e ClientError, d int32) { changes = append(changes, statusChange{s, e, d}) }))
	c.Connect()
	await(t, "Ready", func() bool { return c.GetStatus() == ClientStatusReady })
	var joined *ClientResult
	var lobbyID uint64
	c.CreateOrJoinLobby("refresh-lobby", Func(func(r *ClientResult, id uint64) { joined, lobbyID = r, id }))
	await(t, "CreateOrJoinLobby", func() bool { return joined != nil })
	if !joined.Successful() {
		t.Fatal(joined.ToString())
	}
	var added []uint64
	c.SetLobbyMemberAddedCallback(Func(func(_, member uint64) { added = append(added, member) }))

	// Half the lifetime (3 s) before expiry the SDK refreshes and renews the connection.
	await(t, "the automatic refresh", func() bool { return c.tokenInUse() != first.access })
	await(t, "the refreshed tokens handed to the game", func() bool { return stored != nil })
	if stored[0] != c.tokenInUse() || stored[1] == "" || stored[1] == first.fresh {
		t.Fatal("TokenRefreshedCallback did not get the new pair")
	}
	renewed := len(changes)
	await(t, "Ready after the renewal", func() bool {
		return slices.ContainsFunc(changes[renewed-1:], func(s statusChange) bool { return s.s == ClientStatusReady }) &&
			c.GetStatus() == ClientStatusReady
	})

	// The old access token expires on the service; a reconnect now has to present the new one.
	env.Clock.Advance(4 * time.Second)
	c.mu.Lock()
	gw := c.conn.gw
	c.mu.Unlock()
	before := len(changes)
	gw.Renew()
	await(t, "Ready with the new token", func() bool {
		return slices.ContainsFunc(changes[before:], func(s statusChange) bool { return s.s == ClientStatusReady })
	})

	// Lobby events still arrive after the renewals.
	p2 := connected(t, env, "refresh-friend")
	var res *ClientResult
	p2.CreateOrJoinLobby("refresh-lobby", Func(func(r *ClientResult, _ uint64) { res = r }))
	other := p2.GetCurrentUserV2().Id()
	await(t, "the new member's event", func() bool { return res != nil && slices.Contains(added, other) })
	if h := c.GetLobbyHandle(lobbyID); h == nil || !slices.Contains(h.LobbyMemberIds(), other) {
		t.Fatal("the lobby cache missed the new member")
	}

	for _, s := range changes {
		if s.s == ClientStatusDisconnected {
			t.Fatalf("the status reached Disconnected: %+v", changes)
		}
	}
	if !slices.ContainsFunc(changes, func(s statusChange) bool { return s.s == ClientStatusReconnecting && s.e == ClientErrorNone }) {
		t.Fatalf("no Reconnecting in %+v", changes)
	}
	RunCallbacks()
	if expired != 0 {
		t.Fatalf("the expiration callback ran %d times", expired)
	}
	// Refresh rotates: the refresh token the game was given is spent (rule AU-6).
	var again *tokens
	c.RefreshToken(uint64(env.App.ID), first.fresh, tokenCallback(&again))
	await(t, "RefreshToken with the spent token", func() bool { return again != nil })
	if again.result.Type() != ErrorTypeAuthorizationFailed {
		t.Fatalf("spent refresh token = %s", again.result.ToString())
	}
	logs := c.logText()
	if !strings.Contains(logs, "access token was refreshed") || strings.Contains(logs, first.access) || strings.Contains(logs, first.fresh) || strings.Contains(logs, c.tokenInUse()) {
		t.Fatalf("logs:\n%s", logs)
	}
}

// Rule AU-6: an automatic refresh refused with invalid_grant (the grant was revoked) runs the
// expiration callback and logs why, without the token.
func TestAutoRefreshRefused(t *testing.T) {
	env := shortTokens(t, 4*time.Second)
	c, first := signedIn(t, env)
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))
	var rev *ClientResult
	c.RevokeToken(uint64(env.App.ID), first.fresh, resultCallback(&rev)) // revokes the whole grant
	await(t, "RevokeToken", func() bool { return rev != nil })
	if !rev.Successful() {
		t.Fatal(rev.ToString())
	}
	await(t, "the expiration callback", func() bool { return expired == 1 })
	logs := c.logText()
	if !strings.Contains(logs, "automatic token refresh refused") || !strings.Contains(logs, "invalid_grant") || strings.Contains(logs, first.fresh) {
		t.Fatalf("logs:\n%s", logs)
	}
	if c.tokenInUse() != first.access {
		t.Fatal("a refused refresh changed the token")
	}
}

// failingFront forwards to the service, but cuts the first n refresh_token grants without an
// answer, as a flaky network would.
func failingFront(t *testing.T, env *servertest.Env, n int32) (*httptest.Server, *atomic.Int32) {
	target, _ := url.Parse(env.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var cut atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		if strings.HasSuffix(r.URL.Path, "/oauth2/token") && form.Get("grant_type") == "refresh_token" && cut.Load() < n {
			cut.Add(1)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front, &cut
}

// A refresh that fails on the network is retried with backoff until it succeeds; the game sees
// nothing but the new token in use.
func TestAutoRefreshRetriesNetworkErrors(t *testing.T) {
	saved := refreshBackoff
	refreshBackoff = gateway.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	t.Cleanup(func() { refreshBackoff = saved })
	env := shortTokens(t, 4*time.Second)
	front, cut := failingFront(t, env, 2)
	alice := env.User("alice")
	c := &sdkClient{Client: NewClientWithBases(front.URL+"/api/v10", env.URL)}
	t.Cleanup(c.Close)
	c.SetApplicationId(uint64(env.App.ID))
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) { c.mu.Lock(); c.logs = append(c.logs, m); c.mu.Unlock() }), LoggingSeverityVerbose)
	c.SetOpenUrlCallback(Func(func(u string) { follow(t, env.Approve(t, u, alice.Username, alice.Password)) }))
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))
	tok := signIn(t, env, c)
	await(t, "the refresh after two network failures", func() bool { return c.tokenInUse() != tok.access })
	if cut.Load() != 2 || expired != 0 {
		t.Fatalf("cut %d, expired %d", cut.Load(), expired)
	}
	if logs := c.logText(); strings.Count(logs, "automatic token refresh failed") != 2 || !strings.Contains(logs, "retrying in") {
		t.Fatalf("logs:\n%s", logs)
	}
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, c.tokenInUse(), Func(func(r *ClientResult, _ uint64, _ string) { fres = r }))
	await(t, "FetchCurrentUser with the new token", func() bool { return fres != nil })
	if !fres.Successful() {
		t.Fatal(fres.ToString())
	}
}
