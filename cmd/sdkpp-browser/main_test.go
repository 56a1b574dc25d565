package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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
	if code := run([]string{"-user", "alice", "-password", alice.Password, authorize}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	q := <-got
	if q.Get("code") == "" || q.Get("state") != "cli-state" {
		t.Fatalf("the loopback listener got %v", q)
	}
	if strings.Contains(out.String(), q.Get("code")) || !strings.Contains(out.String(), "callback: HTTP 200") {
		t.Fatalf("output:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"-deny", authorize}, &out, &errOut); code != 0 {
		t.Fatalf("deny exit %d: %s", code, errOut.String())
	}
	if q := <-got; q.Get("error") != "access_denied" {
		t.Fatalf("deny reached the listener as %v", q)
	}
	// A wrong password fails with the page's message.
	errOut.Reset()
	if code := run([]string{"-user", "alice", "-password", "nope", authorize}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "Wrong username or password") {
		t.Fatalf("wrong password: exit %d %s", code, errOut.String())
	}
	if code := run([]string{"-user", "alice"}, &out, &errOut); code != 2 {
		t.Fatalf("usage error exit %d", code)
	}
}

func TestDeviceCodeThroughTheCLI(t *testing.T) {
	e := servertest.Start(t)
	res, err := http.PostForm(e.APIURL+"/oauth2/device/authorize", url.Values{"client_id": {e.App.ID.String()}, "scope": {"identify"}})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	if err := jsonDecode(res, &d); err != nil {
		t.Fatal(err)
	}
	bob := e.User("bob")
	var out, errOut bytes.Buffer
	if code := run([]string{"-user", "bob", "-password", bob.Password, "-device-code", d.UserCode, e.URL}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Device connected") {
		t.Fatalf("output: %s", out.String())
	}
	res, err = http.PostForm(e.APIURL+"/oauth2/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
		"device_code": {d.DeviceCode}, "client_id": {e.App.ID.String()}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("token after the CLI approved: %d", res.StatusCode)
	}
}

func jsonDecode(res *http.Response, v any) error {
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}
