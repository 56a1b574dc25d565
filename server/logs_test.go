package server_test

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/extauth"
	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// TestLogsNeverContainSecrets runs every flow with Debug logging and greps the captured log for
// every token, code, verifier, client secret, bot token, password and user code the flows used.
func TestLogsNeverContainSecrets(t *testing.T) {
	var logs servertest.LogBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	iss := servertest.NewOIDCIssuer(t)
	e := servertest.Start(t, servertest.WithLogger(logger), servertest.WithOIDCTestIssuer(iss.Client))
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	require.NoError(t, e.Server.SetWebhookURL(uint64(e.App.ID), recv.URL))
	var secrets []string
	keep := func(s ...string) {
		for _, x := range s {
			if x != "" {
				secrets = append(secrets, x)
			}
		}
	}
	keep(e.App.ClientSecret, e.App.BotToken, e.ChildApp.ClientSecret, e.PremiumApp.BotToken, e.Creds.AdminToken)
	for _, u := range e.Creds.Users {
		keep(u.Password)
	}

	// Authorization code flow, with a failed login first.
	alice := e.User("alice")
	verifier, challenge := pkce("secretverifier")
	keep(verifier)
	q := authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "state-value", redirect: loopbackRedirect,
		challenge: challenge, nonce: "nonce-value"}
	_, err := newBrowserSession(t).b.Authorize(t.Context(), q.url(e), browserChoice("alice", "wrong-password-xyz"))
	require.Error(t, err, "wrong password accepted")
	keep("wrong-password-xyz")
	loc := e.Approve(t, q.url(e), alice.Username, alice.Password)
	code := params(t, loc).Get("code")
	keep(code)
	tr := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"client_id": {e.App.ID.String()}, "client_secret": {e.App.ClientSecret}, "redirect_uri": {loopbackRedirect},
		"code_verifier": {verifier}}).token(t)
	keep(tr.AccessToken, tr.RefreshToken, tr.IDToken)
	postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {e.App.ID.String()},
		"client_secret": {"wrong-secret-abc"}})
	keep("wrong-secret-abc")
	// A signed client_credentials token, used, refused once altered, and revoked; nor may the
	// key it is signed with appear, in any spelling.
	cc := postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {e.App.ID.String()},
		"client_secret": {e.App.ClientSecret}}).token(t)
	keep(cc.AccessToken)
	getMe(t, e, cc.AccessToken)
	getMe(t, e, cc.AccessToken[:len(cc.AccessToken)-1]+"A")
	key := e.Server.Store().TokenKey()
	keep(hex.EncodeToString(key), base64.StdEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key), fmt.Sprint(key))
	getMe(t, e, tr.AccessToken)
	child := sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/child-token",
		wire.ChildTokenRequest{ParentAccessToken: tr.AccessToken, ChildApplicationID: e.ChildApp.ID}, nil).token(t)
	keep(child.AccessToken)
	r2 := refresh(t, e, tr.RefreshToken).token(t)
	keep(r2.AccessToken, r2.RefreshToken, r2.IDToken)
	refresh(t, e, tr.RefreshToken) // a used refresh token: its grant is revoked, and logged
	postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect}, "code_verifier": {verifier}}) // reused: its grant is revoked again

	// Device flow.
	d := startDevice(t, e, "identify")
	keep(d.DeviceCode, d.UserCode, strings.ReplaceAll(d.UserCode, "-", ""))
	pollDevice(t, e, d.DeviceCode)
	e.ApproveDevice(t, d.UserCode, "bob", e.User("bob").Password)
	e.Clock.Advance(10 * time.Second)
	dt := pollDevice(t, e, d.DeviceCode).token(t)
	keep(dt.AccessToken, dt.RefreshToken)

	// Provisional accounts, OIDC, merge, unmerge, ban.
	bt := botToken(t, e, e.App, "log-player", nil).token(t)
	keep(bt.AccessToken, bt.RefreshToken, bt.IDToken)
	botToken(t, e, e.App, "log-player", nil) // again
	sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/token/bot", wire.BotTokenRequest{ExternalUserID: "x"}, bot("wrong-bot-token-123"))
	keep("wrong-bot-token-123")
	steam := devToken(t, e, extauth.SteamSessionTicket, "steam-log")
	keep(steam)
	external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam})
	external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam + "tampered"})
	sendJSON(t, http.MethodPut, e.APIURL+"/applications/"+e.App.ID.String()+"/oidc-config",
		wire.OIDCConfigRequest{Issuer: iss.URL, ClientID: iss.ClientID}, bot(e.App.BotToken))
	idt := iss.Token(t, e.Clock.Now(), nil)
	keep(idt)
	ot := external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.OIDC, ExternalAuthToken: idt}).token(t)
	keep(ot.AccessToken, ot.RefreshToken)
	refresh(t, e, ot.RefreshToken) // deprecated refresh, logged as a warning
	mt := mergeCode(t, e, "carol", extauth.SteamSessionTicket, steam).token(t)
	keep(mt.AccessToken, mt.RefreshToken)
	sendJSON(t, http.MethodPost, e.APIURL+"/partner-sdk/provisional-accounts/unmerge",
		wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: steam}, nil)
	postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {r2.AccessToken}, "client_id": {e.App.ID.String()}})
	postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {cc.AccessToken}, "client_id": {e.App.ID.String()},
		"client_secret": {e.App.ClientSecret}})
	getMe(t, e, cc.AccessToken) // refused: revoked
	sendJSON(t, http.MethodPut, e.APIURL+"/dev/users/"+e.User("bob").ID.String()+"/ban", map[string]any{},
		http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}})
	dev := sendJSON(t, http.MethodPost, e.APIURL+"/dev/external-token", map[string]any{"application_id": e.App.ID,
		"external_auth_type": extauth.AppleIDToken, "external_user_id": "apple-1"}, http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}})
	var devTok struct{ Token string }
	dev.json(t, &devTok)
	keep(devTok.Token)
	recv.Next(t, 5*time.Second)

	out := logs.String()
	require.Contains(t, out, `"level":"DEBUG"`, "the flows logged nothing at Debug level:\n%s", out)
	require.Contains(t, out, "token issued", "the flows logged nothing at Debug level:\n%s", out)
	for _, s := range secrets {
		assert.NotContains(t, out, s, "a secret (%d chars, starting %q) appears in the log", len(s), s[:min(4, len(s))])
	}
	for _, frag := range []string{"code=", "state-value", "nonce-value", "password", "Bearer ", "Bot "} {
		assert.NotContains(t, out, frag, "the log contains %q", frag)
	}
}
