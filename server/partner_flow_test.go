package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/extauth"
	"sdkpp/server/servertest"
	"sdkpp/server/token"
	"sdkpp/wire"
)

func botToken(t *testing.T, e *servertest.Env, app wire.DevApplication, ext string, name *string) resp {
	t.Helper()
	return sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/token/bot",
		wire.BotTokenRequest{ExternalUserID: ext, PreferredGlobalName: name}, bot(app.BotToken))
}

func external(t *testing.T, e *servertest.Env, body wire.ExternalTokenRequest) resp {
	t.Helper()
	return sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/token", body, nil)
}

func devToken(t *testing.T, e *servertest.Env, typ, sub string) string {
	t.Helper()
	tok, err := extauth.DevToken(uint64(e.App.ID), e.App.ClientSecret, typ, sub, e.Clock.Now(), time.Hour)
	require.NoError(t, err)
	return tok
}

// mergeCode runs the code flow as username and exchanges the code with external credentials.
func mergeCode(t *testing.T, e *servertest.Env, username, typ, tok string) resp {
	t.Helper()
	verifier, challenge := pkce("m")
	u := e.User(username)
	loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", redirect: loopbackRedirect,
		challenge: challenge}.url(e), u.Username, u.Password)
	return postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {params(t, loc).Get("code")},
		"client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifier},
		"external_auth_type": {typ}, "external_auth_token": {tok}})
}

func TestBotTokenEndpoint(t *testing.T) {
	e := servertest.Start(t)
	body := wire.BotTokenRequest{ExternalUserID: "player-1"}
	for name, h := range map[string]http.Header{
		"none": nil, "wrong": bot("not-a-bot-token"), "bearer scheme": bearer(e.App.BotToken),
		"client secret as bot token": bot(e.App.ClientSecret),
	} {
		r := sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/token/bot", body, h)
		assert.Equal(t, 401, r.Status, "rule AU-8: %s bot token: %d %s", name, r.Status, r.Body)
	}
	r := botToken(t, e, e.App, "", nil)
	require.Equal(t, 400, r.Status, "missing external_user_id: %d %s", r.Status, r.Body)
	require.Equal(t, wire.CodeInvalidFormBody, r.apiError(t).Code, "missing external_user_id: %d %s", r.Status, r.Body)
	require.Contains(t, string(r.Body), "external_user_id", "missing external_user_id: %d %s", r.Status, r.Body)
	long := strings.Repeat("x", 40)
	r = botToken(t, e, e.App, "p", &long)
	require.Equal(t, 400, r.Status, "long name: %s", r.Body)
	require.Contains(t, string(r.Body), "preferred_global_name", "long name: %s", r.Body)
	name := "Ranger"
	tr := botToken(t, e, e.App, "player-1", &name).token(t) // rules AU-5, AU-8
	require.NotEmpty(t, tr.RefreshToken, "rule AU-5: provisional token response %+v", tr)
	require.NotEmpty(t, tr.IDToken, "rule AU-5: provisional token response %+v", tr)
	require.Equal(t, int64(604800), tr.ExpiresIn, "rule AU-5: provisional token response %+v", tr)
	me, _ := getMe(t, e, tr.AccessToken)
	require.True(t, me.IsProvisional, "rule AU-5: provisional user %+v", me)
	require.NotNil(t, me.GlobalName, "rule AU-5: provisional user %+v", me)
	require.Equal(t, "Ranger", *me.GlobalName, "rule AU-5: provisional user %+v", me)
	again := botToken(t, e, e.App, "player-1", nil).token(t)
	me2, _ := getMe(t, e, again.AccessToken)
	require.Equal(t, me.ID, me2.ID, "rule AU-5: the same external user got another account")
	// Provisional accounts get a working refresh token.
	refresh(t, e, tr.RefreshToken).token(t)
	// Another application's bot sees another account for the same external id.
	other := botToken(t, e, e.ChildApp, "player-1", nil).token(t)
	me3, _ := getMe(t, e, other.AccessToken)
	require.NotEqual(t, me.ID, me3.ID, "provisional accounts are per application")
}

func TestExternalCredentialExchange(t *testing.T) {
	e := servertest.Start(t)
	for _, typ := range extauth.ProviderTypes {
		tok := devToken(t, e, typ, "ext-"+typ)
		tr := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: typ, ExternalAuthToken: tok}).token(t) // rule AU-5
		me, _ := getMe(t, e, tr.AccessToken)
		require.True(t, me.IsProvisional, "rule AU-5: %s: %+v", typ, me)
		require.NotEmpty(t, tr.IDToken, "rule AU-5: %s: %+v", typ, me)
	}
	steam := devToken(t, e, extauth.SteamSessionTicket, "steam-1")
	cases := []struct {
		name   string
		body   wire.ExternalTokenRequest
		status int
		code   int
	}{
		{"wrong secret", wire.ExternalTokenRequest{ClientID: e.App.ID, ClientSecret: "bad", ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}, 401, 0},
		{"unknown client", wire.ExternalTokenRequest{ClientID: 42, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}, 401, 0},
		{"missing client", wire.ExternalTokenRequest{ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}, 400, wire.CodeInvalidFormBody},
		{"type mismatch", wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.AppleIDToken, ExternalAuthToken: steam}, 401, wire.CodeInvalidOAuthToken},
		{"unsupported type", wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: "FAX_MACHINE", ExternalAuthToken: steam}, 400, wire.CodeInvalidFormBody},
		{"OIDC not configured", wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.OIDC, ExternalAuthToken: steam}, 400, wire.CodeInvalidFormBody},
		{"missing token", wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket}, 400, wire.CodeInvalidFormBody},
		{"garbage token", wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: "garbage"}, 401, wire.CodeInvalidOAuthToken},
		{"bot-issued garbage", wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.BotIssuedAccessToken, ExternalAuthToken: "garbage"}, 401, wire.CodeInvalidOAuthToken},
	}
	for _, c := range cases {
		r := external(t, e, c.body)
		assert.Equal(t, c.status, r.Status, "%s: %d %s", c.name, r.Status, r.Body)
		assert.Equal(t, c.code, r.apiError(t).Code, "%s: %d %s", c.name, r.Status, r.Body)
	}
	// With the right client secret the exchange works too (confidential server-side call).
	external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ClientSecret: e.App.ClientSecret,
		ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}).token(t)
	// A token issued by the bot endpoint exchanges for the same provisional account.
	bt := botToken(t, e, e.App, "bot-user-7", nil).token(t)
	tr := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.BotIssuedAccessToken, ExternalAuthToken: bt.AccessToken}).token(t)
	a, _ := getMe(t, e, bt.AccessToken)
	b, _ := getMe(t, e, tr.AccessToken)
	require.Equal(t, b.ID, a.ID, "rule AU-5: bot-issued token mapped to another account")
}

func TestOIDCProvisionalAccounts(t *testing.T) {
	iss := servertest.NewOIDCIssuer(t)
	e := servertest.Start(t, servertest.WithOIDCTestIssuer(iss.Client))
	cfgURL := e.APIURL + "/applications/" + e.App.ID.String() + "/oidc-config"
	// rule AU-8
	r := sendJSON(t, http.MethodPut, cfgURL, wire.OIDCConfigRequest{Issuer: iss.URL, ClientID: iss.ClientID}, nil)
	require.Equal(t, 401, r.Status, "oidc-config without a bot token: %d", r.Status)
	r = sendJSON(t, http.MethodPut, e.APIURL+"/applications/"+e.ChildApp.ID.String()+"/oidc-config",
		wire.OIDCConfigRequest{Issuer: iss.URL, ClientID: iss.ClientID}, bot(e.App.BotToken))
	require.Equal(t, 403, r.Status, "oidc-config of another app: %d", r.Status)
	r = sendJSON(t, http.MethodPut, cfgURL, wire.OIDCConfigRequest{Issuer: "http://issuer.example.com", ClientID: "x"}, bot(e.App.BotToken))
	require.Equal(t, 400, r.Status, "rule AU-9: http issuer: %d %s", r.Status, r.Body)
	require.Contains(t, string(r.Body), `"issuer"`, "rule AU-9: http issuer: %d %s", r.Status, r.Body)
	iss.SetRedirects(true, false)
	r = sendJSON(t, http.MethodPut, cfgURL, wire.OIDCConfigRequest{Issuer: iss.URL, ClientID: iss.ClientID}, bot(e.App.BotToken))
	require.Equal(t, 400, r.Status, "rule AU-9: redirecting discovery: %d %s", r.Status, r.Body)
	require.Contains(t, string(r.Body), "redirect", "rule AU-9: redirecting discovery: %d %s", r.Status, r.Body)
	iss.SetRedirects(false, false)
	r = sendJSON(t, http.MethodPut, cfgURL, wire.OIDCConfigRequest{Issuer: iss.URL, ClientID: iss.ClientID}, bot(e.App.BotToken))
	var cfg wire.OIDCConfig
	require.Equal(t, 200, r.Status, "valid issuer: %d %s", r.Status, r.Body)
	r.json(t, &cfg)
	require.Equal(t, iss.URL+"/jwks", cfg.JWKSURI, "config %+v", cfg)
	g := do(t, http.MethodGet, cfgURL, nil, bot(e.App.BotToken))
	require.Equal(t, 200, g.Status, "GET oidc-config: %d", g.Status)

	now := e.Clock.Now()
	tr := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.OIDC,
		ExternalAuthToken: iss.Token(t, now, map[string]any{"nonce": "n-7"}), Nonce: "n-7"}).token(t) // rules AU-5, AA-4
	require.Equal(t, "n-7", idClaims(t, tr.IDToken)["nonce"], "rule AA-4: nonce not passed into the ID token")
	me, _ := getMe(t, e, tr.AccessToken)
	require.True(t, me.IsProvisional, "rule AU-5: OIDC account not provisional")
	bad := map[string]string{
		"nonce mismatch": iss.Token(t, now, map[string]any{"nonce": "other"}),
		"wrong aud":      iss.Token(t, now, map[string]any{"aud": "nope"}),
		"old iat":        iss.Token(t, now, map[string]any{"iat": now.Add(-8 * 24 * time.Hour).Unix()}),
	}
	for name, tok := range bad {
		r := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.OIDC, ExternalAuthToken: tok, Nonce: "n-7"})
		// rules AU-9, AA-4
		assert.Equal(t, 401, r.Status, "rule AU-9: %s: %d %s", name, r.Status, r.Body)
		assert.Equal(t, wire.CodeInvalidOAuthToken, r.apiError(t).Code, "rule AU-9: %s: %d %s", name, r.Status, r.Body)
	}
	// The refresh_token grant still works for an OIDC provisional account but is deprecated (rule AU-5).
	rr := refresh(t, e, tr.RefreshToken)
	rr.token(t)
	require.Equal(t, "true", rr.Header.Get("Deprecation"), "rule AU-5: refresh of an OIDC provisional account not marked deprecated")

	// A server without the test switch refuses the loopback issuer (rule AU-9).
	strict := servertest.Start(t, servertest.WithConfig(func(c *serverConfig) { c.OIDCHTTPClient = iss.Client }))
	r = sendJSON(t, http.MethodPut, strict.APIURL+"/applications/"+strict.App.ID.String()+"/oidc-config",
		wire.OIDCConfigRequest{Issuer: iss.URL, ClientID: iss.ClientID}, bot(strict.App.BotToken))
	require.Equal(t, 400, r.Status, "rule AU-9: IP issuer accepted: %d %s", r.Status, r.Body)
	require.Contains(t, string(r.Body), "IP address", "rule AU-9: IP issuer accepted: %d %s", r.Status, r.Body)
}

func TestMergeBanAndUnban(t *testing.T) {
	e := servertest.Start(t)
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	require.NoError(t, e.Server.SetWebhookURL(uint64(e.App.ID), recv.URL))
	steam := devToken(t, e, extauth.SteamSessionTicket, "steam-42")
	prov := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}).token(t)
	provUser, _ := getMe(t, e, prov.AccessToken)

	// Merge: the normal token call plus external_auth_type and external_auth_token (rule AU-5).
	merged := mergeCode(t, e, "alice", extauth.SteamSessionTicket, steam).token(t)
	me, _ := getMe(t, e, merged.AccessToken)
	require.Equal(t, e.User("alice").ID, me.ID, "merge gave %+v", me)
	_, r := getMe(t, e, prov.AccessToken)
	require.Equal(t, 401, r.Status, "the merged provisional account's token still works")
	again := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}).token(t)
	me, _ = getMe(t, e, again.AccessToken)
	require.Equal(t, e.User("alice").ID, me.ID, "after the merge the identity signs in as %+v", me)
	require.False(t, me.IsProvisional, "after the merge the identity signs in as %+v", me)

	// Ban alice permanently (rule ST-1).
	require.NoError(t, e.Server.BanUser(uint64(e.User("alice").ID), time.Time{}))
	// rule ST-1: tokens deleted at once
	_, r = getMe(t, e, merged.AccessToken)
	require.Equal(t, 401, r.Status, "rule ST-1: a banned user's token still works")
	r = refresh(t, e, merged.RefreshToken)
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "rule ST-1: refresh after ban: %s", r.Body)
	got := recv.Next(t, 5*time.Second) // rule WH-1: a ban deauthorizes
	require.NotNil(t, got.User, "rule WH-1: ban webhook %s", got.Body)
	require.Equal(t, e.User("alice").ID, got.User.ID, "rule WH-1: ban webhook %s", got.Body)
	require.True(t, got.SignatureOK, "rule WH-1: ban webhook %s", got.Body)
	// The identity now belongs to a new cross-platform-restricted provisional account (rule ST-1).
	restricted := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}).token(t)
	ru, _ := getMe(t, e, restricted.AccessToken)
	require.True(t, ru.IsProvisional, "rule ST-1: identity after the ban belongs to %+v", ru)
	require.NotEqual(t, provUser.ID, ru.ID, "rule ST-1: identity after the ban belongs to %+v", ru)
	require.NotEqual(t, e.User("alice").ID, ru.ID, "rule ST-1: identity after the ban belongs to %+v", ru)
	// Merge attempts get 530017 while the ban lasts (rule ST-1).
	r = mergeCode(t, e, "bob", extauth.SteamSessionTicket, steam)
	require.Equal(t, 400, r.Status, "rule ST-1: merge from a banned source: %d %s", r.Status, r.Body)
	require.Equal(t, wire.CodeMergeSourceBanned, r.apiError(t).Code, "rule ST-1: merge from a banned source: %d %s", r.Status, r.Body)
	e.Clock.Advance(365 * 24 * time.Hour) // a permanent ban does not wear off
	steam = devToken(t, e, extauth.SteamSessionTicket, "steam-42")
	r = mergeCode(t, e, "bob", extauth.SteamSessionTicket, steam)
	require.Equal(t, wire.CodeMergeSourceBanned, r.apiError(t).Code, "rule ST-1: permanent ban wore off: %s", r.Body)
	// The banned user cannot sign in on the consent page.
	_, err := newBrowserSession(t).b.Authorize(t.Context(), authz{clientID: e.App.ID.String(), scope: "identify",
		redirect: loopbackRedirect}.url(e), browserChoice("alice", e.User("alice").Password))
	require.ErrorContains(t, err, "banned", "banned login")
	// Once the ban lifts, merging works again.
	require.NoError(t, e.Server.UnbanUser(uint64(e.User("alice").ID)))
	mergeCode(t, e, "bob", extauth.SteamSessionTicket, steam).token(t)
}

func TestTemporaryBanLiftsByTheClock(t *testing.T) {
	e := servertest.Start(t)
	epic := devToken(t, e, extauth.EpicIDToken, "epic-1")
	mergeCode(t, e, "carol", extauth.EpicIDToken, epic).token(t)
	require.NoError(t, e.Server.BanUser(uint64(e.User("carol").ID), e.Clock.Now().Add(time.Hour)))
	r := mergeCode(t, e, "bob", extauth.EpicIDToken, devToken(t, e, extauth.EpicIDToken, "epic-1"))
	require.Equal(t, wire.CodeMergeSourceBanned, r.apiError(t).Code, "rule ST-1: during a temporary ban: %s", r.Body)
	e.Clock.Advance(2 * time.Hour)
	mergeCode(t, e, "bob", extauth.EpicIDToken, devToken(t, e, extauth.EpicIDToken, "epic-1")).token(t) // rule ST-1: the ban lifted
}

func TestMergeErrors(t *testing.T) {
	e := servertest.Start(t)
	a := devToken(t, e, extauth.SteamSessionTicket, "steam-a")
	mergeCode(t, e, "alice", extauth.SteamSessionTicket, a).token(t)
	// The identity is on a full account now: merging it elsewhere is 530010.
	r := mergeCode(t, e, "bob", extauth.SteamSessionTicket, a)
	require.Equal(t, wire.CodeNotProvisional, r.apiError(t).Code, "merge of a full account's identity: %s", r.Body)
	// Alice already has a Steam identity: another one is an invalid destination (530016).
	b := devToken(t, e, extauth.SteamSessionTicket, "steam-b")
	r = mergeCode(t, e, "alice", extauth.SteamSessionTicket, b)
	require.Equal(t, wire.CodeInvalidMergeDestination, r.apiError(t).Code, "second identity of a type: %s", r.Body)
	// An external token that fails verification is an invalid merge source (530014).
	r = mergeCode(t, e, "bob", extauth.SteamSessionTicket, "garbage")
	require.Equal(t, wire.CodeInvalidMergeSource, r.apiError(t).Code, "invalid source token: %s", r.Body)
	// Merging the same identity into the same account again is fine.
	mergeCode(t, e, "alice", extauth.SteamSessionTicket, a).token(t)
}

func TestUnmergeSendsDeauthorized(t *testing.T) {
	e := servertest.Start(t)
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	require.NoError(t, e.Server.SetWebhookURL(uint64(e.App.ID), recv.URL))
	prov := botToken(t, e, e.App, "player-9", nil).token(t)
	provUser, _ := getMe(t, e, prov.AccessToken)
	linked := mergeCode(t, e, "carol", extauth.BotIssuedAccessToken, prov.AccessToken).token(t)
	me, _ := getMe(t, e, botToken(t, e, e.App, "player-9", nil).token(t).AccessToken)
	require.Equal(t, e.User("carol").ID, me.ID, "bot endpoint after merge: %+v", me)
	unmerge := func(ext string, h http.Header) resp {
		return sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/provisional-accounts/unmerge/bot", wire.BotTokenRequest{ExternalUserID: ext}, h)
	}
	r := unmerge("player-9", nil)
	require.Equal(t, 401, r.Status, "rule AU-8: unmerge without a bot token: %d", r.Status)
	r = unmerge("player-9", bot(e.App.BotToken))
	require.Equal(t, 204, r.Status, "unmerge: %d %s", r.Status, r.Body)
	got := recv.Next(t, 5*time.Second) // rules ST-2, WH-1
	require.NotNil(t, got.User, "rule ST-2: unmerge webhook %s", got.Body)
	require.Equal(t, e.User("carol").ID, got.User.ID, "rule ST-2: unmerge webhook %s", got.Body)
	require.Equal(t, wire.EventApplicationDeauthorized, got.Event.Event.Type, "rule ST-2: unmerge webhook %s", got.Body)
	// rules ST-2, AU-6
	r = refresh(t, e, linked.RefreshToken)
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "rule AU-6: refresh after unmerge: %s", r.Body)
	// The provisional account gets its identity back (rule AU-5).
	back := botToken(t, e, e.App, "player-9", nil).token(t)
	me, _ = getMe(t, e, back.AccessToken)
	require.Equal(t, provUser.ID, me.ID, "after unmerge the identity signs in as %+v, want %+v", me, provUser)
	require.True(t, me.IsProvisional, "after unmerge the identity signs in as %+v, want %+v", me, provUser)
	r = unmerge("player-9", bot(e.App.BotToken))
	require.Equal(t, 400, r.Status, "second unmerge: %d %s", r.Status, r.Body)
	require.Equal(t, wire.CodeInvalidMergeSource, r.apiError(t).Code, "second unmerge: %d %s", r.Status, r.Body)
	// The client-credential form of unmerge.
	steam := devToken(t, e, extauth.SteamSessionTicket, "steam-u")
	mergeCode(t, e, "bob", extauth.SteamSessionTicket, steam).token(t)
	r = sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/provisional-accounts/unmerge",
		wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}, nil)
	require.Equal(t, 204, r.Status, "unmerge with external credentials: %d %s", r.Status, r.Body)
	got = recv.Next(t, 5*time.Second)
	require.NotNil(t, got.User, "rule WH-1: webhook %s", got.Body)
	require.Equal(t, e.User("bob").ID, got.User.ID, "rule WH-1: webhook %s", got.Body)
	fresh := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}).token(t)
	// a new provisional account holds an identity merged directly
	me, _ = getMe(t, e, fresh.AccessToken)
	require.True(t, me.IsProvisional, "unmerged identity without a former provisional account: %+v", me)
}

func TestChildTokens(t *testing.T) {
	e := servertest.Start(t)
	parent := linkedTokens(t, e, "alice", "openid sdk.social_layer")
	child := func(body wire.ChildTokenRequest) resp {
		return sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/child-token", body, nil)
	}
	tr := child(wire.ChildTokenRequest{ParentAccessToken: parent.AccessToken, ChildApplicationID: e.ChildApp.ID}).token(t) // rule AU-4
	require.Empty(t, tr.RefreshToken, "rule AU-4: child token response %+v", tr)
	require.Greater(t, tr.ExpiresIn, int64(0), "rule AU-4: child token response %+v", tr)
	require.LessOrEqual(t, tr.ExpiresIn, int64(604800), "rule AU-4: child token response %+v", tr)
	me, _ := getMe(t, e, tr.AccessToken)
	require.Equal(t, e.User("alice").ID, me.ID, "rule AU-4: child token user %+v", me)
	// The child token is the child application's: revoking it through the parent client does nothing.
	tok, err := token.Find(t.Context(), e.Server.Store(), tr.AccessToken)
	require.NoError(t, err, "child token app: %+v", tok)
	require.Equal(t, uint64(e.ChildApp.ID), tok.AppID, "child token app: %+v", tok)
	for name, c := range map[string]struct {
		body   wire.ChildTokenRequest
		status int
	}{
		"not a child":    {wire.ChildTokenRequest{ParentAccessToken: parent.AccessToken, ChildApplicationID: e.PremiumApp.ID}, 400},
		"unknown child":  {wire.ChildTokenRequest{ParentAccessToken: parent.AccessToken, ChildApplicationID: 77}, 400},
		"bad parent":     {wire.ChildTokenRequest{ParentAccessToken: "nope", ChildApplicationID: e.ChildApp.ID}, 401},
		"wrong secret":   {wire.ChildTokenRequest{ParentAccessToken: parent.AccessToken, ChildApplicationID: e.ChildApp.ID, ParentClientSecret: "x"}, 401},
		"missing parent": {wire.ChildTokenRequest{ChildApplicationID: e.ChildApp.ID}, 400},
		"child of child": {wire.ChildTokenRequest{ParentAccessToken: tr.AccessToken, ChildApplicationID: e.ChildApp.ID}, 400},
		"missing child":  {wire.ChildTokenRequest{ParentAccessToken: parent.AccessToken}, 400},
	} {
		r := child(c.body)
		assert.Equal(t, c.status, r.Status, "rule AU-4: %s: %d %s", name, r.Status, r.Body)
	}
	// With the parent's client secret (server-to-server exchange) it works as well (rule AU-4).
	tr2 := child(wire.ChildTokenRequest{ParentAccessToken: parent.AccessToken, ChildApplicationID: e.ChildApp.ID,
		ParentClientSecret: e.App.ClientSecret}).token(t)
	// Revoking the parent revokes the children (rule AU-4).
	postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {parent.RefreshToken}, "client_id": {e.App.ID.String()}})
	for _, c := range []string{tr.AccessToken, tr2.AccessToken} {
		_, r := getMe(t, e, c)
		require.Equal(t, 401, r.Status, "rule AU-4: child token alive after the parent was revoked: %d", r.Status)
	}
}

func TestProvisionalDisplayName(t *testing.T) {
	e := servertest.Start(t)
	prov := botToken(t, e, e.App, "namer", nil).token(t)
	patch := func(tok string, body any) resp {
		return sendJSON(t, http.MethodPatch, e.APIURL+"/users/@me/provisional-display-name", body, bearer(tok))
	}
	r := patch(prov.AccessToken, map[string]string{"global_name": "  New Name "})
	var u wire.User
	require.Equal(t, 200, r.Status, "rename: %d %s", r.Status, r.Body)
	r.json(t, &u)
	require.NotNil(t, u.GlobalName, "renamed user %+v", u)
	require.Equal(t, "New Name", *u.GlobalName, "renamed user %+v", u)
	for name, c := range map[string]struct {
		body   any
		status int
	}{
		"empty":   {map[string]string{"global_name": "  "}, 400},
		"long":    {map[string]string{"global_name": strings.Repeat("n", 33)}, 400},
		"missing": {map[string]string{}, 400},
		"control": {map[string]string{"global_name": "a\x01b"}, 400},
	} {
		r := patch(prov.AccessToken, c.body)
		assert.Equal(t, c.status, r.Status, "%s: %d %s", name, r.Status, r.Body)
		assert.Equal(t, wire.CodeInvalidFormBody, r.apiError(t).Code, "%s: %d %s", name, r.Status, r.Body)
	}
	full := linkedTokens(t, e, "bob", "identify")
	r = patch(full.AccessToken, map[string]string{"global_name": "Bobby"})
	require.Equal(t, wire.CodeNotProvisional, r.apiError(t).Code, "full account rename: %s", r.Body)
	r = patch("nope", map[string]string{"global_name": "x"})
	require.Equal(t, 401, r.Status, "no token: %d", r.Status)
}
