package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"sdkpp/server/servertest"
	"sdkpp/wire"
)

func startDevice(t *testing.T, e *servertest.Env, scope string) wire.DeviceAuthorization {
	t.Helper()
	r := postForm(t, e.APIURL+"/oauth2/device/authorize", url.Values{"client_id": {e.App.ID.String()}, "scope": {scope}})
	if r.Status != 200 {
		t.Fatalf("device authorize: %d %s", r.Status, r.Body)
	}
	var d wire.DeviceAuthorization
	r.json(t, &d)
	return d
}

func pollDevice(t *testing.T, e *servertest.Env, deviceCode string) resp {
	t.Helper()
	return postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
		"device_code": {deviceCode}, "client_id": {e.App.ID.String()}})
}

func TestDeviceFlow(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)))
	d := startDevice(t, e, "openid sdk.social_layer")
	if d.ExpiresIn != 300 || d.Interval != 5 || d.VerificationURI != e.URL+"/activate" ||
		d.VerificationURIComplete != e.URL+"/activate?user_code="+url.QueryEscape(d.UserCode) || len(d.UserCode) != 9 {
		t.Fatalf("device authorization %+v", d)
	}
	if r := pollDevice(t, e, d.DeviceCode); r.oauthError(t) != wire.OAuthAuthorizationPending {
		t.Fatalf("first poll: %s", r.Body)
	}
	if r := pollDevice(t, e, d.DeviceCode); r.oauthError(t) != wire.OAuthSlowDown {
		t.Fatalf("fast poll: %s", r.Body)
	}
	e.Clock.Advance(5 * time.Second) // the interval grew to 10 s after slow_down
	if r := pollDevice(t, e, d.DeviceCode); r.oauthError(t) != wire.OAuthSlowDown {
		t.Fatalf("poll after 5 s with a 10 s interval: %s", r.Body)
	}
	e.Clock.Advance(16 * time.Second)
	if r := pollDevice(t, e, d.DeviceCode); r.oauthError(t) != wire.OAuthAuthorizationPending {
		t.Fatalf("poll after the interval: %s", r.Body)
	}
	carol := e.User("carol")
	e.ApproveDevice(t, strings.ToLower(d.UserCode), carol.Username, carol.Password) // codes are case-insensitive
	e.Clock.Advance(20 * time.Second)
	tr := pollDevice(t, e, d.DeviceCode).token(t)
	if tr.RefreshToken == "" || tr.IDToken == "" || !strings.Contains(tr.Scope, "lobbies.write") {
		t.Fatalf("device tokens %+v", tr)
	}
	if me, _ := getMe(t, e, tr.AccessToken); me.ID != carol.ID {
		t.Fatalf("device token user %+v", me)
	}
	e.Clock.Advance(20 * time.Second)
	if r := pollDevice(t, e, d.DeviceCode); r.oauthError(t) != wire.OAuthInvalidGrant {
		t.Fatalf("second redemption: %s", r.Body)
	}

	denied := startDevice(t, e, "identify")
	e.DenyDevice(t, denied.UserCode)
	if r := pollDevice(t, e, denied.DeviceCode); r.oauthError(t) != wire.OAuthAccessDenied {
		t.Fatalf("denied: %s", r.Body)
	}

	expired := startDevice(t, e, "identify")
	e.Clock.Advance(301 * time.Second)
	if r := pollDevice(t, e, expired.DeviceCode); r.oauthError(t) != wire.OAuthExpiredToken {
		t.Fatalf("expired: %s", r.Body)
	}
	if r := do(t, http.MethodGet, e.URL+"/activate?user_code="+expired.UserCode, nil, nil); r.Status != 400 {
		t.Fatalf("activate page for an expired code: %d", r.Status)
	}
	if r := pollDevice(t, e, "unknown"); r.oauthError(t) != wire.OAuthInvalidGrant {
		t.Fatalf("unknown device code: %s", r.Body)
	}
	if r := do(t, http.MethodGet, e.URL+"/activate", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `name="user_code"`) {
		t.Fatalf("activate page: %d", r.Status)
	}
}
