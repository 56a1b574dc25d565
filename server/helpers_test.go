package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/browser"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// resp is a decoded API answer.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) json(t *testing.T, v any) {
	t.Helper()
	guildtest.Resp(r).JSON(t, v)
}

func (r resp) oauthError(t *testing.T) string {
	t.Helper()
	var e wire.OAuthError
	r.json(t, &e)
	return e.Code
}

func (r resp) apiError(t *testing.T) wire.APIError {
	t.Helper()
	return guildtest.Resp(r).APIError(t)
}

func (r resp) token(t *testing.T) wire.TokenResponse {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "token request: HTTP %d %s", r.Status, r.Body)
	var tr wire.TokenResponse
	r.json(t, &tr)
	return tr
}

// do sends a request (guildtest.Do: no redirect followed, never a 5xx).
func do(t *testing.T, method, u string, body io.Reader, header http.Header) resp {
	t.Helper()
	return resp(guildtest.Do(t, method, u, body, header))
}

func postForm(t *testing.T, u string, form url.Values) resp {
	t.Helper()
	return do(t, http.MethodPost, u, strings.NewReader(form.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

func sendJSON(t *testing.T, method, u string, v any, header http.Header) resp {
	t.Helper()
	return resp(guildtest.SendJSON(t, method, u, v, header))
}

var (
	bearer = guildtest.Bearer
	bot    = guildtest.Bot
)

func getMe(t *testing.T, e *servertest.Env, access string) (wire.User, resp) {
	t.Helper()
	u, r := guildtest.GetMe(t, e, access)
	return u, resp(r)
}

// pkce returns a verifier and its S256 challenge.
func pkce(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 43/len(seed)+1)[:43] + "-._~"
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

const loopbackRedirect = "http://127.0.0.1:53124/authorize/callback"

// authz builds an authorize URL.
type authz struct {
	clientID, scope, state, redirect, challenge, nonce, integration, prompt string
}

func (a authz) url(e *servertest.Env) string {
	q := url.Values{"response_type": {"code"}, "client_id": {a.clientID}, "scope": {a.scope}, "redirect_uri": {a.redirect}}
	for k, v := range map[string]string{"state": a.state, "code_challenge": a.challenge, "nonce": a.nonce,
		"integration_type": a.integration, "prompt": a.prompt} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if a.challenge != "" {
		q.Set("code_challenge_method", "S256")
	}
	return e.URL + "/oauth2/authorize?" + q.Encode()
}

// params returns the query of a redirect location.
func params(t *testing.T, location string) url.Values {
	t.Helper()
	u, err := url.Parse(location)
	require.NoError(t, err, "location %q", location)
	return u.Query()
}

// linkedTokens runs the whole authorization code flow with PKCE for user and returns the tokens.
func linkedTokens(t *testing.T, e *servertest.Env, username, scope string) wire.TokenResponse {
	t.Helper()
	verifier, challenge := pkce("v")
	u := e.User(username)
	loc := e.Approve(t, authz{clientID: e.App.ID.String(), scope: scope, state: "s", redirect: loopbackRedirect,
		challenge: challenge}.url(e), u.Username, u.Password)
	return postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"},
		"code": {params(t, loc).Get("code")}, "client_id": {e.App.ID.String()}, "redirect_uri": {loopbackRedirect},
		"code_verifier": {verifier}}).token(t)
}

func refresh(t *testing.T, e *servertest.Env, refreshToken string) resp {
	t.Helper()
	return postForm(t, e.APIURL+"/oauth2/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {refreshToken}, "client_id": {e.App.ID.String()}})
}

type serverConfig = server.Config

func browserChoice(user, pw string) browser.Choice {
	return browser.Choice{Username: user, Password: pw}
}

// botGW is a gateway connection (guildtest.Gateway) under the names the root's OAuth tests use.
type botGW struct {
	*guildtest.Gateway
	t  testing.TB
	ws *websocket.Conn
}

// dialBot is guildtest.Dial.
func dialBot(t *testing.T, e *servertest.Env, query string) *botGW {
	t.Helper()
	g := guildtest.Dial(t, e, query)
	return &botGW{Gateway: g, t: g.T, ws: g.WS}
}

// identify is guildtest.Gateway.Identify.
func (g *botGW) identify(token string, intents uint64) map[string]json.RawMessage {
	g.t.Helper()
	return g.Identify(token, intents)
}

// send is guildtest.Gateway.Send.
func (g *botGW) send(op int, d any) { g.t.Helper(); g.Send(op, d) }

// expect is guildtest.Gateway.Expect.
func (g *botGW) expect(op int, event string, out ...any) gwire.Payload {
	g.t.Helper()
	return g.Expect(op, event, out...)
}

// sync is guildtest.Gateway.Sync.
func (g *botGW) sync() { g.t.Helper(); g.Sync() }
