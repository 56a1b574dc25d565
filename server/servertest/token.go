package servertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"sdkpp/wire"
)

// tokenRedirect is the loopback redirect URI Token authorizes with.
const tokenRedirect = "http://127.0.0.1:53124/authorize/callback"

// Token links the dev user username to the main application through the consent page (with
// PKCE) and returns the token the code is exchanged for, with the given scopes.
func (e *Env) Token(t testing.TB, username, scope string) wire.TokenResponse {
	t.Helper()
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {e.App.ID.String()}, "scope": {scope},
		"redirect_uri": {tokenRedirect}, "state": {"s"}, "code_challenge_method": {"S256"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}}
	u := e.User(username)
	loc, err := url.Parse(e.Approve(t, e.URL+"/oauth2/authorize?"+q.Encode(), u.Username, u.Password))
	if err != nil {
		t.Fatalf("servertest: consent redirect: %v", err)
	}
	res, err := http.PostForm(e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "client_id": {e.App.ID.String()}, "redirect_uri": {tokenRedirect},
		"code_verifier": {verifier}})
	if err != nil {
		t.Fatalf("servertest: token request: %v", err)
	}
	return tokenResponse(t, res, "token request")
}

// tokenResponse reads a successful token response from res, failing t (what names the request)
// otherwise.
func tokenResponse(t testing.TB, res *http.Response, what string) wire.TokenResponse {
	t.Helper()
	defer res.Body.Close()
	var tr wire.TokenResponse
	if err := json.NewDecoder(res.Body).Decode(&tr); err != nil || res.StatusCode != http.StatusOK || tr.AccessToken == "" {
		t.Fatalf("servertest: %s: HTTP %d (%v)", what, res.StatusCode, err)
	}
	return tr
}

// ProvisionalToken returns a provisional player's access token for externalID, issued from the
// bot endpoint as a game's backend does; globalName, when not empty, is the player's
// preferred_global_name.
func (e *Env) ProvisionalToken(t testing.TB, externalID, globalName string) string {
	t.Helper()
	in := map[string]string{"external_user_id": externalID}
	if globalName != "" {
		in["preferred_global_name"] = globalName
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("servertest: provisional token request: %v", err)
	}
	req, err := http.NewRequest(http.MethodPost, e.APIURL+"/partner-sdk/token/bot", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("servertest: provisional token request: %v", err)
	}
	req.Header.Set("Authorization", "Bot "+e.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("servertest: provisional token request: %v", err)
	}
	return tokenResponse(t, res, "provisional token request").AccessToken
}
