package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
)

func startDevice(t *testing.T, e *servertest.Env, scope string) wire.DeviceAuthorization {
	t.Helper()
	r := postForm(t, e.APIURL+"/oauth2/device/authorize", url.Values{"client_id": {e.App.ID.String()}, "scope": {scope}})
	require.Equal(t, 200, r.Status, "device authorize: %d %s", r.Status, r.Body)
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
	require.Equal(t, int64(300), d.ExpiresIn, "device authorization %+v", d)
	require.Equal(t, int64(5), d.Interval, "device authorization %+v", d)
	require.Equal(t, e.URL+"/activate", d.VerificationURI, "device authorization %+v", d)
	require.Equal(t, e.URL+"/activate?user_code="+url.QueryEscape(d.UserCode), d.VerificationURIComplete, "device authorization %+v", d)
	require.Len(t, d.UserCode, 9, "device authorization %+v", d)
	r := pollDevice(t, e, d.DeviceCode)
	require.Equal(t, wire.OAuthAuthorizationPending, r.oauthError(t), "first poll: %s", r.Body)
	r = pollDevice(t, e, d.DeviceCode)
	require.Equal(t, wire.OAuthSlowDown, r.oauthError(t), "fast poll: %s", r.Body)
	e.Clock.Advance(5 * time.Second) // the interval grew to 10 s after slow_down
	r = pollDevice(t, e, d.DeviceCode)
	require.Equal(t, wire.OAuthSlowDown, r.oauthError(t), "poll after 5 s with a 10 s interval: %s", r.Body)
	e.Clock.Advance(16 * time.Second)
	r = pollDevice(t, e, d.DeviceCode)
	require.Equal(t, wire.OAuthAuthorizationPending, r.oauthError(t), "poll after the interval: %s", r.Body)
	carol := e.User("carol")
	e.ApproveDevice(t, strings.ToLower(d.UserCode), carol.Username, carol.Password) // codes are case-insensitive
	e.Clock.Advance(20 * time.Second)
	tr := pollDevice(t, e, d.DeviceCode).token(t)
	require.NotEmpty(t, tr.RefreshToken, "device tokens %+v", tr)
	require.NotEmpty(t, tr.IDToken, "device tokens %+v", tr)
	require.Contains(t, tr.Scope, "lobbies.write", "device tokens %+v", tr)
	me, _ := getMe(t, e, tr.AccessToken)
	require.Equal(t, carol.ID, me.ID, "device token user %+v", me)
	e.Clock.Advance(20 * time.Second)
	r = pollDevice(t, e, d.DeviceCode)
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "second redemption: %s", r.Body)

	denied := startDevice(t, e, "identify")
	e.DenyDevice(t, denied.UserCode)
	r = pollDevice(t, e, denied.DeviceCode)
	require.Equal(t, wire.OAuthAccessDenied, r.oauthError(t), "denied: %s", r.Body)

	expired := startDevice(t, e, "identify")
	e.Clock.Advance(301 * time.Second)
	r = pollDevice(t, e, expired.DeviceCode)
	require.Equal(t, wire.OAuthExpiredToken, r.oauthError(t), "expired: %s", r.Body)
	r = do(t, http.MethodGet, e.URL+"/activate?user_code="+expired.UserCode, nil, nil)
	require.Equal(t, 400, r.Status, "activate page for an expired code: %d", r.Status)
	r = pollDevice(t, e, "unknown")
	require.Equal(t, wire.OAuthInvalidGrant, r.oauthError(t), "unknown device code: %s", r.Body)
	r = do(t, http.MethodGet, e.URL+"/activate", nil, nil)
	require.Equal(t, 200, r.Status, "activate page: %d", r.Status)
	require.Contains(t, string(r.Body), `name="user_code"`, "activate page: %d", r.Status)
}
