package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
)

// VER-5: the /.proxy/ prefix of activities is optional: a path with it is served as without.
func TestProxyPrefixOptional(t *testing.T) {
	e := servertest.Start(t)
	access := e.Token(t, "alice", "identify").AccessToken
	plain := guildtest.Do(t, http.MethodGet, e.URL+"/api/v10/users/@me", nil, guildtest.Bearer(access))
	require.Equal(t, http.StatusOK, plain.Status)
	proxied := guildtest.Do(t, http.MethodGet, e.URL+"/.proxy/api/v10/users/@me", nil, guildtest.Bearer(access))
	assert.Equal(t, http.StatusOK, proxied.Status, "VER-5")
	assert.JSONEq(t, string(plain.Body), string(proxied.Body), "VER-5")
	assert.Equal(t, http.StatusOK, guildtest.Do(t, http.MethodGet, e.URL+"/.proxy/healthz", nil, nil).Status, "VER-5")
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, e.URL+"/.proxyx/healthz", nil, nil).Status)
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, e.URL+"/.proxy/nothing", nil, nil).Status)
}

// The dev and API routes of users and apps answer bad input with a 4xx and the platform's body.
func TestUsersAppsBadInput(t *testing.T) {
	e := servertest.Start(t)
	paths := []struct{ method, path string }{
		{"PUT", "/dev/guilds/x/tag"}, {"PUT", "/dev/guilds/1/tag"}, {"PUT", "/dev/users/x/primary-guild"},
		{"PUT", "/dev/users/" + e.User("alice").ID.String() + "/primary-guild"}, {"POST", "/dev/users/1/connections"},
		{"PUT", "/dev/applications/x/flags"}, {"PUT", "/dev/applications/" + e.App.ID.String() + "/flags"},
		{"POST", "/dev/applications/" + e.App.ID.String() + "/skus"}, {"POST", "/dev/skus/1/subscriptions"},
		{"POST", "/dev/subscriptions/x/cancel"}, {"POST", "/dev/subscriptions/1/cancel"},
		{"PATCH", "/applications/@me"}, {"GET", "/skus/x/subscriptions"}, {"GET", "/skus/1/subscriptions/x"},
		{"GET", "/oauth2/applications/x"}, {"GET", "/oauth2/@me"}, {"PUT", "/channels/x/voice-status"},
		{"PUT", "/channels/1/voice-status"}, {"GET", "/guilds/x/audit-logs"}, {"GET", "/guilds/1/audit-logs"},
		{"POST", "/guilds"}, {"POST", "/guilds/templates/x"},
	}
	bodies := []string{"", "{", "[]", "null", `{"tag": 5}`, `{"tag": "` + strings.Repeat("x", 1000) + `"}`,
		`{"identity_guild_id": "x"}`, `{"identity_guild_id": "1"}`, `{"type": 9, "name": ""}`, `{"user_id": "1", "period_seconds": -1}`,
		`{"flags": {}}`, `{"flags": "18446744073709551615"}`, `{"status": 1}`, `{"status": "` + strings.Repeat("s", 600) + `"}`, `{"type": "steam", "id": "` + strings.Repeat("i", 200) + `"}`}
	for _, p := range paths {
		for _, b := range bodies {
			for _, auth := range []string{"Admin " + e.Creds.AdminToken, "Bot " + e.App.BotToken, ""} {
				r := guildtest.Do(t, p.method, e.APIURL+p.path, strings.NewReader(b), http.Header{"Content-Type": {"application/json"},
					"Authorization": {auth}})
				if r.Status >= 400 {
					assert.NotEmpty(t, r.APIError(t).Message, "%s %s %s: the platform's error body", p.method, p.path, b)
				}
			}
		}
	}
}
