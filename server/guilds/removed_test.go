package guilds_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// GLD-5: Create Guild is removed: a bot gets 403 20001, a user's token 403 50001, no credential 401.
func TestCreateGuildRefused(t *testing.T) {
	e := servertest.Start(t)
	access := e.Token(t, "alice", "identify guilds").AccessToken
	for _, path := range []string{"/guilds", "/guilds/templates/abc"} {
		for _, tc := range []struct {
			auth   http.Header
			status int
			code   int
		}{
			{guildtest.Bot(e.App.BotToken), http.StatusForbidden, wire.CodeBotsCannotUse},
			{guildtest.Bearer(access), http.StatusForbidden, wire.CodeMissingAccess},
			{nil, http.StatusUnauthorized, 0},
			{guildtest.Bot("forged"), http.StatusUnauthorized, 0},
		} {
			h := http.Header{"Content-Type": {"application/json"}}
			for k, v := range tc.auth {
				h[k] = v
			}
			r := guildtest.Do(t, http.MethodPost, e.APIURL+path, bytes.NewReader([]byte(`{"name":"mine"}`)), h)
			assert.Equal(t, tc.status, r.Status, "GLD-5: %s %v", path, tc.auth)
			assert.Equal(t, tc.code, r.APIError(t).Code, "GLD-5: %s", path)
		}
	}
}
