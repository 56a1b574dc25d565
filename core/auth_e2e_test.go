package core

// End-to-end tests of the SDK's authorization calls against the real service on loopback.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sdkpp/core/auth"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/token"
	"sdkpp/internal/clock"
	"sdkpp/server/servertest"
)

// tokens is what a TokenExchangeCallback received.
type tokens struct {
	result        *ClientResult
	access, fresh string
	typ           AuthorizationTokenType
	expiresIn     int32
	scopes        string
}

// await runs callbacks until done reports true.
func await(t *testing.T, what string, done func() bool) {
	t.Helper()
	waitFor(t, what, done)
}

func tokenCallback(got **tokens) Callback[ClientTokenExchangeCallback] {
	return Func(func(r *ClientResult, access, refresh string, typ AuthorizationTokenType, expiresIn int32, scopes string) {
		*got = &tokens{r, access, refresh, typ, expiresIn, scopes}
	})
}

func resultCallback(got **ClientResult) Callback[func(*ClientResult)] {
	return Func(func(r *ClientResult) { *got = r })
}

// sdkClient is a Client for env that opens URLs with open, and collects its log lines.
type sdkClient struct {
	*Client
	mu   sync.Mutex
	logs []string
}

// onFakeClock puts c, which has not started anything yet, on a fake clock showing the time now.
func onFakeClock(c *Client) *clock.Fake {
	clk := clock.NewFake(time.Now())
	c.setClock(clk)
	return clk
}

func newSDKClient(t *testing.T, env *servertest.Env, open func(u string)) *sdkClient {
	c := &sdkClient{Client: NewClientWithBases(env.APIURL, env.URL)}
	t.Cleanup(c.Close)
	c.SetApplicationId(uint64(env.App.ID))
	c.AddLogCallback(Func(func(m string, _ LoggingSeverity) {
		c.mu.Lock()
		c.logs = append(c.logs, m)
		c.mu.Unlock()
	}), LoggingSeverityVerbose)
	if open != nil {
		c.SetOpenUrlCallback(Func(open))
	}
	return c
}

// follow performs the browser's last step: it loads the redirect location (the SDK's loopback
// listener).
func follow(t *testing.T, location string) {
	t.Helper()
	resp, err := http.Get(location)
	if err != nil {
		assert.NoError(t, err, "follow redirect")
		return
	}
	resp.Body.Close()
}

// authorize runs Authorize with a PKCE pair, the user approving as alice, and returns the code,
// the redirect URI and the verifier.
func authorize(t *testing.T, env *servertest.Env) (*sdkClient, string, string, string) {
	t.Helper()
	alice := env.User("alice")
	c := newSDKClient(t, env, func(u string) { follow(t, env.Approve(t, u, alice.Username, alice.Password)) })
	code, redirect, verifier := authorizeCode(t, c)
	return c, code, redirect, verifier
}

// authorizeCode runs Authorize on c, whose URL opener approves, and returns the code, the
// redirect URI and the verifier.
func authorizeCode(t *testing.T, c *sdkClient) (string, string, string) {
	t.Helper()
	v := c.CreateAuthorizationCodeVerifier()
	args := NewAuthorizationArgs()
	args.SetScopes(ClientGetDefaultCommunicationScopes())
	args.SetCodeChallenge(v.Challenge())
	var res *ClientResult
	var code, redirect string
	c.Authorize(args, Func(func(r *ClientResult, cd, ru string) { res, code, redirect = r, cd, ru }))
	await(t, "Authorize", func() bool { return res != nil })
	require.True(t, res.Successful(), "Authorize = %s, %q, %q", res.ToString(), code, redirect)
	require.NotEqual(t, "", code, "Authorize = %s, %q, %q", res.ToString(), code, redirect)
	require.True(t, strings.HasPrefix(redirect, "http://127.0.0.1:"), "Authorize = %s, %q, %q", res.ToString(), code, redirect)
	return code, redirect, v.Verifier()
}

// rules AU-1, AA-5, AU-6, AU-7: authorize, exchange with PKCE, refresh, revoke, and a refresh of
// the revoked grant surfaces as deauthorization.
func TestAuthorizeTokenRefreshRevoke(t *testing.T) {
	env := servertest.Start(t)
	c, code, redirect, verifier := authorize(t, env)
	appID := uint64(env.App.ID)

	var tok *tokens
	c.GetToken(appID, code, verifier, redirect, tokenCallback(&tok))
	await(t, "GetToken", func() bool { return tok != nil })
	require.True(t, tok.result.Successful(), "GetToken = %s %+v", tok.result.ToString(), tok)
	require.NotEqual(t, "", tok.access, "GetToken = %s %+v", tok.result.ToString(), tok)
	require.NotEqual(t, "", tok.fresh, "GetToken = %s %+v", tok.result.ToString(), tok)
	require.Equal(t, AuthorizationTokenTypeBearer, tok.typ, "GetToken = %s %+v", tok.result.ToString(), tok)
	require.EqualValues(t, 604800, tok.expiresIn, "GetToken = %s %+v", tok.result.ToString(), tok)
	assert.Contains(t, tok.scopes, "sdk.social_layer", "scopes %q", tok.scopes)

	// FetchCurrentUser validates the token.
	var uid uint64
	var name string
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, tok.access, Func(func(r *ClientResult, id uint64, n string) { fres, uid, name = r, id, n }))
	await(t, "FetchCurrentUser", func() bool { return fres != nil })
	require.True(t, fres.Successful(), "FetchCurrentUser = %s %d %q", fres.ToString(), uid, name)
	require.Equal(t, uint64(env.User("alice").ID), uid, "FetchCurrentUser = %s %d %q", fres.ToString(), uid, name)
	require.NotEqual(t, "", name, "FetchCurrentUser = %s %d %q", fres.ToString(), uid, name)

	// UpdateToken and IsAuthenticated.
	require.False(t, c.IsAuthenticated(), "authenticated before UpdateToken")
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, tok.access, resultCallback(&up))
	await(t, "UpdateToken", func() bool { return up != nil })
	require.True(t, up.Successful(), "UpdateToken = %s", up.ToString())
	require.True(t, c.IsAuthenticated(), "UpdateToken = %s", up.ToString())

	// Refresh rotates: the old refresh token dies.
	var ref *tokens
	c.RefreshToken(appID, tok.fresh, tokenCallback(&ref))
	await(t, "RefreshToken", func() bool { return ref != nil })
	require.True(t, ref.result.Successful(), "RefreshToken = %s", ref.result.ToString())
	require.NotEqual(t, tok.access, ref.access, "RefreshToken = %s", ref.result.ToString())
	require.NotEqual(t, tok.fresh, ref.fresh, "RefreshToken = %s", ref.result.ToString())
	var old *tokens
	c.RefreshToken(appID, tok.fresh, tokenCallback(&old))
	await(t, "RefreshToken old", func() bool { return old != nil })
	require.Equal(t, ErrorTypeAuthorizationFailed, old.result.Type(), "old refresh token = %s", old.result.ToString()) // rule AU-6

	// Revoking the access token revokes the whole authorization (rule AU-7).
	var rev *ClientResult
	c.RevokeToken(appID, ref.access, resultCallback(&rev))
	await(t, "RevokeToken", func() bool { return rev != nil })
	require.True(t, rev.Successful(), "RevokeToken = %s", rev.ToString())
	var dead *tokens
	c.RefreshToken(appID, ref.fresh, tokenCallback(&dead))
	await(t, "RefreshToken after revoke", func() bool { return dead != nil })
	require.Equal(t, ErrorTypeAuthorizationFailed, dead.result.Type(), "refresh after revoke = %s / %s", dead.result.ToString(), dead.result.ResponseBody())
	require.Contains(t, dead.result.ResponseBody(), "invalid_grant", "refresh after revoke = %s / %s", dead.result.ToString(), dead.result.ResponseBody()) // rule AU-6
	fres = nil
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, ref.access, Func(func(r *ClientResult, id uint64, n string) { fres = r }))
	await(t, "FetchCurrentUser after revoke", func() bool { return fres != nil })
	require.False(t, fres.Successful(), "revoked access token = %s", fres.ToString())
	require.EqualValues(t, 401, fres.Status(), "revoked access token = %s", fres.ToString())

	// The same code again: single use (a replay also revokes what the code gave, RFC 6749
	// 4.1.2; server/oauth_security_test.go shows it).
	var again *tokens
	c.GetToken(appID, code, verifier, redirect, tokenCallback(&again))
	await(t, "GetToken again", func() bool { return again != nil })
	require.False(t, again.result.Successful(), "reused code = %s", again.result.ToString())
	require.Equal(t, ErrorTypeAuthorizationFailed, again.result.Type(), "reused code = %s", again.result.ToString())
	require.EqualValues(t, 400, again.result.Status(), "reused code = %s", again.result.ToString())

	// rule AU-10: no credential reached the log.
	c.mu.Lock()
	all := strings.Join(c.logs, "\n")
	c.mu.Unlock()
	for _, secret := range []string{code, verifier, tok.access, tok.fresh, ref.access, ref.fresh} {
		assert.NotContains(t, all, secret, "a credential reached the log:\n%s", all)
	}
}

// rule AA-5: a wrong verifier fails with invalid_grant.
func TestGetTokenWrongVerifier(t *testing.T) {
	env := servertest.Start(t)
	c, code, redirect, _ := authorize(t, env)
	var tok *tokens
	c.GetToken(0, code, c.CreateAuthorizationCodeVerifier().Verifier(), redirect, tokenCallback(&tok))
	await(t, "GetToken", func() bool { return tok != nil })
	assert.Equal(t, ErrorTypeAuthorizationFailed, tok.result.Type(), "wrong verifier = %s", tok.result.ToString())
	assert.Contains(t, tok.result.ResponseBody(), "invalid_grant", "wrong verifier = %s", tok.result.ToString())
	assert.Equal(t, "", tok.access, "wrong verifier = %s", tok.result.ToString())
}

func TestAuthorizeFailures(t *testing.T) {
	env := servertest.Start(t)
	alice := env.User("alice")
	args := func() *AuthorizationArgs {
		a := NewAuthorizationArgs()
		a.SetScopes("openid sdk.social_layer")
		return a
	}
	run := func(c *sdkClient, a *AuthorizationArgs) *ClientResult {
		var res *ClientResult
		c.Authorize(a, Func(func(r *ClientResult, code, redirect string) {
			res = r
			if !r.Successful() {
				assert.Empty(t, code, "a failed Authorize returned a code")
				assert.Empty(t, redirect, "a failed Authorize returned a redirect URI")
			}
		}))
		await(t, "Authorize", func() bool { return res != nil })
		return res
	}

	t.Run("rule AA-2 no scopes: validation error, nothing opened", func(t *testing.T) {
		opened := false
		c := newSDKClient(t, env, func(string) { opened = true })
		res := run(c, NewAuthorizationArgs())
		assert.Equal(t, ErrorTypeValidationError, res.Type(), "%s opened=%v", res.ToString(), opened)
		assert.False(t, opened, "%s opened=%v", res.ToString(), opened)
	})
	t.Run("denied on the consent page", func(t *testing.T) {
		c := newSDKClient(t, env, func(u string) { follow(t, env.Deny(t, u)) })
		res := run(c, args())
		assert.Equal(t, ErrorTypeAuthorizationFailed, res.Type(), res.ToString())
		assert.Contains(t, res.Error(), "access_denied", res.ToString())
	})
	t.Run("rule AA-3 state mismatch on the redirect", func(t *testing.T) {
		c := newSDKClient(t, env, func(u string) {
			loc, _ := url.Parse(env.Approve(t, u, alice.Username, alice.Password))
			q := loc.Query()
			q.Set("state", "forged")
			loc.RawQuery = q.Encode()
			follow(t, loc.String())
		})
		res := run(c, args())
		assert.Equal(t, ErrorTypeAuthorizationFailed, res.Type(), res.ToString())
		assert.Contains(t, res.Error(), "state", res.ToString())
	})
	t.Run("rule AA-6 integration type and rule AA-3 given state reach the consent page", func(t *testing.T) {
		var seen url.Values
		c := newSDKClient(t, env, func(u string) {
			p, _ := url.Parse(u)
			seen = p.Query()
			follow(t, env.Approve(t, u, alice.Username, alice.Password))
		})
		a := args()
		it, st := IntegrationTypeUserInstall, "my-state"
		a.SetIntegrationType(&it)
		a.SetState(&st)
		res := run(c, a)
		assert.True(t, res.Successful(), res.ToString())
		assert.Equal(t, "1", seen.Get("integration_type"), "authorize query %v", seen)
		assert.Equal(t, "my-state", seen.Get("state"), "authorize query %v", seen)
		assert.Equal(t, env.App.ID.String(), seen.Get("client_id"), "authorize query %v", seen)
	})
	t.Run("AbortAuthorize, then a late redirect finds nothing", func(t *testing.T) {
		var pending string
		c := newSDKClient(t, env, func(u string) { pending = u })
		var res *ClientResult
		c.Authorize(args(), Func(func(r *ClientResult, _, _ string) { res = r }))
		await(t, "the consent page URL", func() bool { return pending != "" })
		c.AbortAuthorize()
		await(t, "the aborted callback", func() bool { return res != nil })
		require.Equal(t, ErrorTypeAborted, res.Type(), res.ToString())
		loc := env.Approve(t, pending, alice.Username, alice.Password)
		resp, err := http.Get(loc)
		if err == nil {
			resp.Body.Close()
		}
		assert.Error(t, err, "the redirect after AbortAuthorize reached a listener")
	})
	t.Run("a second Authorize aborts the first", func(t *testing.T) {
		c := newSDKClient(t, env, func(string) {})
		var first, second *ClientResult
		c.Authorize(args(), Func(func(r *ClientResult, _, _ string) { first = r }))
		c.Authorize(args(), Func(func(r *ClientResult, _, _ string) { second = r }))
		await(t, "the first callback", func() bool { return first != nil })
		require.Equal(t, ErrorTypeAborted, first.Type(), "first=%s second=%v", first.ToString(), second)
		require.Nil(t, second, "first=%s second=%v", first.ToString(), second)
		c.AbortAuthorize()
		await(t, "the second callback", func() bool { return second != nil })
	})
}

// The device flow: the SDK opens the verification page and polls, every interval of the SDK's
// clock, until the user approves. The service's clock moves with the SDK's, so that no poll is
// too soon for it.
func TestDeviceFlow(t *testing.T) {
	env := servertest.Start(t)
	alice := env.User("alice")
	var userCode string
	c := newSDKClient(t, env, func(u string) {
		p, err := url.Parse(u)
		require.NoError(t, err)
		userCode = p.Query().Get("user_code")
	})
	clk := onFakeClock(c.Client)
	interval := 5 * time.Second // the service's device_code interval
	advance := func() { env.Clock.Advance(interval); clk.Advance(interval) }
	args := NewDeviceAuthorizationArgs()
	args.SetScopes("openid sdk.social_layer")
	var tok *tokens
	c.GetTokenFromDevice(args, tokenCallback(&tok))
	await(t, "the verification page", func() bool { return userCode != "" })
	require.NoError(t, clk.WaitArmed(t.Context(), 1), "the wait before the first poll")
	advance()
	require.NoError(t, clk.WaitArmed(t.Context(), 2), "the wait after a poll answered authorization_pending")
	env.ApproveDevice(t, userCode, alice.Username, alice.Password)
	advance()
	await(t, "GetTokenFromDevice", func() bool { return tok != nil })
	require.True(t, tok.result.Successful(), "device flow = %s", tok.result.ToString())
	assert.NotEmpty(t, tok.access)

	// Aborted while it waits between polls.
	var opened bool
	c2 := newSDKClient(t, env, func(string) { opened = true })
	clk2 := onFakeClock(c2.Client)
	var ab *tokens
	c2.GetTokenFromDevice(args, tokenCallback(&ab))
	await(t, "the second verification page", func() bool { return opened })
	require.NoError(t, clk2.WaitArmed(t.Context(), 1))
	c2.AbortGetTokenFromDevice()
	await(t, "aborted device flow", func() bool { return ab != nil })
	require.Equal(t, ErrorTypeAborted, ab.result.Type(), "aborted device flow = %s", ab.result.ToString())

	// Without scopes nothing is sent.
	var bad *tokens
	c2.GetTokenFromDevice(NewDeviceAuthorizationArgs(), tokenCallback(&bad))
	await(t, "invalid device args", func() bool { return bad != nil })
	assert.Equal(t, ErrorTypeValidationError, bad.result.Type(), bad.result.ToString())
}

// botProvisionalToken plays the game backend: it gets a provisional account's token with the
// application's bot token.
func botProvisionalToken(t *testing.T, env *servertest.Env, externalID string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"external_user_id": externalID, "preferred_global_name": "Guest " + externalID})
	req, _ := http.NewRequest(http.MethodPost, env.APIURL+"/partner-sdk/token/bot", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bot "+env.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var tr auth.Tokens
	require.EqualValues(t, 200, resp.StatusCode, "bot token endpoint: HTTP %d", resp.StatusCode)
	require.Nil(t, json.NewDecoder(resp.Body).Decode(&tr), "bot token endpoint: HTTP %d", resp.StatusCode)
	require.NotEqual(t, "", tr.AccessToken, "bot token endpoint: HTTP %d", resp.StatusCode)
	return tr.AccessToken
}

// rules AU-5, AU-4: provisional accounts, display names and child tokens through the SDK.
func TestProvisionalAndChildTokens(t *testing.T) {
	env := servertest.Start(t)
	c := newSDKClient(t, env, nil)
	appID := uint64(env.App.ID)

	botIssued := botProvisionalToken(t, env, "player-1")
	var prov *tokens
	c.GetProvisionalToken(appID, AuthenticationExternalAuthTypeDiscordBotIssuedAccessToken, botIssued, tokenCallback(&prov))
	await(t, "GetProvisionalToken", func() bool { return prov != nil })
	require.True(t, prov.result.Successful(), "GetProvisionalToken = %s", prov.result.ToString())
	require.NotEqual(t, "", prov.access, "GetProvisionalToken = %s", prov.result.ToString())

	var bad *tokens
	c.GetProvisionalToken(appID, AuthenticationExternalAuthTypeDiscordBotIssuedAccessToken, "not-a-token", tokenCallback(&bad))
	await(t, "GetProvisionalToken with a bad token", func() bool { return bad != nil })
	require.False(t, bad.result.Successful(), "bad external token = %s", bad.result.ToString())
	require.GreaterOrEqual(t, bad.result.Status(), HttpStatusCode(400), "bad external token = %s", bad.result.ToString())
	require.Less(t, bad.result.Status(), HttpStatusCode(500), "bad external token = %s", bad.result.ToString())

	// Renaming needs a token; then it works.
	var noTok *ClientResult
	c.UpdateProvisionalAccountDisplayName("New Name", resultCallback(&noTok))
	await(t, "rename without a token", func() bool { return noTok != nil })
	require.Equal(t, ErrorTypeClientNotReady, noTok.Type(), noTok.ToString())
	var up, ren *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, prov.access, resultCallback(&up))
	c.UpdateProvisionalAccountDisplayName("New Name", resultCallback(&ren))
	await(t, "rename", func() bool { return ren != nil })
	require.True(t, ren.Successful(), "UpdateProvisionalAccountDisplayName = %s / %s", ren.ToString(), ren.ResponseBody())
	var name string
	var fres *ClientResult
	c.FetchCurrentUser(AuthorizationTokenTypeBearer, prov.access, Func(func(r *ClientResult, _ uint64, n string) { fres, name = r, n }))
	await(t, "FetchCurrentUser", func() bool { return fres != nil })
	require.Equal(t, "New Name", name, "display name %q (%s)", name, fres.ToString())

	// rule AU-4: a parent token is exchanged for a child application's token, without refresh.
	cc, code, redirect, verifier := authorize(t, env)
	var parent *tokens
	cc.GetToken(appID, code, verifier, redirect, tokenCallback(&parent))
	await(t, "GetToken", func() bool { return parent != nil })
	var child struct {
		r      *ClientResult
		access string
		typ    AuthorizationTokenType
	}
	done := false
	cc.ExchangeChildToken(parent.access, uint64(env.ChildApp.ID), Func(func(r *ClientResult, access string, typ AuthorizationTokenType, _ int32, _ string) {
		child.r, child.access, child.typ, done = r, access, typ, true
	}))
	await(t, "ExchangeChildToken", func() bool { return done })
	assert.True(t, child.r.Successful(), "ExchangeChildToken = %s", child.r.ToString())
	assert.NotEqual(t, "", child.access, "ExchangeChildToken = %s", child.r.ToString())
	assert.NotEqual(t, parent.access, child.access, "ExchangeChildToken = %s", child.r.ToString())
	assert.Equal(t, AuthorizationTokenTypeBearer, child.typ, "ExchangeChildToken = %s", child.r.ToString())
}

// The expiration callback fires five minutes before a known token expires, on the Client's
// clock.
func TestTokenExpirationCallback(t *testing.T) {
	c := NewClient()
	defer c.Close()
	clk := onFakeClock(c)
	fired := 0
	c.SetTokenExpirationCallback(Func(func() { fired++ }))
	c.auth.flows.Remember(&auth.Tokens{AccessToken: "expiring-token-123", ExpiresIn: int32(token.ExpiryWarning/time.Second) + 1}, 0)
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, "expiring-token-123", resultCallback(&up))
	clk.Advance(time.Second - time.Millisecond)
	RunCallbacks()
	require.Equal(t, 0, fired, "fired before five minutes from expiry")
	clk.Advance(time.Millisecond)
	RunCallbacks()
	require.Equal(t, 1, fired, "at five minutes from expiry")
	// A token the SDK did not issue has no known expiry: no timer, no callback.
	c.UpdateToken(AuthorizationTokenTypeBearer, "someone-elses-token", resultCallback(&up))
	assert.Zero(t, clk.Pending(), "a timer for a token of unknown expiry")
	clk.Advance(30 * 24 * time.Hour)
	RunCallbacks()
	assert.Equal(t, 1, fired)
}

// Dropping the Client mid-operation: the callback still fires once, with ClientDestroyed.
func TestCloseDuringOperation(t *testing.T) {
	env := servertest.Start(t)
	c := NewClientWithBases(env.APIURL, env.URL)
	c.SetApplicationId(uint64(env.App.ID))
	c.SetOpenUrlCallback(Func(func(string) {}))
	var res *ClientResult
	calls := 0
	c.Authorize(func() *AuthorizationArgs { a := NewAuthorizationArgs(); a.SetScopes("openid"); return a }(),
		Func(func(r *ClientResult, _, _ string) { res = r; calls++ }))
	RunCallbacks()
	c.Close()
	await(t, "the destroyed callback", func() bool { return res != nil })
	RunCallbacks()
	assert.EqualValues(t, 1, calls, "calls=%d %s", calls, res.ToString())
	assert.Equal(t, ErrorTypeClientDestroyed, res.Type(), "calls=%d %s", calls, res.ToString())
}

// The backend-driven device flow: the verification page opens with the user code, and closing
// it runs the screen-closed handler once; replacing the handler releases the old one.
func TestAuthorizeDeviceScreen(t *testing.T) {
	env := servertest.Start(t)
	var opened string
	c := newSDKClient(t, env, func(u string) { opened = u })
	closed, released := 0, 0
	c.SetAuthorizeDeviceScreenClosedCallback(Callback[ClientAuthorizeDeviceScreenClosedCallback]{Fn: func() { assert.Fail(t, "the replaced handler ran") }, Release: func() { released++ }})
	c.SetAuthorizeDeviceScreenClosedCallback(Func(func() { closed++ }))
	require.EqualValues(t, 1, released, "released %d", released)
	c.CloseAuthorizeDeviceScreen() // nothing open: nothing runs
	c.OpenAuthorizeDeviceScreen(0, "ABCD-EFGH")
	await(t, "the verification page", func() bool { return opened != "" })
	p, err := url.Parse(opened)
	require.NoError(t, err, "opened %q", opened)
	require.Equal(t, "/activate", p.Path, "opened %q", opened)
	require.Equal(t, "ABCD-EFGH", p.Query().Get("user_code"), "opened %q", opened)
	require.Equal(t, env.App.ID.String(), p.Query().Get("client_id"), "opened %q", opened)
	c.CloseAuthorizeDeviceScreen()
	c.CloseAuthorizeDeviceScreen()
	await(t, "the closed handler", func() bool { return closed == 1 })
	RunCallbacks()
	assert.EqualValues(t, 1, closed, "closed %d times", closed)
}
