package server_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
)

// offline is the service's client for the outside world while fuzzing: a fuzzed request may
// configure an OIDC issuer, and the fuzzer must not reach out to whatever host it names.
var offline = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network while fuzzing")
})}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startFuzzService starts the service once per fuzz process, without rate limits (they would
// answer 429 before a handler could fail) and without outside network.
func startFuzzService(f *testing.F) *servertest.Env {
	return servertest.Start(f, servertest.WithConfig(func(c *server.Config) {
		c.RateLimits.Disabled = true
		c.OIDCHTTPClient = offline
	}))
}

// FuzzAPI sends a method, a path, header lines and a body to the live service, with a player's
// token, the application's bot token, a forged token or none, and fails on any 5xx and on any
// connection the service breaks. In the path, {me}, {app} and {other} stand for the player's,
// the application's and another user's ids. The seeds are every API route with its parameters
// filled in with those ids and with ids the store cannot hold.
func FuzzAPI(f *testing.F) {
	e := startFuzzService(f)
	player := "Bearer " + e.Token(f, "alice", "identify openid sdk.social_layer").AccessToken
	bot := "Bot " + e.App.BotToken
	ids := strings.NewReplacer("{me}", e.User("alice").ID.String(), "{app}", e.App.ID.String(),
		"{other}", e.User("bob").ID.String())

	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, route := range e.Server.APIRoutes() {
		method, pattern, ok := strings.Cut(route, " ")
		if !ok {
			method, pattern = http.MethodGet, route
		}
		pattern = server.APIVersionPath + strings.TrimSuffix(pattern, "{$}")
		for _, id := range []string{"{me}", "{app}", "9223372036854775808"} {
			body := `{"id":"` + id + `","user_id":"{other}","recipient_id":"{other}","content":"hi","secret":"s","metadata":{"k":"v"}}`
			f.Add(method, param.ReplaceAllString(pattern, id), "Content-Type: application/json", []byte(body), uint8(1))
		}
	}
	f.Add("GET", "/oauth2/authorize?client_id={app}&response_type=code&scope=openid", "", []byte(nil), uint8(0))
	f.Add("POST", "/api/v10/oauth2/token", "Content-Type: application/x-www-form-urlencoded", []byte("grant_type=refresh_token&refresh_token=x&client_id={app}"), uint8(0))

	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	f.Fuzz(func(t *testing.T, method, path, header string, body []byte, auth uint8) {
		path = ids.Replace(path)
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, e.URL+path, bytes.NewReader([]byte(ids.Replace(string(body)))))
		if err != nil || req.URL.Host != strings.TrimPrefix(e.URL, "http://") {
			return // not a request to the service that an HTTP client can send
		}
		for line := range strings.SplitSeq(header, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && headerName(k) && headerValue(v) {
				req.Header.Add(k, strings.TrimSpace(v))
			}
		}
		switch auth % 4 {
		case 1:
			req.Header.Set("Authorization", player)
		case 2:
			req.Header.Set("Authorization", bot)
		case 3:
			req.Header.Set("Authorization", "Bearer "+ids.Replace(string(body)))
			if !headerValue(req.Header.Get("Authorization")) {
				req.Header.Del("Authorization")
			}
		}
		res, err := client.Do(req)
		require.NoError(t, err, "%s %s: the service broke the connection", method, path)
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Less(t, res.StatusCode, 500, "%s %s %q: never a 5xx: %s", method, path, body, answer)
	})
}

// headerName reports whether k is a token, as HTTP requires of a header's name.
func headerName(k string) bool {
	if k == "" || strings.EqualFold(k, "Host") || strings.EqualFold(k, "Content-Length") ||
		strings.EqualFold(k, "Transfer-Encoding") || strings.EqualFold(k, "Connection") {
		return false // the client writes these itself
	}
	for _, c := range []byte(k) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// headerValue reports whether v can be sent as a header's value: no control bytes but tab.
func headerValue(v string) bool {
	for _, c := range []byte(v) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
