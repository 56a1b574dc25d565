package server_test

import (
	"net/http"
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/extauth"
	"sdkpp/server/servertest"
	"sdkpp/wire"
)

func TestDevAdminEndpoints(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 2, 22, 23, 59, 0, 0, time.UTC)))
	admin := http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}}
	for name, h := range map[string]http.Header{"none": nil, "wrong": {"Authorization": {"Admin nope"}}, "bot": bot(e.App.BotToken)} {
		if r := do(t, http.MethodGet, e.APIURL+"/dev/clock", nil, h); r.Status != 401 {
			t.Errorf("%s admin token: %d", name, r.Status)
		}
	}
	// Clock: read and advance.
	var now struct{ Now time.Time }
	sendJSON(t, http.MethodPost, e.APIURL+"/dev/clock/advance", map[string]any{"seconds": 120}, admin).json(t, &now)
	if !now.Now.Equal(time.Date(2026, 2, 23, 0, 1, 0, 0, time.UTC)) || !e.Clock.Now().Equal(now.Now) {
		t.Fatalf("clock after advance: %v", now.Now)
	}
	// Ban over HTTP (rule ST-1): tokens die at once; unban restores login.
	tr := linkedTokens(t, e, "bob", "identify")
	bob := e.User("bob")
	if r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/users/"+bob.ID.String()+"/ban", map[string]any{}, admin); r.Status != 204 {
		t.Fatalf("ban: %d %s", r.Status, r.Body)
	}
	if _, r := getMe(t, e, tr.AccessToken); r.Status != 401 { // rule ST-1
		t.Fatal("rule ST-1: token alive after an HTTP ban")
	}
	if r := do(t, http.MethodDelete, e.APIURL+"/dev/users/"+bob.ID.String()+"/ban", nil, admin); r.Status != 204 {
		t.Fatalf("unban: %d", r.Status)
	}
	linkedTokens(t, e, "bob", "identify")
	if r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/users/1/ban", map[string]any{}, admin); r.Status != 404 {
		t.Fatalf("ban of an unknown user: %d", r.Status)
	}
	// Premium approval and webhook URL.
	if r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/premium-approved", map[string]any{"approved": true}, admin); r.Status != 204 {
		t.Fatalf("premium-approved: %d", r.Status)
	}
	if r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/webhook", map[string]any{"url": "http://127.0.0.1:9/x"}, admin); r.Status != 204 {
		t.Fatalf("webhook: %d", r.Status)
	}
	c := e.Server.DevCredentials()
	if !c.App("sdkpp Demo").PremiumApproved || c.App("sdkpp Demo").WebhookURL != "http://127.0.0.1:9/x" {
		t.Fatalf("credentials not updated: %+v", c.App("sdkpp Demo"))
	}
	// Dev external tokens work with the dev verifiers.
	var dt struct{ Token string }
	sendJSON(t, http.MethodPost, e.APIURL+"/dev/external-token", map[string]any{"application_id": e.App.ID,
		"external_auth_type": extauth.UnityIDToken, "external_user_id": "unity-1"}, admin).json(t, &dt)
	external(t, e, wire.ExternalTokenRequest{ClientID: e.App.ID, ExternalAuthType: extauth.UnityIDToken, ExternalAuthToken: dt.Token}).token(t)
}

func TestNonDevServerHasNoSeedNorAdmin(t *testing.T) {
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.Dev = false }))
	if len(e.Creds.Applications) != 0 {
		t.Fatal("non-dev server seeded applications")
	}
	if r := do(t, http.MethodGet, e.APIURL+"/dev/clock", nil, nil); r.Status != 404 {
		t.Fatalf("dev endpoint on a non-dev server: %d", r.Status)
	}
	// Without dev mode the provider types have no verifier.
	app, err := e.Server.CreateApplication(server.AppSpec{Name: "Prod Game", PublicClient: true})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := extauth.DevToken(uint64(app.ID), app.ClientSecret, extauth.SteamSessionTicket, "s", e.Clock.Now(), time.Hour)
	r := external(t, e, wire.ExternalTokenRequest{ClientID: app.ID, ExternalAuthType: extauth.SteamSessionTicket, ExternalAuthToken: tok})
	if r.Status != 400 || r.apiError(t).Code != wire.CodeInvalidFormBody {
		t.Fatalf("dev verifier active outside dev mode: %d %s", r.Status, r.Body)
	}
}
