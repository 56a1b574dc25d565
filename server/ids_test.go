package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
)

// Issue 12, class 1: an id the store cannot hold (2^63 and above) is refused where it is parsed,
// in a path, a query or a JSON body, with a 4xx and the platform's body: never a 5xx. Every API
// route is tried, with a player's token and with the application's bot token.
func TestOutOfRangeIDsNeverGive5xx(t *testing.T) {
	// The limiter would answer 429 before a handler could fail: it is off here.
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.RateLimits.Disabled = true }))
	player := "Bearer " + linkedTokens(t, e, "alice", "identify openid sdk.social_layer").AccessToken
	bot := "Bot " + e.App.BotToken
	routes := e.Server.APIRoutes()
	require.Greater(t, len(routes), 40, "the API has more routes than that")
	param := regexp.MustCompile(`\{[^}]+\}`)
	huge := []string{"9223372036854775808", "18446744073709551615"}
	for _, id := range huge {
		body := `{"id":"` + id + `","user_id":"` + id + `","channel_id":"` + id + `","lobby_id":"` + id +
			`","recipient_id":"` + id + `","application_id":"` + id + `","child_application_id":"` + id +
			`","members":[{"id":"` + id + `"}],"secret":"s","content":"hi","type":1,"status":"x"}`
		query := "?after=" + id + "&before=" + id + "&around=" + id + "&limit=10&user_ids=" + id
		for _, route := range routes {
			method, pattern, ok := strings.Cut(route, " ")
			if !ok {
				method, pattern = http.MethodGet, route
			}
			path := param.ReplaceAllString(strings.TrimSuffix(pattern, "{$}"), id)
			for _, auth := range []string{player, bot} {
				r := do(t, method, e.APIURL+path+query, strings.NewReader(body),
					http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}})
				assert.Less(t, r.Status, 500, "%s %s", method, path)
			}
		}
	}
}
