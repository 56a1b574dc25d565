package core

// Tests of the automatic token refresh against the real service with short-lived access tokens.
// The Client runs on a fake clock, which the tests move past each refresh instead of waiting.

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sdkpp/core/auth"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/clock"
	"sdkpp/server"
	"sdkpp/server/servertest"
)

// shortTokens starts a service whose access tokens live for ttl.
func shortTokens(t *testing.T, ttl time.Duration) *servertest.Env {
	return servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.AccessTokenTTL = ttl }))
}

// signedIn authorizes alice through a new Client, on a fake clock, with its own exchange and
// sets the token.
func signedIn(t *testing.T, env *servertest.Env) (*sdkClient, *clock.Fake, *tokens) {
	t.Helper()
	alice := env.User("alice")
	c := newSDKClient(t, env, func(u string) { follow(t, env.Approve(t, u, alice.Username, alice.Password)) })
	clk := onFakeClock(c.Client)
	return c, clk, signIn(t, env, c)
}

// signIn authorizes on c, exchanges the code and sets the access token; it returns the tokens.
func signIn(t *testing.T, env *servertest.Env, c *sdkClient) *tokens {
	t.Helper()
	code, redirect, verifier := authorizeCode(t, c)
	var tok *tokens
	c.GetToken(uint64(env.App.ID), code, verifier, redirect, tokenCallback(&tok))
	await(t, "GetToken", func() bool { return tok != nil })
	require.True(t, tok.result.Successful(), "GetToken = %s", tok.result.ToString())
	require.NotEmpty(t, tok.fresh, "GetToken gave no refresh token")
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
func (c *Client) tokenInUse() string { return c.auth.tokens.Get() }

// A token the Client obtained with a refresh token is refreshed before it expires, the gateway
// session is re-authenticated with the new token and keeps delivering lobby events, the status
// never reaches Disconnected, the expiration callback does not run, and the old refresh token is
// spent (rotation; rule AU-6 for its reuse). No token reaches the log.
func TestAutoRefreshRenewsTheConnection(t *testing.T) {
	env := shortTokens(t, 6*time.Second)
	c, clk, first := signedIn(t, env)
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
	require.True(t, joined.Successful(), joined.ToString())
	var added []uint64
	c.SetLobbyMemberAddedCallback(Func(func(_, member uint64) { added = append(added, member) }))

	// Half the lifetime (3 s) before expiry the SDK refreshes and renews the connection.
	clk.Advance(3*time.Second - time.Millisecond)
	assert.Equal(t, first.access, c.tokenInUse(), "refreshed before half the lifetime")
	env.Clock.Advance(3 * time.Second) // the service's time goes on with the SDK's
	clk.Advance(time.Millisecond)
	await(t, "the automatic refresh", func() bool { return c.tokenInUse() != first.access })
	await(t, "the refreshed tokens handed to the game", func() bool { return stored != nil })
	assert.Equal(t, c.tokenInUse(), stored[0], "TokenRefreshedCallback's access token")
	assert.NotEmpty(t, stored[1], "TokenRefreshedCallback's refresh token")
	assert.NotEqual(t, first.fresh, stored[1], "the refresh token did not rotate")
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
	h := c.GetLobbyHandle(lobbyID)
	require.NotNil(t, h, "the lobby left the cache")
	assert.Contains(t, h.LobbyMemberIds(), other, "the lobby cache missed the new member")

	for _, s := range changes {
		assert.NotEqual(t, ClientStatusDisconnected, s.s, "the status reached Disconnected: %+v", changes)
	}
	assert.True(t, slices.ContainsFunc(changes, func(s statusChange) bool { return s.s == ClientStatusReconnecting && s.e == ClientErrorNone }),
		"no Reconnecting in %+v", changes)
	RunCallbacks()
	assert.Zero(t, expired, "the expiration callback ran")
	// Refresh rotates: the refresh token the game was given is spent (rule AU-6).
	var again *tokens
	c.RefreshToken(uint64(env.App.ID), first.fresh, tokenCallback(&again))
	await(t, "RefreshToken with the spent token", func() bool { return again != nil })
	assert.Equal(t, ErrorTypeAuthorizationFailed, again.result.Type(), "spent refresh token = %s", again.result.ToString())
	logs := c.logText()
	assert.Contains(t, logs, "access token was refreshed")
	for _, secret := range []string{first.access, first.fresh, c.tokenInUse()} {
		assert.NotContains(t, logs, secret, "a token reached the log")
	}
}

// Rule AU-6: an automatic refresh refused with invalid_grant (the grant was revoked) runs the
// expiration callback and logs why, without the token.
func TestAutoRefreshRefused(t *testing.T) {
	env := shortTokens(t, 4*time.Second)
	c, clk, first := signedIn(t, env)
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))
	var rev *ClientResult
	c.RevokeToken(uint64(env.App.ID), first.fresh, resultCallback(&rev)) // revokes the whole grant
	await(t, "RevokeToken", func() bool { return rev != nil })
	require.True(t, rev.Successful(), rev.ToString())
	clk.Advance(2 * time.Second) // the refresh, half the lifetime before expiry
	await(t, "the expiration callback", func() bool { return expired == 1 })
	logs := c.logText()
	assert.Contains(t, logs, "automatic token refresh refused")
	assert.Contains(t, logs, "invalid_grant")
	assert.NotContains(t, logs, first.fresh)
	assert.Equal(t, first.access, c.tokenInUse(), "a refused refresh changed the token")
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
	env := shortTokens(t, 4*time.Second)
	front, cut := failingFront(t, env, 2)
	alice := env.User("alice")
	c := &sdkClient{Client: NewClientWithBases(front.URL+"/api/v10", env.URL)}
	t.Cleanup(c.Close)
	clk := onFakeClock(c.Client)
	c.SetApplicationId(uint64(env.App.ID))
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) { c.mu.Lock(); c.logs = append(c.logs, m); c.mu.Unlock() }), LoggingSeverityVerbose)
	c.SetOpenUrlCallback(Func(func(u string) { follow(t, env.Approve(t, u, alice.Username, alice.Password)) }))
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))
	tok := signIn(t, env, c)

	// The refresh at half the lifetime fails twice on the network; each failure waits out its
	// backoff (at most Initial, then twice Initial, with jitter) on the clock before the next try.
	armed := clk.Armed()
	clk.Advance(2 * time.Second)
	for i := range 2 {
		require.NoError(t, clk.WaitArmed(t.Context(), armed+uint64(i)+1), "the backoff after failure %d", i+1)
		clk.Advance(auth.RefreshBackoff.Delay(i, 0))
	}
	await(t, "the refresh after two network failures", func() bool { return c.tokenInUse() != tok.access })
	RunCallbacks()
	assert.EqualValues(t, 2, cut.Load(), "refresh grants cut")
	assert.Zero(t, expired, "the expiration callback ran")
	logs := c.logText()
	assert.Equal(t, 2, strings.Count(logs, "automatic token refresh failed"), logs)
	assert.Contains(t, logs, "retrying in")
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, c.tokenInUse(), Func(func(r *ClientResult, _ uint64, _ string) { fres = r }))
	await(t, "FetchCurrentUser with the new token", func() bool { return fres != nil })
	assert.True(t, fres.Successful(), fres.ToString())
}
