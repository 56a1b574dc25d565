package server_test

// The OAuth provider against RFC 9700 (OAuth 2.0 Security Best Current Practice), RFC 6749 and
// RFC 8628: each test is named for the clause it holds the service to.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/browser"
	"sdkpp/server/oauth"
	"sdkpp/server/servertest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// identifyToken connects to the gateway and identifies with a user's access token, reading up
// to READY.
func identifyToken(t *testing.T, e *servertest.Env, access string) *botGW {
	t.Helper()
	g := dialBot(t, e, "")
	g.identify(access, 0)
	return g
}

// closeCode reads until the service closes the connection and returns the close code; -1 when
// the connection is still open after the wait (a heartbeat keeps it busy meanwhile).
func (g *botGW) closeCode(wait time.Duration) websocket.StatusCode {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		_, _, err := g.ws.Read(ctx)
		if err == nil {
			continue
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return -1
		}
		return websocket.CloseStatus(err)
	}
}

// alive sends a heartbeat and reads up to its ACK: the connection is open and served.
func (g *botGW) alive() bool {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if g.ws.Write(ctx, websocket.MessageText, []byte(`{"op":1,"d":null}`)) != nil {
		return false
	}
	for {
		_, raw, err := g.ws.Read(ctx)
		if err != nil {
			return false
		}
		var p gwire.Payload
		if json.Unmarshal(raw, &p) == nil && p.Op == gwire.OpHeartbeatACK {
			return true
		}
	}
}

// codeFor runs the consent for username and returns the authorization code; challenge may be
// empty (no PKCE).
func codeFor(t *testing.T, e *servertest.Env, username, challenge string) string {
	t.Helper()
	u := e.User(username)
	loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "s",
		redirect: loopbackRedirect, challenge: challenge}.url(e), u.Username, u.Password)
	code := params(t, loc).Get("code")
	require.NotEmpty(t, code, "redirect %s", loc)
	return code
}

// redeem exchanges code at the token endpoint with the extra form fields.
func redeem(t *testing.T, e *servertest.Env, code string, extra url.Values) resp {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {e.App.ID.String()},
		"redirect_uri": {loopbackRedirect}}
	for k, v := range extra {
		form[k] = v
	}
	return postForm(t, e.APIURL+"/oauth2/token", form)
}

// requireGrantDead checks that tr's tokens are revoked: REST 401 and refresh invalid_grant.
func requireGrantDead(t *testing.T, e *servertest.Env, tr wire.TokenResponse, what string) {
	t.Helper()
	_, r := getMe(t, e, tr.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "%s: the access token still works", what)
	r = refresh(t, e, tr.RefreshToken)
	assert.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "%s: the refresh token still works: %s", what, r.Body)
}

// RFC 9700 2.1.1: a token request carrying code_verifier for a code whose authorization request
// had no code_challenge is refused, even from a confidential client with its secret; without the
// verifier that client still redeems such a code.
func TestRFC9700_2_1_1_PKCEDowngradeRefused(t *testing.T) {
	e := servertest.Start(t)
	verifier, _ := pkce("d")
	r := redeem(t, e, codeFor(t, e, "alice", ""), url.Values{"client_secret": {e.App.ClientSecret}, "code_verifier": {verifier}})
	require.Equal(t, http.StatusBadRequest, r.Status, "downgraded code: %s", r.Body)
	assert.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "downgraded code: %s", r.Body)
	assert.Contains(t, string(r.Body), "no code_challenge")

	tr := redeem(t, e, codeFor(t, e, "alice", ""), url.Values{"client_secret": {e.App.ClientSecret}}).token(t)
	_, r = getMe(t, e, tr.AccessToken)
	assert.Equal(t, http.StatusOK, r.Status, "a confidential client's code without PKCE")
}

// RFC 6749 4.1.2: a code redeemed a second time is refused, and the tokens its first redemption
// issued are revoked: REST answers 401, the refresh token is invalid_grant, and the gateway
// session opened with the access token closes with 4004. Another grant of the same player and
// game (a second device) is untouched.
func TestRFC6749_4_1_2_CodeReplayRevokesItsTokens(t *testing.T) {
	e := servertest.Start(t)
	verifier, challenge := pkce("r")
	code := codeFor(t, e, "alice", challenge)
	first := redeem(t, e, code, url.Values{"code_verifier": {verifier}}).token(t)
	other := linkedTokens(t, e, "alice", "openid sdk.social_layer") // another device of alice's
	gw := identifyToken(t, e, first.AccessToken)
	otherGW := identifyToken(t, e, other.AccessToken)

	r := redeem(t, e, code, url.Values{"code_verifier": {verifier}})
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "replayed code: %s", r.Body)
	requireGrantDead(t, e, first, "after the replay")
	assert.Equal(t, websocket.StatusCode(gwire.CloseAuthenticationFailed), gw.closeCode(10*time.Second),
		"the gateway session of the replayed code's token")

	assert.True(t, otherGW.alive(), "another grant's gateway session")
	_, r = getMe(t, e, other.AccessToken)
	assert.Equal(t, http.StatusOK, r.Status, "another grant's access token")
	assert.NotEmpty(t, refresh(t, e, other.RefreshToken).token(t).AccessToken, "another grant's refresh token")
}

// RFC 9700 4.14.2 and 2.2.2: refresh tokens rotate with reuse detection. Presenting a refresh
// token that was used already revokes its whole family: the newest access and refresh tokens
// obtained from it die (REST 401, invalid_grant, gateway 4004), whoever holds them. Another grant
// of the same player and game is untouched.
func TestRFC9700_4_14_2_RefreshReuseRevokesFamily(t *testing.T) {
	e := servertest.Start(t)
	tr := linkedTokens(t, e, "bob", "openid sdk.social_layer")
	other := linkedTokens(t, e, "bob", "openid sdk.social_layer")
	next := refresh(t, e, tr.RefreshToken).token(t)
	newest := refresh(t, e, next.RefreshToken).token(t)
	gw := identifyToken(t, e, newest.AccessToken)
	otherGW := identifyToken(t, e, other.AccessToken)

	r := refresh(t, e, tr.RefreshToken) // the first one, used two rotations ago
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "reused refresh token: %s", r.Body)
	requireGrantDead(t, e, newest, "after the reuse")
	_, r = getMe(t, e, next.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "an older access token of the family")
	assert.Equal(t, websocket.StatusCode(gwire.CloseAuthenticationFailed), gw.closeCode(10*time.Second),
		"the gateway session of the family's newest token")

	assert.True(t, otherGW.alive(), "another grant's gateway session")
	assert.NotEmpty(t, refresh(t, e, other.RefreshToken).token(t).AccessToken, "another grant's refresh token")

	// Two racing requests with one refresh token: one rotates, the other is a reuse that revokes
	// the family, so neither pair outlives the race (the SDK never races; see core).
	fam := linkedTokens(t, e, "carol", "openid sdk.social_layer")
	results := make(chan resp, 2)
	for range 2 {
		go func() { results <- refresh(t, e, fam.RefreshToken) }()
	}
	a, b := <-results, <-results
	if a.Status != http.StatusOK {
		a, b = b, a
	}
	require.Equal(t, http.StatusOK, a.Status, "one of two racing refreshes succeeds: %s / %s", a.Body, b.Body)
	assert.Equal(t, wire.OAuthInvalidGrant, b.oauthError(t), "the other is a reuse: %s", b.Body)
	requireGrantDead(t, e, a.token(t), "the winner of the race, after the reuse")
}

// fromAddress returns an HTTP client whose connections come from the loopback address ip, and
// that does not follow redirects.
func fromAddress(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// RFC 8628 5.1: user codes are strong enough only with attempts limited. After MaxCodeFailures
// wrong codes from one address, /activate and its form answer 429 with the wait on the page and
// in Retry-After, and even a valid code is not looked up until the lockout has passed on the
// service's clock; another address is not locked. One device request takes MaxLoginFailures
// wrong logins on its form, then is locked whatever the address.
func TestRFC8628_5_1_UserCodeAttemptsThrottled(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	d := startDevice(t, e, "openid sdk.social_layer")
	attacker, player := fromAddress("127.0.0.1"), fromAddress("127.0.0.2")
	get := func(c *http.Client, code string) (int, string, http.Header) {
		t.Helper()
		r, err := c.Get(e.URL + "/activate?user_code=" + url.QueryEscape(code))
		require.NoError(t, err)
		defer r.Body.Close()
		var b strings.Builder
		_, err = io.Copy(&b, r.Body)
		require.NoError(t, err)
		return r.StatusCode, b.String(), r.Header
	}
	for i := range oauth.MaxCodeFailures {
		status, _, _ := get(attacker, "BCDF-GHJK")
		require.Equal(t, http.StatusBadRequest, status, "wrong code %d", i+1)
	}
	status, body, h := get(attacker, d.UserCode)
	assert.Equal(t, http.StatusTooManyRequests, status, "a valid code from the locked address")
	assert.Contains(t, body, "Too many wrong codes. Try again in 15 minutes.")
	assert.Equal(t, "900", h.Get("Retry-After"))
	r, err := attacker.PostForm(e.URL+"/activate", url.Values{"user_code": {d.UserCode}, "action": {"deny"}})
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, r.StatusCode, "the form from the locked address")

	status, _, _ = get(player, d.UserCode)
	assert.Equal(t, http.StatusOK, status, "another address is not locked")

	e.Clock.Advance(oauth.LoginLockout) // d expired meanwhile (device codes live 300 s)
	d = startDevice(t, e, "openid sdk.social_layer")
	status, _, _ = get(attacker, d.UserCode)
	assert.Equal(t, http.StatusOK, status, "after the lockout")

	// Wrong logins on one device request's form, spread over usernames so that no username
	// locks: the request locks after MaxLoginFailures, for every address.
	for i := range oauth.MaxLoginFailures {
		_, err := browser.New().Activate(context.Background(), e.URL, d.UserCode,
			browser.Choice{Username: "nobody" + strings.Repeat("x", i), Password: "wrong"})
		require.Error(t, err)
		require.Contains(t, err.Error(), "HTTP 401", "wrong login %d", i+1)
	}
	status, body, _ = get(player, d.UserCode)
	assert.Equal(t, http.StatusTooManyRequests, status, "the device request after its wrong logins")
	assert.Contains(t, body, "Try again in 15 minutes.")
}
