package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

func TestConsentThroughTheCLI(t *testing.T) {
	e := servertest.Start(t)
	got := make(chan url.Values, 2)
	sdk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/authorize/callback" {
			got <- r.URL.Query()
		}
		w.Write([]byte("You can close this window."))
	}))
	defer sdk.Close()
	redirect := sdk.URL + "/authorize/callback"
	authorize := e.URL + "/oauth2/authorize?" + url.Values{"response_type": {"code"}, "client_id": {e.App.ID.String()},
		"scope": {"openid sdk.social_layer"}, "state": {"cli-state"}, "redirect_uri": {redirect}}.Encode()
	alice := e.User("alice")
	var out, errOut bytes.Buffer
	code := run([]string{"-user", "alice", "-password", alice.Password, authorize}, &out, &errOut)
	require.Equal(t, 0, code, "exit %d: %s %s", code, out.String(), errOut.String())
	q := <-got
	require.NotEmpty(t, q.Get("code"), "the loopback listener got %v", q)
	require.Equal(t, "cli-state", q.Get("state"), "the loopback listener got %v", q)
	require.NotContains(t, out.String(), q.Get("code"), "output:\n%s", out.String())
	require.Contains(t, out.String(), "callback: HTTP 200", "output:\n%s", out.String())
	out.Reset()
	code = run([]string{"-deny", authorize}, &out, &errOut)
	require.Equal(t, 0, code, "deny exit %d: %s", code, errOut.String())
	require.Equal(t, "access_denied", (<-got).Get("error"), "what the deny sent to the listener")
	// A wrong password fails with the page's message.
	errOut.Reset()
	code = run([]string{"-user", "alice", "-password", "nope", authorize}, &out, &errOut)
	require.Equal(t, 1, code, "wrong password: exit %d %s", code, errOut.String())
	require.Contains(t, errOut.String(), "Wrong username or password", "wrong password: exit %d %s", code, errOut.String())
	code = run([]string{"-user", "alice"}, &out, &errOut)
	require.Equal(t, 2, code, "usage error exit %d", code)
}

func TestDeviceCodeThroughTheCLI(t *testing.T) {
	e := servertest.Start(t)
	res, err := http.PostForm(e.APIURL+"/oauth2/device/authorize", url.Values{"client_id": {e.App.ID.String()}, "scope": {"identify"}})
	require.NoError(t, err)
	var d struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	require.NoError(t, jsonDecode(res, &d))
	bob := e.User("bob")
	var out, errOut bytes.Buffer
	code := run([]string{"-user", "bob", "-password", bob.Password, "-device-code", d.UserCode, e.URL}, &out, &errOut)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut.String())
	require.Contains(t, out.String(), "Device connected", "output: %s", out.String())
	res, err = http.PostForm(e.APIURL+"/oauth2/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
		"device_code": {d.DeviceCode}, "client_id": {e.App.ID.String()}})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode, "token after the CLI approved: %d", res.StatusCode)
}

func jsonDecode(res *http.Response, v any) error {
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}
