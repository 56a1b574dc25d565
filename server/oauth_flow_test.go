package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/browser"
	"sdkpp/server/scopes"
	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// idClaims decodes an ID token's payload (the signature is checked in package oidc's tests).
func idClaims(t *testing.T, idToken string) map[string]any {
	t.Helper()
	parts := strings.Split(idToken, ".")
	require.Len(t, parts, 3, "id_token is not a JWS: %q", idToken)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(raw, &c))
	return c
}

func TestAuthorizationCodeFlowWithPKCE(t *testing.T) {
	e := servertest.Start(t)
	alice := e.User("alice")
	verifier, challenge := pkce("a")
	loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "st-123",
		redirect: loopbackRedirect, challenge: challenge, nonce: "nonce-42", integration: "1"}.url(e), alice.Username, alice.Password)
	require.True(t, strings.HasPrefix(loc, loopbackRedirect+"?"), "redirect to %q", loc)
	p := params(t, loc)
	require.Equal(t, "st-123", p.Get("state"), "state not passed through or no code: %v", p)
	require.NotEmpty(t, p.Get("code"), "state not passed through or no code: %v", p)
	tr := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {p.Get("code")},
		"client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifier}}).token(t) // rule AA-5
	require.Equal(t, "Bearer", tr.TokenType, "token response %+v", tr)
	require.Equal(t, int64(604800), tr.ExpiresIn, "token response %+v", tr)
	require.NotEmpty(t, tr.AccessToken, "token response %+v", tr)
	require.NotEmpty(t, tr.RefreshToken, "token response %+v", tr)
	granted := strings.Fields(tr.Scope)
	for _, s := range append([]string{"openid", scopes.SocialLayer, scopes.SocialLayerPresence}, append(scopes.PresenceSet, scopes.SocialSet...)...) {
		assert.Contains(t, granted, s, "rule SC-3: scope %s missing from %q", s, tr.Scope)
	}
	claims := idClaims(t, tr.IDToken)
	assert.Equal(t, "nonce-42", claims["nonce"], "rule AA-4: id_token nonce = %v", claims["nonce"])
	assert.Equal(t, e.App.ID.String(), claims["aud"], "id_token claims %v", claims)
	assert.Equal(t, alice.ID.String(), claims["sub"], "id_token claims %v", claims)
	assert.Equal(t, e.URL, claims["iss"], "id_token claims %v", claims)
	me, r := getMe(t, e, tr.AccessToken)
	require.Equal(t, http.StatusOK, r.Status, "users/@me: %d %s", r.Status, r.Body)
	require.Equal(t, alice.ID, me.ID, "users/@me: %d %s", r.Status, r.Body)
	require.Equal(t, "alice", me.Username, "users/@me: %d %s", r.Status, r.Body)
	require.False(t, me.IsProvisional, "users/@me: %d %s", r.Status, r.Body)
	// rule AA-6: the integration type is recorded with the authorization.
	a, err := e.Server.Store().FindAuthorization(context.Background(), uint64(e.App.ID), uint64(alice.ID))
	require.NoError(t, err, "rule AA-6: authorization %+v", a)
	require.Equal(t, 1, a.IntegrationType, "rule AA-6: authorization %+v", a)
}

func TestTokenEndpointErrors(t *testing.T) {
	e := servertest.Start(t)
	alice := e.User("alice")
	verifier, challenge := pkce("b")
	code := func(redirect string) string {
		loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify", state: "s", redirect: redirect,
			challenge: challenge}.url(e), alice.Username, alice.Password)
		return params(t, loc).Get("code")
	}
	exchange := func(c, redirect, v string, extra url.Values) resp {
		f := url.Values{"grant_type": {"authorization_code"}, "code": {c}, "client_id": {e.App.ID.String()},
			"redirect_uri": {redirect}, "code_verifier": {v}}
		for k, vs := range extra {
			f[k] = vs
		}
		return postForm(t, e.APIURL+"/oauth2/token", f)
	}

	t.Run("wrong verifier", func(t *testing.T) {
		other, _ := pkce("z")
		r := exchange(code(loopbackRedirect), loopbackRedirect, other, nil)
		require.Equal(t, 400, r.Status, "rule AA-5: wrong verifier: %d %s", r.Status, r.Body)
		require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "rule AA-5: wrong verifier: %d %s", r.Status, r.Body)
	})
	t.Run("missing verifier", func(t *testing.T) {
		r := exchange(code(loopbackRedirect), loopbackRedirect, "", nil)
		require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "missing verifier: %s", r.Body)
	})
	t.Run("reused code", func(t *testing.T) {
		c := code(loopbackRedirect)
		exchange(c, loopbackRedirect, verifier, nil).token(t)
		r := exchange(c, loopbackRedirect, verifier, nil)
		require.Equal(t, 400, r.Status, "reused code: %d %s", r.Status, r.Body)
		require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "reused code: %d %s", r.Status, r.Body)
	})
	t.Run("expired code", func(t *testing.T) {
		c := code(loopbackRedirect)
		e.Clock.Advance(10*time.Minute + time.Second)
		r := exchange(c, loopbackRedirect, verifier, nil)
		require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "expired code: %s", r.Body)
		require.Contains(t, string(r.Body), "expired", "expired code: %s", r.Body)
	})
	t.Run("redirect uri mismatch at token", func(t *testing.T) {
		c := code("http://127.0.0.1:40000/authorize/callback") // any loopback port is allowed (RFC 8252)
		r := exchange(c, loopbackRedirect, verifier, nil)
		require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "redirect mismatch: %s", r.Body)
	})
	t.Run("wrong client secret", func(t *testing.T) {
		r := exchange(code(loopbackRedirect), loopbackRedirect, verifier, url.Values{"client_secret": {"not-the-secret"}})
		require.Equal(t, 401, r.Status, "wrong secret: %d %s", r.Status, r.Body)
		require.Equal(t, wire.OAuthInvalidClient, r.oauthError(t), "wrong secret: %d %s", r.Status, r.Body)
		req, _ := http.NewRequest(http.MethodPost, e.APIURL+"/oauth2/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(e.App.ID.String(), "wrong")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 401, res.StatusCode, "Basic with a wrong secret: %d", res.StatusCode)
	})
	t.Run("unknown client", func(t *testing.T) {
		r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "client_id": {"123"}})
		require.Equal(t, 401, r.Status, "unknown client: %d %s", r.Status, r.Body)
		require.Equal(t, wire.OAuthInvalidClient, r.oauthError(t), "unknown client: %d %s", r.Status, r.Body)
	})
	t.Run("json body", func(t *testing.T) {
		r := sendJSON(t, http.MethodPost, e.APIURL+"/oauth2/token", map[string]string{"grant_type": "client_credentials",
			"client_id": e.App.ID.String(), "client_secret": e.App.ClientSecret}, nil)
		require.Equal(t, 400, r.Status, "JSON body: %d %s", r.Status, r.Body)
		require.Equal(t, wire.OAuthInvalidRequest, r.oauthError(t), "JSON body: %d %s", r.Status, r.Body)
	})
	t.Run("public client without PKCE nor secret", func(t *testing.T) {
		loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify", redirect: loopbackRedirect}.url(e), alice.Username, alice.Password)
		r := exchange(params(t, loc).Get("code"), loopbackRedirect, "", nil)
		require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "no PKCE, no secret: %s", r.Body)
		// The same code flow works server-side with the client secret (confidential exchange).
		loc = e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify", redirect: loopbackRedirect}.url(e), alice.Username, alice.Password)
		exchange(params(t, loc).Get("code"), loopbackRedirect, "", url.Values{"client_secret": {e.App.ClientSecret}}).token(t)
	})
	t.Run("unsupported grant", func(t *testing.T) {
		r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"password"}, "client_id": {e.App.ID.String()}})
		require.Equal(t, wire.OAuthUnsupportedGrantType, r.oauthError(t), "unsupported grant: %s", r.Body)
	})
}

func TestAuthorizeRedirectURIRules(t *testing.T) {
	e := servertest.Start(t)
	id := e.App.ID.String()
	allowed := []string{
		"http://127.0.0.1:1/authorize/callback", "http://[::1]:65535/authorize/callback",
		"sdkpp-" + id + ":/authorize/callback", "sdkppdemo:/authorize/callback",
	}
	for _, ru := range allowed {
		r := do(t, http.MethodGet, authz{clientID: id, scope: "identify", redirect: ru}.url(e), nil, nil)
		assert.Equal(t, http.StatusOK, r.Status, "redirect %s refused: %d", ru, r.Status)
	}
	refused := []string{"http://evil.example/authorize/callback", "http://127.0.0.1:5/other", "https://127.0.0.1:5/authorize/callback",
		"http://localhost:5/authorize/callback", "othergame:/authorize/callback", "", "http://127.0.0.1:99999/authorize/callback"}
	for _, ru := range refused {
		r := do(t, http.MethodGet, authz{clientID: id, scope: "identify", redirect: ru}.url(e), nil, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, "redirect %q: HTTP %d (want an error page, no redirect)", ru, r.Status)
		assert.Empty(t, r.Header.Get("Location"), "redirect %q: HTTP %d (want an error page, no redirect)", ru, r.Status)
	}
	// The child app registered only the loopback URI; its custom scheme is not the parent's.
	r := do(t, http.MethodGet, authz{clientID: e.ChildApp.ID.String(), scope: "identify", redirect: "sdkppdemo:/authorize/callback"}.url(e), nil, nil)
	assert.Equal(t, http.StatusBadRequest, r.Status, "child app accepted the parent's scheme: %d", r.Status)
	// Errors after the redirect URI is known are redirected with state.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		q    authz
		want string
	}{
		{authz{clientID: id, scope: "bogus.scope", redirect: loopbackRedirect, state: "q"}, wire.OAuthInvalidScope},
		{authz{clientID: id, scope: "identify", redirect: loopbackRedirect, state: "q", integration: "7"}, wire.OAuthInvalidRequest},
		{authz{clientID: id, scope: "identify", redirect: loopbackRedirect, state: "q", prompt: "none"}, wire.OAuthLoginRequired},
	} {
		res, err := client.Get(c.q.url(e))
		require.NoError(t, err)
		res.Body.Close()
		p := params(t, res.Header.Get("Location"))
		assert.Equal(t, http.StatusFound, res.StatusCode, "%+v: %d %v", c.q, res.StatusCode, p)
		assert.Equal(t, c.want, p.Get("error"), "%+v: %d %v", c.q, res.StatusCode, p)
		assert.Equal(t, "q", p.Get("state"), "%+v: %d %v", c.q, res.StatusCode, p)
	}
}

func TestConsentDenyAndLoginErrors(t *testing.T) {
	e := servertest.Start(t)
	u := authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "deny-state", redirect: loopbackRedirect}.url(e)
	p := params(t, e.Deny(t, u))
	require.Equal(t, wire.OAuthAccessDenied, p.Get("error"), "deny: %v", p)
	require.Equal(t, "deny-state", p.Get("state"), "deny: %v", p)
	require.Empty(t, p.Get("code"), "deny: %v", p)
	// A wrong password shows the page again with an error, and issues nothing.
	r := do(t, http.MethodGet, u, nil, nil)
	require.Contains(t, string(r.Body), "sdkpp Demo", "consent page lacks app name or CSRF token")
	require.Contains(t, string(r.Body), `name="csrf_token"`, "consent page lacks app name or CSRF token")
	_, err := browser.New().Authorize(context.Background(), u, browser.Choice{Username: "alice", Password: "wrong"})
	require.ErrorContains(t, err, "HTTP 401", "wrong password")
	require.Contains(t, err.Error(), "Wrong username or password", "wrong password")
	_, err = browser.New().Authorize(context.Background(), u, browser.Choice{Username: "nobody", Password: "x"})
	require.ErrorContains(t, err, "HTTP 401", "unknown user")
	// CSRF: a POST without the cookie is refused.
	form := url.Values{"response_type": {"code"}, "client_id": {e.App.ID.String()}, "scope": {"identify"},
		"redirect_uri": {loopbackRedirect}, "username": {"alice"}, "password": {e.User("alice").Password},
		"action": {"approve"}, "csrf_token": {"forged-forged-forged-forged-forged"}}
	r = postForm(t, e.URL+"/oauth2/authorize", form)
	require.Equal(t, http.StatusForbidden, r.Status, "forged CSRF: %d", r.Status)
	require.Empty(t, r.Header.Get("Location"), "forged CSRF: %d", r.Status)
}

func TestRefreshRotationAndRevocation(t *testing.T) {
	e := servertest.Start(t)
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	require.NoError(t, e.Server.SetWebhookURL(uint64(e.App.ID), recv.URL))
	tr := linkedTokens(t, e, "bob", "openid sdk.social_layer")
	next := refresh(t, e, tr.RefreshToken).token(t)
	require.NotEqual(t, tr.RefreshToken, next.RefreshToken, "refresh did not rotate")
	require.NotEqual(t, tr.AccessToken, next.AccessToken, "refresh did not rotate")
	require.NotEmpty(t, next.IDToken, "refresh did not rotate")
	// Narrowing the scope on refresh works; widening fails.
	narrow := refresh(t, e, next.RefreshToken).token(t)
	r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {narrow.RefreshToken},
		"client_id": {e.App.ID.String()}, "scope": {"identify email"}})
	require.Equal(t, wire.OAuthInvalidScope, r.oauthError(t), "widening refresh: %s", r.Body)
	// Revoking the access token revokes the whole authorization (rule AU-7).
	r = postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {narrow.AccessToken}, "token_type_hint": {"access_token"},
		"client_id": {e.App.ID.String()}})
	require.Equal(t, 200, r.Status, "revoke: %d %s", r.Status, r.Body)
	_, r = getMe(t, e, narrow.AccessToken)
	require.Equal(t, 401, r.Status, "rule AU-7: revoked access token still works: %d", r.Status)
	r = refresh(t, e, narrow.RefreshToken)
	require.Equal(t, 400, r.Status, "rule AU-6: refresh after revocation: %d %s", r.Status, r.Body)
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "rule AU-6: refresh after revocation: %d %s", r.Status, r.Body)
	// The first refresh token, used at the first rotation, is dead too (its reuse alone would
	// revoke its family: TestRFC9700_4_14_2_RefreshReuseRevokesFamily).
	r = refresh(t, e, tr.RefreshToken)
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "old refresh token still works: %s", r.Body)
	got := recv.Next(t, 5*time.Second) // rules WH-1, ST-2
	require.True(t, got.SignatureOK, "rule WH-1: webhook %s", got.Body)
	require.Equal(t, wire.EventApplicationDeauthorized, got.Event.Event.Type, "rule WH-1: webhook %s", got.Body)
	require.NotNil(t, got.User, "rule WH-1: webhook %s", got.Body)
	require.Equal(t, e.User("bob").ID, got.User.ID, "rule WH-1: webhook %s", got.Body)
	// Unknown tokens revoke nothing and still answer 200 (RFC 7009).
	r = postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {"nope"}, "client_id": {e.App.ID.String()}})
	require.Equal(t, 200, r.Status, "unknown token revoke: %d", r.Status)
	r = postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {"nope"}, "client_id": {e.App.ID.String()}, "client_secret": {"bad"}})
	require.Equal(t, 401, r.Status, "revoke with a wrong secret: %d", r.Status)
	// Once the queue is settled, the one webhook above is all the receiver got.
	e.SettleWebhooks(t)
	assert.Equal(t, 1, recv.Count(), "a revocation of nothing sent a webhook")
}

func TestClientCredentials(t *testing.T) {
	e := servertest.Start(t)
	tr := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"identify"},
		"client_id": {e.App.ID.String()}, "client_secret": {e.App.ClientSecret}}).token(t)
	require.Empty(t, tr.RefreshToken, "client_credentials issued a refresh token")
	me, _ := getMe(t, e, tr.AccessToken)
	require.Equal(t, e.App.BotUserID, me.ID, "client credentials user: %+v", me)
	require.True(t, me.Bot, "client credentials user: %+v", me)
	r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {e.App.ID.String()}})
	require.Equal(t, 401, r.Status, "client_credentials without secret: %d", r.Status)
}

// A client_credentials token is signed and has no row; it is refused once revoked (RFC 7009,
// which revokes its authorization, rule ST-2), a new one works, and the revoked one stays
// refused.
func TestClientCredentialsSignedTokenRevoked(t *testing.T) {
	e := servertest.Start(t)
	issue := func() string {
		return postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"identify"},
			"client_id": {e.App.ID.String()}, "client_secret": {e.App.ClientSecret}}).token(t).AccessToken
	}
	first := issue()
	require.Equal(t, 2, strings.Count(first, "."), "a signed token: %d characters", len(first))
	_, r := getMe(t, e, first)
	require.Equal(t, 200, r.Status, "users/@me: %d %s", r.Status, r.Body)
	before, err := e.Server.Store().MaxID(t.Context())
	require.NoError(t, err)
	second := issue()
	after, err := e.Server.Store().MaxID(t.Context())
	require.NoError(t, err)
	assert.Equal(t, before, after, "a token under an authorization made before wrote a row")

	r = postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {first}, "client_id": {e.App.ID.String()},
		"client_secret": {e.App.ClientSecret}})
	require.Equal(t, 200, r.Status, "revoke: %d %s", r.Status, r.Body)
	for _, tok := range []string{first, second} {
		_, r = getMe(t, e, tok)
		assert.Equal(t, 401, r.Status, "rule ST-2: a token of the revoked authorization: %d", r.Status)
	}
	third := issue()
	_, r = getMe(t, e, third)
	require.Equal(t, 200, r.Status, "a new token after the revocation: %d %s", r.Status, r.Body)
	_, r = getMe(t, e, first)
	assert.Equal(t, 401, r.Status, "the revoked token, after a new authorization: %d", r.Status)
	// Another client cannot revoke it (RFC 7009 2.1).
	r = postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {third}, "client_id": {e.ChildApp.ID.String()},
		"client_secret": {e.ChildApp.ClientSecret}})
	require.Equal(t, 200, r.Status, "revoke by another client: %d %s", r.Status, r.Body)
	_, r = getMe(t, e, third)
	assert.Equal(t, 200, r.Status, "revoked by another client: %d", r.Status)
}

func TestScopePartialGrantAndPremium(t *testing.T) {
	e := servertest.Start(t)
	alice := e.User("alice") // premium_type 2
	exchange := func(app wire.DevApplication, loc, verifier string) wire.TokenResponse {
		return postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {params(t, loc).Get("code")},
			"client_id": {app.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifier}}).token(t)
	}
	verifier, challenge := pkce("p")
	// The user unticks email and keeps guilds.members.read: only that one is granted (rule SC-4).
	loc := e.ApproveScopes(t, authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer_presence email guilds.members.read",
		redirect: loopbackRedirect, challenge: challenge}.url(e), alice.Username, alice.Password, []string{"guilds.members.read"})
	tr := exchange(e.App, loc, verifier)
	got := strings.Fields(tr.Scope)
	require.NotContains(t, got, "email", "rule SC-4: granted %q", tr.Scope)
	require.Contains(t, got, "guilds.members.read", "rule SC-4: granted %q", tr.Scope)
	require.Contains(t, got, "relationships.read", "rule SC-4: granted %q", tr.Scope)
	// rule SC-3: the presence scope does not include communication
	require.NotContains(t, got, "lobbies.write", "rule SC-3: presence grant has lobbies.write: %q", tr.Scope)
	// identify.premium is not granted to an unapproved app, and premium_type stays 0 (rules AU-2, USR-1).
	loc = e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify identify.premium", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password)
	tr = exchange(e.App, loc, verifier)
	require.NotContains(t, tr.Scope, "identify.premium", "rule AU-2: unapproved app got %q", tr.Scope)
	me, _ := getMe(t, e, tr.AccessToken)
	require.Equal(t, 0, me.PremiumType, "rule USR-1: premium_type %d for an unapproved app", me.PremiumType)
	// The approved app that requested and was granted it sees the tier (rule USR-1) ...
	loc = e.Approve(t, authz{clientID: e.PremiumApp.ID.String(), scope: "identify identify.premium", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password)
	tr = exchange(e.PremiumApp, loc, verifier)
	// rules AU-2, USR-1
	me, _ = getMe(t, e, tr.AccessToken)
	require.Equal(t, 2, me.PremiumType, "rule USR-1: approved app sees premium_type %d (scope %q)", me.PremiumType, tr.Scope)
	require.Contains(t, tr.Scope, "identify.premium", "rule USR-1: approved app sees premium_type %d (scope %q)", me.PremiumType, tr.Scope)
	// ... but not when it did not request the scope, or the user declined it (rule USR-1).
	loc = e.Approve(t, authz{clientID: e.PremiumApp.ID.String(), scope: "identify", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password)
	me, _ = getMe(t, e, exchange(e.PremiumApp, loc, verifier).AccessToken)
	require.Equal(t, 0, me.PremiumType, "rule USR-1: premium_type %d without the scope", me.PremiumType)
	loc = e.ApproveScopes(t, authz{clientID: e.PremiumApp.ID.String(), scope: "identify identify.premium", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password, nil)
	me, _ = getMe(t, e, exchange(e.PremiumApp, loc, verifier).AccessToken)
	require.Equal(t, 0, me.PremiumType, "rule USR-1: premium_type %d with the scope declined", me.PremiumType)
}

func TestPromptNoneAfterConsent(t *testing.T) {
	e := servertest.Start(t)
	bob := e.User("bob")
	_, challenge := pkce("n")
	q := authz{clientID: e.App.ID.String(), scope: "identify", redirect: loopbackRedirect, challenge: challenge, state: "pn"}
	// A fresh browser session: approve once, then prompt=none answers at once with a code.
	b := newBrowserSession(t)
	loc := b.approve(t, q.url(e), bob.Username, bob.Password)
	require.NotEmpty(t, params(t, loc).Get("code"), "no code")
	postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {params(t, loc).Get("code")},
		"client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifierFor("n")}}).token(t)
	q.prompt = "none"
	loc = b.get(t, q.url(e))
	p := params(t, loc)
	require.NotEmpty(t, p.Get("code"), "prompt=none with a session and a grant: %v", p)
	require.Equal(t, "pn", p.Get("state"), "prompt=none with a session and a grant: %v", p)
	q.scope = "identify email"
	require.Equal(t, wire.OAuthConsentRequired, params(t, b.get(t, q.url(e))).Get("error"), "prompt=none for new scopes")
}

func TestConfidentialClientMustAuthenticate(t *testing.T) {
	e := servertest.Start(t)
	app, err := e.Server.CreateApplication(server.AppSpec{Name: "Backend Game", RedirectURIs: []string{"https://game.example.com/cb"}})
	require.NoError(t, err)
	alice := e.User("alice")
	// Loopback redirects are for public clients only.
	r := do(t, http.MethodGet, authz{clientID: app.ID.String(), scope: "identify", redirect: loopbackRedirect}.url(e), nil, nil)
	require.Equal(t, 400, r.Status, "loopback redirect for a confidential client: %d", r.Status)
	loc := e.Approve(t, authz{clientID: app.ID.String(), scope: "identify", redirect: "https://game.example.com/cb", integration: "0"}.url(e), alice.Username, alice.Password)
	code := params(t, loc).Get("code")
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {app.ID.String()}, "redirect_uri": {"https://game.example.com/cb"}}
	r = postForm(t, e.APIURL+"/oauth2/token", form)
	require.Equal(t, 401, r.Status, "confidential exchange without a secret: %d %s", r.Status, r.Body)
	require.Equal(t, wire.OAuthInvalidClient, r.oauthError(t), "confidential exchange without a secret: %d %s", r.Status, r.Body)
	loc = e.Approve(t, authz{clientID: app.ID.String(), scope: "identify", redirect: "https://game.example.com/cb", integration: "0"}.url(e), alice.Username, alice.Password)
	form.Set("code", params(t, loc).Get("code"))
	form.Set("client_secret", app.ClientSecret)
	tr := postForm(t, e.APIURL+"/oauth2/token", form).token(t)
	a, err := e.Server.Store().FindAuthorization(t.Context(), uint64(app.ID), uint64(alice.ID))
	require.NoError(t, err, "rule AA-6: %+v", a)
	require.Equal(t, 0, a.IntegrationType, "rule AA-6: %+v", a)
	for _, path := range []string{"/oauth2/device/authorize", "/oauth2/token/revoke"} {
		r := postForm(t, e.APIURL+path, url.Values{"client_id": {app.ID.String()}, "scope": {"identify"}, "token": {tr.AccessToken}})
		assert.Equal(t, 401, r.Status, "%s without the secret: %d", path, r.Status)
	}
	// A token without identify cannot read the user.
	cc := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"applications.commands"},
		"client_id": {app.ID.String()}, "client_secret": {app.ClientSecret}}).token(t)
	_, r = getMe(t, e, cc.AccessToken)
	require.Equal(t, 403, r.Status, "users/@me without identify: %d %s", r.Status, r.Body)
	require.Equal(t, wire.CodeMissingAccess, r.apiError(t).Code, "users/@me without identify: %d %s", r.Status, r.Body)
}

// rule AU-3: an application gets relationships.read, through sdk.social_layer or by name, once it
// accepted the SDK terms, with no other approval; before that the token does not carry it.
func TestRelationshipsReadAfterSDKTerms(t *testing.T) {
	e := servertest.Start(t)
	app, err := e.Server.CreateApplication(server.AppSpec{Name: "Terms Game", RedirectURIs: []string{"https://terms.example.com/cb"}})
	require.NoError(t, err)
	alice := e.User("alice")
	scopesOf := func() []string {
		loc := e.Approve(t, authz{clientID: app.ID.String(), scope: "openid sdk.social_layer relationships.read",
			redirect: "https://terms.example.com/cb"}.url(e), alice.Username, alice.Password)
		form := url.Values{"grant_type": {"authorization_code"}, "code": {params(t, loc).Get("code")},
			"client_id": {app.ID.String()}, "client_secret": {app.ClientSecret}, "redirect_uri": {"https://terms.example.com/cb"}}
		return strings.Fields(postForm(t, e.APIURL+"/oauth2/token", form).token(t).Scope)
	}
	got := scopesOf()
	require.NotContains(t, got, "relationships.read", "rule AU-3: before the SDK terms the token carries %v", got)
	require.Contains(t, got, "lobbies.write", "rule AU-3: before the SDK terms the token carries %v", got)
	require.NoError(t, e.Server.SetSDKTermsAccepted(uint64(app.ID), true))
	require.Contains(t, scopesOf(), "relationships.read", "rule AU-3: after the SDK terms the token carries")
}
