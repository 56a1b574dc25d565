package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/extauth"
	"sdkpp/server/servertest"
	"sdkpp/wire"
)

func TestDevAdminEndpoints(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 2, 22, 23, 59, 0, 0, time.UTC)))
	admin := http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}}
	for name, h := range map[string]http.Header{"none": nil, "wrong": {"Authorization": {"Admin nope"}}, "bot": bot(e.App.BotToken)} {
		r := do(t, http.MethodGet, e.APIURL+"/dev/clock", nil, h)
		assert.Equal(t, 401, r.Status, "%s admin token: %d", name, r.Status)
	}
	// Clock: read and advance.
	var now struct{ Now time.Time }
	sendJSON(t, http.MethodPost, e.APIURL+"/dev/clock/advance", map[string]any{"seconds": 120}, admin).json(t, &now)
	require.True(t, now.Now.Equal(time.Date(2026, 2, 23, 0, 1, 0, 0, time.UTC)), "clock after advance: %v", now.Now)
	require.True(t, e.Clock.Now().Equal(now.Now), "clock after advance: %v", now.Now)
	// Ban over HTTP (rule ST-1): tokens die at once; unban restores login.
	tr := linkedTokens(t, e, "bob", "identify")
	bob := e.User("bob")
	r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/users/"+bob.ID.String()+"/ban", map[string]any{}, admin)
	require.Equal(t, 204, r.Status, "ban: %d %s", r.Status, r.Body)
	_, r = getMe(t, e, tr.AccessToken)
	require.Equal(t, 401, r.Status, "rule ST-1: token alive after an HTTP ban")
	r = do(t, http.MethodDelete, e.APIURL+"/dev/users/"+bob.ID.String()+"/ban", nil, admin)
	require.Equal(t, 204, r.Status, "unban: %d", r.Status)
	linkedTokens(t, e, "bob", "identify")
	r = sendJSON(t, http.MethodPut, e.APIURL+"/dev/users/1/ban", map[string]any{}, admin)
	require.Equal(t, 404, r.Status, "ban of an unknown user: %d", r.Status)
	// Premium approval and webhook URL.
	r = sendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/premium-approved", map[string]any{"approved": true}, admin)
	require.Equal(t, 204, r.Status, "premium-approved: %d", r.Status)
	r = sendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/webhook", map[string]any{"url": "http://127.0.0.1:9/x"}, admin)
	require.Equal(t, 204, r.Status, "webhook: %d", r.Status)
	c := e.Server.DevCredentials()
	require.True(t, c.App("sdkpp Demo").PremiumApproved, "credentials not updated: %+v", c.App("sdkpp Demo"))
	require.Equal(t, "http://127.0.0.1:9/x", c.App("sdkpp Demo").WebhookURL, "credentials not updated: %+v", c.App("sdkpp Demo"))
	// Dev external tokens work with the dev verifiers.
	var dt struct{ Token string }
	sendJSON(t, http.MethodPost, e.APIURL+"/dev/external-token", map[string]any{"application_id": e.App.ID,
		"external_auth_type": extauth.UnityIDToken, "external_user_id": "unity-1"}, admin).json(t, &dt)
	external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.UnityIDToken, ExternalAuthToken: dt.Token}).token(t)
}

func TestNonDevServerHasNoSeedNorAdmin(t *testing.T) {
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.Dev = false }))
	require.Empty(t, e.Creds.Applications, "non-dev server seeded applications")
	r := do(t, http.MethodGet, e.APIURL+"/dev/clock", nil, nil)
	require.Equal(t, 404, r.Status, "dev endpoint on a non-dev server: %d", r.Status)
	// Without dev mode the provider types have no verifier.
	app, err := e.Server.CreateApplication(server.AppSpec{Name: "Prod Game", PublicClient: true})
	require.NoError(t, err)
	tok, _ := extauth.DevToken(uint64(app.ID), app.ClientSecret, extauth.SteamSessionTicket, "s", e.Clock.Now(), time.Hour)
	r = external(t, e, wire.ExternalTokenRequest{ClientID: app.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: tok})
	require.Equal(t, 400, r.Status, "dev verifier active outside dev mode: %d %s", r.Status, r.Body)
	require.Equal(t, wire.CodeInvalidFormBody, r.apiError(t).Code, "dev verifier active outside dev mode: %d %s", r.Status, r.Body)
}
