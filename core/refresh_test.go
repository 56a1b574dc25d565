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
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
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
	// Refresh rotates: the refresh token the game was given is spent (rule AU-6). The SDK
	// refuses it without sending it, so the grant survives (RFC 9700 4.14.2).
	var again *tokens
	c.RefreshToken(uint64(env.App.ID), first.fresh, tokenCallback(&again))
	await(t, "RefreshToken with the spent token", func() bool { return again != nil })
	assert.Equal(t, ErrorTypeAuthorizationFailed, again.result.Type(), "spent refresh token = %s", again.result.ToString())
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, c.tokenInUse(), Func(func(r *ClientResult, _ uint64, _ string) { fres = r }))
	await(t, "FetchCurrentUser after the spent RefreshToken", func() bool { return fres != nil })
	assert.True(t, fres.Successful(), "the grant was revoked: %s", fres.ToString())
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

// frontAction is what a front does with one refresh_token grant.
type frontAction int

const (
	forward     frontAction = iota // to the service
	cut                            // read it, then drop the connection without an answer
	unavailable                    // answer 503 without forwarding
)

// refreshFront forwards to the service; the nth refresh_token grant it sees (from 0) gets
// act(n). It records every refresh token presented to it, in order.
type refreshFront struct {
	*httptest.Server
	mu        sync.Mutex
	presented []string
}

func newRefreshFront(t *testing.T, env *servertest.Env, act func(n int) frontAction) *refreshFront {
	target, _ := url.Parse(env.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	f := &refreshFront{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		if !strings.HasSuffix(r.URL.Path, "/oauth2/token") || form.Get("grant_type") != "refresh_token" {
			proxy.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		n := len(f.presented)
		f.presented = append(f.presented, form.Get("refresh_token"))
		f.mu.Unlock()
		switch act(n) {
		case cut:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
		case unavailable:
			http.Error(w, "try later", http.StatusServiceUnavailable)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// refreshes returns the refresh tokens presented so far.
func (f *refreshFront) refreshes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.presented)
}

// frontClient is a Client whose API requests go through front, on a fake clock, signed in as
// alice with its own exchange.
func frontClient(t *testing.T, env *servertest.Env, front *refreshFront) (*sdkClient, *clock.Fake, *tokens) {
	alice := env.User("alice")
	c := &sdkClient{Client: NewClientWithBases(front.URL+"/api/v10", env.URL)}
	t.Cleanup(c.Close)
	clk := onFakeClock(c.Client)
	c.SetApplicationId(uint64(env.App.ID))
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) { c.mu.Lock(); c.logs = append(c.logs, m); c.mu.Unlock() }), LoggingSeverityVerbose)
	c.SetOpenUrlCallback(Func(func(u string) { follow(t, env.Approve(t, u, alice.Username, alice.Password)) }))
	return c, clk, signIn(t, env, c)
}

// A refresh that the service provably did not act on (503 here; a refused connection likewise)
// is retried with backoff until it succeeds; the game sees nothing but the new token in use.
func TestAutoRefreshRetriesUnprocessedFailures(t *testing.T) {
	env := shortTokens(t, 4*time.Second)
	front := newRefreshFront(t, env, func(n int) frontAction {
		if n < 2 {
			return unavailable
		}
		return forward
	})
	c, clk, tok := frontClient(t, env, front)
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))

	// The refresh at half the lifetime is refused twice; each refusal waits out its backoff (at
	// most Initial, then twice Initial, with jitter) on the clock before the next try.
	armed := clk.Armed()
	clk.Advance(2 * time.Second)
	for i := range 2 {
		require.NoError(t, clk.WaitArmed(t.Context(), armed+uint64(i)+1), "the backoff after failure %d", i+1)
		clk.Advance(auth.RefreshBackoff.Delay(i, 0))
	}
	await(t, "the refresh after two refusals", func() bool { return c.tokenInUse() != tok.access })
	RunCallbacks()
	assert.Equal(t, []string{tok.fresh, tok.fresh, tok.fresh}, front.refreshes(), "the unprocessed refresh token is sent again")
	assert.Zero(t, expired, "the expiration callback ran")
	logs := c.logText()
	assert.Equal(t, 2, strings.Count(logs, "automatic token refresh failed"), logs)
	assert.Contains(t, logs, "retrying in")
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, c.tokenInUse(), Func(func(r *ClientResult, _ uint64, _ string) { fres = r }))
	await(t, "FetchCurrentUser with the new token", func() bool { return fres != nil })
	assert.True(t, fres.Successful(), fres.ToString())
}

// RFC 9700 4.14.2: a refresh whose answer was lost after the request went out may have rotated
// the refresh token on the service; sending it again would revoke the whole grant. The SDK
// does not send it again: it logs why and runs the expiration callback, and the access token
// in use stays valid until it expires.
func TestAutoRefreshNeverResendsAfterAnAmbiguousFailure(t *testing.T) {
	env := shortTokens(t, 4*time.Second)
	front := newRefreshFront(t, env, func(int) frontAction { return cut })
	c, clk, tok := frontClient(t, env, front)
	expired := 0
	c.SetTokenExpirationCallback(Func(func() { expired++ }))
	clk.Advance(2 * time.Second)
	await(t, "the expiration callback", func() bool { RunCallbacks(); return expired == 1 })
	clk.Advance(time.Minute) // any backoff would have run by now
	assert.Equal(t, []string{tok.fresh}, front.refreshes(), "the refresh token was presented again")
	assert.Contains(t, c.logText(), "not sent again")
	assert.Equal(t, tok.access, c.tokenInUse())
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, tok.access, Func(func(r *ClientResult, _ uint64, _ string) { fres = r }))
	await(t, "FetchCurrentUser", func() bool { return fres != nil })
	assert.True(t, fres.Successful(), "the grant was revoked: %s", fres.ToString())
}

// Two refreshes race for one refresh token: the SDK's timer fires twice (the game re-arming it
// meanwhile) and the game calls RefreshToken with the same token. The service sees it once, so
// it detects no reuse (RFC 9700 4.14.2) and the grant survives: the new token works, and the
// game's call fails locally with AuthorizationFailed.
func TestRacingRefreshesPresentTheTokenOnce(t *testing.T) {
	env := shortTokens(t, 4*time.Second)
	release := make(chan struct{})
	front := newRefreshFront(t, env, func(int) frontAction { <-release; return forward })
	c, clk, tok := frontClient(t, env, front)
	clk.Advance(2 * time.Second) // the timer's refresh starts and waits at the front
	await(t, "the automatic refresh at the front", func() bool { return len(front.refreshes()) == 1 })
	c.auth.flows.AutoRefresh(tok.access) // the timer again, as a re-arm during the refresh would
	var game *tokens
	c.RefreshToken(uint64(env.App.ID), tok.fresh, tokenCallback(&game))
	await(t, "the game's RefreshToken", func() bool { return game != nil })
	assert.Equal(t, ErrorTypeAuthorizationFailed, game.result.Type(), "RefreshToken = %s", game.result.ToString())
	close(release)
	await(t, "the automatic refresh", func() bool { return c.tokenInUse() != tok.access })
	assert.Equal(t, []string{tok.fresh}, front.refreshes(), "a refresh token was presented twice")
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, c.tokenInUse(), Func(func(r *ClientResult, _ uint64, _ string) { fres = r }))
	await(t, "FetchCurrentUser with the new token", func() bool { return fres != nil })
	assert.True(t, fres.Successful(), "the grant was revoked: %s", fres.ToString())
}
