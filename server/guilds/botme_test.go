package guilds_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// A bot token reads its own user at /users/@me; a wrong one is a 401 with the platform's body.
func TestUsersMeWithBotToken(t *testing.T) {
	e := servertest.Start(t)
	r := guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, guildtest.Bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status, "bot /users/@me: %d %s", r.Status, r.Body)
	var u wire.User
	r.JSON(t, &u)
	assert.Equal(t, e.App.BotUserID, u.ID, "bot user: %s", r.Body)
	assert.True(t, u.Bot, "bot flag: %s", r.Body)
	other := guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, guildtest.Bot(e.ChildApp.BotToken))
	require.Equal(t, http.StatusOK, other.Status, "child bot /users/@me: %d %s", other.Status, other.Body)
	var o wire.User
	other.JSON(t, &o)
	assert.Equal(t, e.ChildApp.BotUserID, o.ID, "child bot user: %s", other.Body)
	guildtest.ExpectAPIError(t, "wrong bot token", guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me", nil, guildtest.Bot("not-a-token")), 401, 0)
}
