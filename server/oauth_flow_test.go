package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

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
	if len(parts) != 3 {
		t.Fatalf("id_token is not a JWS: %q", idToken)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuthorizationCodeFlowWithPKCE(t *testing.T) {
	e := servertest.Start(t)
	alice := e.User("alice")
	verifier, challenge := pkce("a")
	loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "st-123",
		redirect: loopbackRedirect, challenge: challenge, nonce: "nonce-42", integration: "1"}.url(e), alice.Username, alice.Password)
	if !strings.HasPrefix(loc, loopbackRedirect+"?") {
		t.Fatalf("redirect to %q", loc)
	}
	p := params(t, loc)
	if p.Get("state") != "st-123" || p.Get("code") == "" {
		t.Fatalf("state not passed through or no code: %v", p)
	}
	tr := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {p.Get("code")},
		"client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifier}}).token(t) // rule AA-5
	if tr.TokenType != "Bearer" || tr.ExpiresIn != 604800 || tr.AccessToken == "" || tr.RefreshToken == "" {
		t.Fatalf("token response %+v", tr)
	}
	granted := strings.Fields(tr.Scope)
	for _, s := range append([]string{"openid", scopes.SocialLayer, scopes.SocialLayerPresence}, append(scopes.PresenceSet, scopes.SocialSet...)...) {
		if !slices.Contains(granted, s) {
			t.Errorf("rule SC-3: scope %s missing from %q", s, tr.Scope)
		}
	}
	claims := idClaims(t, tr.IDToken)
	if claims["nonce"] != "nonce-42" { // rule AA-4
		t.Errorf("rule AA-4: id_token nonce = %v", claims["nonce"])
	}
	if claims["aud"] != e.App.ID.String() || claims["sub"] != alice.ID.String() || claims["iss"] != e.URL {
		t.Errorf("id_token claims %v", claims)
	}
	me, r := getMe(t, e, tr.AccessToken)
	if r.Status != http.StatusOK || me.ID != alice.ID || me.Username != "alice" || me.IsProvisional {
		t.Fatalf("users/@me: %d %s", r.Status, r.Body)
	}
	// rule AA-6: the integration type is recorded with the authorization.
	a, err := e.Server.Store().FindAuthorization(context.Background(), uint64(e.App.ID), uint64(alice.ID))
	if err != nil || a.IntegrationType != 1 {
		t.Fatalf("rule AA-6: authorization %+v %v", a, err)
	}
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
		if r.Status != 400 || r.oauthError(t) != wire.OAuthInvalidGrant { // rule AA-5
			t.Fatalf("rule AA-5: wrong verifier: %d %s", r.Status, r.Body)
		}
	})
	t.Run("missing verifier", func(t *testing.T) {
		r := exchange(code(loopbackRedirect), loopbackRedirect, "", nil)
		if r.oauthError(t) != wire.OAuthInvalidGrant {
			t.Fatalf("missing verifier: %s", r.Body)
		}
	})
	t.Run("reused code", func(t *testing.T) {
		c := code(loopbackRedirect)
		exchange(c, loopbackRedirect, verifier, nil).token(t)
		r := exchange(c, loopbackRedirect, verifier, nil)
		if r.Status != 400 || r.oauthError(t) != wire.OAuthInvalidGrant {
			t.Fatalf("reused code: %d %s", r.Status, r.Body)
		}
	})
	t.Run("expired code", func(t *testing.T) {
		c := code(loopbackRedirect)
		e.Clock.Advance(10*time.Minute + time.Second)
		r := exchange(c, loopbackRedirect, verifier, nil)
		if r.oauthError(t) != wire.OAuthInvalidGrant || !strings.Contains(string(r.Body), "expired") {
			t.Fatalf("expired code: %s", r.Body)
		}
	})
	t.Run("redirect uri mismatch at token", func(t *testing.T) {
		c := code("http://127.0.0.1:40000/authorize/callback") // any loopback port is allowed (RFC 8252)
		r := exchange(c, loopbackRedirect, verifier, nil)
		if r.oauthError(t) != wire.OAuthInvalidGrant {
			t.Fatalf("redirect mismatch: %s", r.Body)
		}
	})
	t.Run("wrong client secret", func(t *testing.T) {
		r := exchange(code(loopbackRedirect), loopbackRedirect, verifier, url.Values{"client_secret": {"not-the-secret"}})
		if r.Status != 401 || r.oauthError(t) != wire.OAuthInvalidClient {
			t.Fatalf("wrong secret: %d %s", r.Status, r.Body)
		}
		req, _ := http.NewRequest(http.MethodPost, e.APIURL+"/oauth2/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(e.App.ID.String(), "wrong")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 {
			t.Fatalf("Basic with a wrong secret: %d", res.StatusCode)
		}
	})
	t.Run("unknown client", func(t *testing.T) {
		r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "client_id": {"123"}})
		if r.Status != 401 || r.oauthError(t) != wire.OAuthInvalidClient {
			t.Fatalf("unknown client: %d %s", r.Status, r.Body)
		}
	})
	t.Run("json body", func(t *testing.T) {
		r := sendJSON(t, http.MethodPost, e.APIURL+"/oauth2/token", map[string]string{"grant_type": "client_credentials",
			"client_id": e.App.ID.String(), "client_secret": e.App.ClientSecret}, nil)
		if r.Status != 400 || r.oauthError(t) != wire.OAuthInvalidRequest {
			t.Fatalf("JSON body: %d %s", r.Status, r.Body)
		}
	})
	t.Run("public client without PKCE nor secret", func(t *testing.T) {
		loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify", redirect: loopbackRedirect}.url(e), alice.Username, alice.Password)
		r := exchange(params(t, loc).Get("code"), loopbackRedirect, "", nil)
		if r.oauthError(t) != wire.OAuthInvalidGrant {
			t.Fatalf("no PKCE, no secret: %s", r.Body)
		}
		// The same code flow works server-side with the client secret (confidential exchange).
		loc = e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify", redirect: loopbackRedirect}.url(e), alice.Username, alice.Password)
		exchange(params(t, loc).Get("code"), loopbackRedirect, "", url.Values{"client_secret": {e.App.ClientSecret}}).token(t)
	})
	t.Run("unsupported grant", func(t *testing.T) {
		r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"password"}, "client_id": {e.App.ID.String()}})
		if r.oauthError(t) != wire.OAuthUnsupportedGrantType {
			t.Fatalf("unsupported grant: %s", r.Body)
		}
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
		if r.Status != http.StatusOK {
			t.Errorf("redirect %s refused: %d", ru, r.Status)
		}
	}
	refused := []string{"http://evil.example/authorize/callback", "http://127.0.0.1:5/other", "https://127.0.0.1:5/authorize/callback",
		"http://localhost:5/authorize/callback", "othergame:/authorize/callback", "", "http://127.0.0.1:99999/authorize/callback"}
	for _, ru := range refused {
		r := do(t, http.MethodGet, authz{clientID: id, scope: "identify", redirect: ru}.url(e), nil, nil)
		if r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" {
			t.Errorf("redirect %q: HTTP %d (want an error page, no redirect)", ru, r.Status)
		}
	}
	// The child app registered only the loopback URI; its custom scheme is not the parent's.
	r := do(t, http.MethodGet, authz{clientID: e.ChildApp.ID.String(), scope: "identify", redirect: "sdkppdemo:/authorize/callback"}.url(e), nil, nil)
	if r.Status != http.StatusBadRequest {
		t.Errorf("child app accepted the parent's scheme: %d", r.Status)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		p := params(t, res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || p.Get("error") != c.want || p.Get("state") != "q" {
			t.Errorf("%+v: %d %v", c.q, res.StatusCode, p)
		}
	}
}

func TestConsentDenyAndLoginErrors(t *testing.T) {
	e := servertest.Start(t)
	u := authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "deny-state", redirect: loopbackRedirect}.url(e)
	p := params(t, e.Deny(t, u))
	if p.Get("error") != wire.OAuthAccessDenied || p.Get("state") != "deny-state" || p.Get("code") != "" {
		t.Fatalf("deny: %v", p)
	}
	// A wrong password shows the page again with an error, and issues nothing.
	r := do(t, http.MethodGet, u, nil, nil)
	if !strings.Contains(string(r.Body), "sdkpp Demo") || !strings.Contains(string(r.Body), `name="csrf_token"`) {
		t.Fatalf("consent page lacks app name or CSRF token")
	}
	_, err := browser.New().Authorize(context.Background(), u, browser.Choice{Username: "alice", Password: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "Wrong username or password") {
		t.Fatalf("wrong password: %v", err)
	}
	_, err = browser.New().Authorize(context.Background(), u, browser.Choice{Username: "nobody", Password: "x"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("unknown user: %v", err)
	}
	// CSRF: a POST without the cookie is refused.
	form := url.Values{"response_type": {"code"}, "client_id": {e.App.ID.String()}, "scope": {"identify"},
		"redirect_uri": {loopbackRedirect}, "username": {"alice"}, "password": {e.User("alice").Password},
		"action": {"approve"}, "csrf_token": {"forged-forged-forged-forged-forged"}}
	r = postForm(t, e.URL+"/oauth2/authorize", form)
	if r.Status != http.StatusForbidden || r.Header.Get("Location") != "" {
		t.Fatalf("forged CSRF: %d", r.Status)
	}
}

func TestRefreshRotationAndRevocation(t *testing.T) {
	e := servertest.Start(t)
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	if err := e.Server.SetWebhookURL(uint64(e.App.ID), recv.URL); err != nil {
		t.Fatal(err)
	}
	tr := linkedTokens(t, e, "bob", "openid sdk.social_layer")
	next := refresh(t, e, tr.RefreshToken).token(t)
	if next.RefreshToken == tr.RefreshToken || next.AccessToken == tr.AccessToken || next.IDToken == "" {
		t.Fatal("refresh did not rotate")
	}
	if r := refresh(t, e, tr.RefreshToken); r.oauthError(t) != wire.OAuthInvalidGrant {
		t.Fatalf("old refresh token still works: %s", r.Body)
	}
	// Narrowing the scope on refresh works; widening fails.
	narrow := refresh(t, e, next.RefreshToken).token(t)
	if r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {narrow.RefreshToken},
		"client_id": {e.App.ID.String()}, "scope": {"identify email"}}); r.oauthError(t) != wire.OAuthInvalidScope {
		t.Fatalf("widening refresh: %s", r.Body)
	}
	// Revoking the access token revokes the whole authorization (rule AU-7).
	r := postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {narrow.AccessToken}, "token_type_hint": {"access_token"},
		"client_id": {e.App.ID.String()}})
	if r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if _, r := getMe(t, e, narrow.AccessToken); r.Status != 401 { // rule AU-7
		t.Fatalf("rule AU-7: revoked access token still works: %d", r.Status)
	}
	if r := refresh(t, e, narrow.RefreshToken); r.Status != 400 || r.oauthError(t) != wire.OAuthInvalidGrant { // rule AU-6
		t.Fatalf("rule AU-6: refresh after revocation: %d %s", r.Status, r.Body)
	}
	got := recv.Next(t, 5*time.Second) // rules WH-1, ST-2
	if !got.SignatureOK || got.Event.Event.Type != wire.EventApplicationDeauthorized || got.User == nil || got.User.ID != e.User("bob").ID {
		t.Fatalf("rule WH-1: webhook %s", got.Body)
	}
	// Unknown tokens revoke nothing and still answer 200 (RFC 7009).
	if r := postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {"nope"}, "client_id": {e.App.ID.String()}}); r.Status != 200 {
		t.Fatalf("unknown token revoke: %d", r.Status)
	}
	if r := postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {"nope"}, "client_id": {e.App.ID.String()}, "client_secret": {"bad"}}); r.Status != 401 {
		t.Fatalf("revoke with a wrong secret: %d", r.Status)
	}
	recv.None(t, 200*time.Millisecond)
}

func TestClientCredentials(t *testing.T) {
	e := servertest.Start(t)
	tr := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"identify"},
		"client_id": {e.App.ID.String()}, "client_secret": {e.App.ClientSecret}}).token(t)
	if tr.RefreshToken != "" {
		t.Fatal("client_credentials issued a refresh token")
	}
	me, _ := getMe(t, e, tr.AccessToken)
	if me.ID != e.App.BotUserID || !me.Bot {
		t.Fatalf("client credentials user: %+v", me)
	}
	r := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {e.App.ID.String()}})
	if r.Status != 401 {
		t.Fatalf("client_credentials without secret: %d", r.Status)
	}
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
	if slices.Contains(got, "email") || !slices.Contains(got, "guilds.members.read") || !slices.Contains(got, "relationships.read") { // rule SC-4
		t.Fatalf("rule SC-4: granted %q", tr.Scope)
	}
	if slices.Contains(got, "lobbies.write") { // rule SC-3: the presence scope does not include communication
		t.Fatalf("rule SC-3: presence grant has lobbies.write: %q", tr.Scope)
	}
	// identify.premium is not granted to an unapproved app, and premium_type stays 0 (rules AU-2, USR-1).
	loc = e.Approve(t, authz{clientID: e.App.ID.String(), scope: "identify identify.premium", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password)
	tr = exchange(e.App, loc, verifier)
	if strings.Contains(tr.Scope, "identify.premium") { // rule AU-2
		t.Fatalf("rule AU-2: unapproved app got %q", tr.Scope)
	}
	if me, _ := getMe(t, e, tr.AccessToken); me.PremiumType != 0 { // rule USR-1
		t.Fatalf("rule USR-1: premium_type %d for an unapproved app", me.PremiumType)
	}
	// The approved app that requested and was granted it sees the tier (rule USR-1) ...
	loc = e.Approve(t, authz{clientID: e.PremiumApp.ID.String(), scope: "identify identify.premium", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password)
	tr = exchange(e.PremiumApp, loc, verifier)
	if me, _ := getMe(t, e, tr.AccessToken); me.PremiumType != 2 || !strings.Contains(tr.Scope, "identify.premium") { // rules AU-2, USR-1
		t.Fatalf("rule USR-1: approved app sees premium_type %d (scope %q)", me.PremiumType, tr.Scope)
	}
	// ... but not when it did not request the scope, or the user declined it (rule USR-1).
	loc = e.Approve(t, authz{clientID: e.PremiumApp.ID.String(), scope: "identify", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password)
	if me, _ := getMe(t, e, exchange(e.PremiumApp, loc, verifier).AccessToken); me.PremiumType != 0 {
		t.Fatalf("rule USR-1: premium_type %d without the scope", me.PremiumType)
	}
	loc = e.ApproveScopes(t, authz{clientID: e.PremiumApp.ID.String(), scope: "identify identify.premium", redirect: loopbackRedirect,
		challenge: challenge}.url(e), alice.Username, alice.Password, nil)
	if me, _ := getMe(t, e, exchange(e.PremiumApp, loc, verifier).AccessToken); me.PremiumType != 0 {
		t.Fatalf("rule USR-1: premium_type %d with the scope declined", me.PremiumType)
	}
}

func TestPromptNoneAfterConsent(t *testing.T) {
	e := servertest.Start(t)
	bob := e.User("bob")
	_, challenge := pkce("n")
	q := authz{clientID: e.App.ID.String(), scope: "identify", redirect: loopbackRedirect, challenge: challenge, state: "pn"}
	// A fresh browser session: approve once, then prompt=none answers at once with a code.
	b := newBrowserSession(t)
	loc := b.approve(t, q.url(e), bob.Username, bob.Password)
	if params(t, loc).Get("code") == "" {
		t.Fatal("no code")
	}
	postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {params(t, loc).Get("code")},
		"client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifierFor("n")}}).token(t)
	q.prompt = "none"
	loc = b.get(t, q.url(e))
	if p := params(t, loc); p.Get("code") == "" || p.Get("state") != "pn" {
		t.Fatalf("prompt=none with a session and a grant: %v", p)
	}
	q.scope = "identify email"
	if p := params(t, b.get(t, q.url(e))); p.Get("error") != wire.OAuthConsentRequired {
		t.Fatalf("prompt=none for new scopes: %v", p)
	}
}

func TestConfidentialClientMustAuthenticate(t *testing.T) {
	e := servertest.Start(t)
	app, err := e.Server.CreateApplication(server.AppSpec{Name: "Backend Game", RedirectURIs: []string{"https://game.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := e.User("alice")
	// Loopback redirects are for public clients only.
	if r := do(t, http.MethodGet, authz{clientID: app.ID.String(), scope: "identify", redirect: loopbackRedirect}.url(e), nil, nil); r.Status != 400 {
		t.Fatalf("loopback redirect for a confidential client: %d", r.Status)
	}
	loc := e.Approve(t, authz{clientID: app.ID.String(), scope: "identify", redirect: "https://game.example.com/cb", integration: "0"}.url(e), alice.Username, alice.Password)
	code := params(t, loc).Get("code")
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {app.ID.String()}, "redirect_uri": {"https://game.example.com/cb"}}
	if r := postForm(t, e.APIURL+"/oauth2/token", form); r.Status != 401 || r.oauthError(t) != wire.OAuthInvalidClient {
		t.Fatalf("confidential exchange without a secret: %d %s", r.Status, r.Body)
	}
	loc = e.Approve(t, authz{clientID: app.ID.String(), scope: "identify", redirect: "https://game.example.com/cb", integration: "0"}.url(e), alice.Username, alice.Password)
	form.Set("code", params(t, loc).Get("code"))
	form.Set("client_secret", app.ClientSecret)
	tr := postForm(t, e.APIURL+"/oauth2/token", form).token(t)
	if a, err := e.Server.Store().FindAuthorization(t.Context(), uint64(app.ID), uint64(alice.ID)); err != nil || a.IntegrationType != 0 { // rule AA-6
		t.Fatalf("rule AA-6: %+v %v", a, err)
	}
	for _, path := range []string{"/oauth2/device/authorize", "/oauth2/token/revoke"} {
		if r := postForm(t, e.APIURL+path, url.Values{"client_id": {app.ID.String()}, "scope": {"identify"}, "token": {tr.AccessToken}}); r.Status != 401 {
			t.Errorf("%s without the secret: %d", path, r.Status)
		}
	}
	// A token without identify cannot read the user.
	cc := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"applications.commands"},
		"client_id": {app.ID.String()}, "client_secret": {app.ClientSecret}}).token(t)
	if _, r := getMe(t, e, cc.AccessToken); r.Status != 403 || r.apiError(t).Code != wire.CodeMissingAccess {
		t.Fatalf("users/@me without identify: %d %s", r.Status, r.Body)
	}
}

// rule AU-3: an application gets relationships.read, through sdk.social_layer or by name, once it
// accepted the SDK terms, with no other approval; before that the token does not carry it.
func TestRelationshipsReadAfterSDKTerms(t *testing.T) {
	e := servertest.Start(t)
	app, err := e.Server.CreateApplication(server.AppSpec{Name: "Terms Game", RedirectURIs: []string{"https://terms.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := e.User("alice")
	scopesOf := func() []string {
		loc := e.Approve(t, authz{clientID: app.ID.String(), scope: "openid sdk.social_layer relationships.read",
			redirect: "https://terms.example.com/cb"}.url(e), alice.Username, alice.Password)
		form := url.Values{"grant_type": {"authorization_code"}, "code": {params(t, loc).Get("code")},
			"client_id": {app.ID.String()}, "client_secret": {app.ClientSecret}, "redirect_uri": {"https://terms.example.com/cb"}}
		return strings.Fields(postForm(t, e.APIURL+"/oauth2/token", form).token(t).Scope)
	}
	if got := scopesOf(); slices.Contains(got, "relationships.read") || !slices.Contains(got, "lobbies.write") {
		t.Fatalf("rule AU-3: before the SDK terms the token carries %v", got)
	}
	if err := e.Server.SetSDKTermsAccepted(uint64(app.ID), true); err != nil {
		t.Fatal(err)
	}
	if got := scopesOf(); !slices.Contains(got, "relationships.read") {
		t.Fatalf("rule AU-3: after the SDK terms the token carries %v", got)
	}
}
