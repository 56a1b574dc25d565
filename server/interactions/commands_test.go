package interactions_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// commandsURL is the URL of the app's global commands, or of a guild's with guild.
func commandsURL(f *guildtest.Bots, app wire.Snowflake, guild ...wire.Snowflake) string {
	if len(guild) > 0 {
		return f.API("/applications/" + app.String() + "/guilds/" + guild[0].String() + "/commands")
	}
	return f.API("/applications/" + app.String() + "/commands")
}

// CMD-1: at most 15 USER and 15 MESSAGE commands per scope (global, each guild); the 16th is
// 400 30032, while CHAT_INPUT commands go on to 100. POST of an existing name and type replaces
// that command (200, same id) and does not count twice.
func TestCommandLimitsPerType(t *testing.T) {
	f := guildtest.NewBots(t, servertest.WithConfig(func(c *server.Config) { c.RateLimits.Disabled = true }))
	h := guildtest.Bot(f.E.App.BotToken)
	for _, scope := range []string{commandsURL(f, f.E.App.ID), commandsURL(f, f.E.App.ID, f.Guild.ID)} {
		for _, typ := range []int{wire.CommandUser, wire.CommandMessage} {
			for i := range 15 {
				r := guildtest.SendJSON(t, http.MethodPost, scope, map[string]any{"type": typ, "name": fmt.Sprintf("Menu %d", i)}, h)
				require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			}
			r := guildtest.SendJSON(t, http.MethodPost, scope, map[string]any{"type": typ, "name": "Menu 16"}, h)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
			assert.Equal(t, wire.CodeMaxApplicationCommands, r.APIError(t).Code)
			r = guildtest.SendJSON(t, http.MethodPost, scope, map[string]any{"type": typ, "name": "Menu 3"}, h)
			require.Equal(t, http.StatusOK, r.Status, "an upsert of an existing name: %s", r.Body)
		}
		r := guildtest.SendJSON(t, http.MethodPost, scope, map[string]any{"name": "ping", "description": "Ping"}, h)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
	var list []wire.ApplicationCommand
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, commandsURL(f, f.E.App.ID), nil, h), &list)
	assert.Len(t, list, 31)

	// PUT of 16 MESSAGE commands is refused as a whole; 100 CHAT_INPUT and 15 of each menu pass.
	var many []map[string]any
	for i := range 16 {
		many = append(many, map[string]any{"type": wire.CommandMessage, "name": "m" + strconv.Itoa(i)})
	}
	r := guildtest.SendJSON(t, http.MethodPut, commandsURL(f, f.E.App.ID), many, h)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeMaxApplicationCommands, r.APIError(t).Code)
	many = many[:15]
	for i := range 100 {
		many = append(many, map[string]any{"name": "c" + strconv.Itoa(i), "description": "d"})
	}
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPut, commandsURL(f, f.E.App.ID), many, h), &list)
	assert.Len(t, list, 115)
	r = guildtest.SendJSON(t, http.MethodPost, commandsURL(f, f.E.App.ID), map[string]any{"name": "c100", "description": "d"}, h)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeMaxApplicationCommands, r.APIError(t).Code)
}

// Commands are validated as on the platform; only the app's own bot manages them; GET, PATCH
// and DELETE of one; PUT keeps the ids of commands it keeps.
func TestCommandsCRUD(t *testing.T) {
	f := guildtest.NewBots(t)
	h := guildtest.Bot(f.E.App.BotToken)
	u := commandsURL(f, f.E.App.ID, f.Guild.ID)
	bad := []struct {
		name string
		body any
	}{
		{"no name", map[string]any{"description": "d"}},
		{"upper-case chat name", map[string]any{"name": "Ping", "description": "d"}},
		{"space in chat name", map[string]any{"name": "a b", "description": "d"}},
		{"long name", map[string]any{"name": "abcdefghijabcdefghijabcdefghijabc", "description": "d"}},
		{"no description", map[string]any{"name": "ping"}},
		{"long description", map[string]any{"name": "ping", "description": string(make([]byte, 101))}},
		{"menu with description", map[string]any{"type": 2, "name": "User info", "description": "d"}},
		{"menu with options", map[string]any{"type": 3, "name": "Quote", "options": []any{map[string]any{"type": 3, "name": "x", "description": "d"}}}},
		{"unknown type", map[string]any{"type": 4, "name": "launch"}},
		{"option type", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 12, "name": "x", "description": "d"}}}},
		{"subcommand beside a value", map[string]any{"name": "ping", "description": "d", "options": []any{
			map[string]any{"type": 1, "name": "x", "description": "d"}, map[string]any{"type": 3, "name": "y", "description": "d"}}}},
		{"value in a group", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 2, "name": "x",
			"description": "d", "options": []any{map[string]any{"type": 3, "name": "y", "description": "d"}}}}}},
		{"group in a subcommand", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 1, "name": "x",
			"description": "d", "options": []any{map[string]any{"type": 2, "name": "y", "description": "d"}}}}}},
		{"empty group", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 2, "name": "x", "description": "d"}}}},
		{"choices of a boolean", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 5, "name": "x",
			"description": "d", "choices": []any{map[string]any{"name": "yes", "value": true}}}}}},
		{"choice of another type", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 4, "name": "x",
			"description": "d", "choices": []any{map[string]any{"name": "one", "value": "1"}}}}}},
		{"choices and autocomplete", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 3, "name": "x",
			"description": "d", "autocomplete": true, "choices": []any{map[string]any{"name": "a", "value": "a"}}}}}},
		{"autocomplete of a user", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 6, "name": "x",
			"description": "d", "autocomplete": true}}}},
		{"option name", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 3, "name": "X", "description": "d"}}}},
		{"option description", map[string]any{"name": "ping", "description": "d", "options": []any{map[string]any{"type": 3, "name": "x"}}}},
		{"duplicate options", map[string]any{"name": "ping", "description": "d", "options": []any{
			map[string]any{"type": 3, "name": "x", "description": "d"}, map[string]any{"type": 4, "name": "x", "description": "d"}}}},
		{"required after optional", map[string]any{"name": "ping", "description": "d", "options": []any{
			map[string]any{"type": 3, "name": "x", "description": "d"}, map[string]any{"type": 4, "name": "y", "description": "d", "required": true}}}},
	}
	for _, c := range bad {
		r := guildtest.SendJSON(t, http.MethodPost, u, c.body, h)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", c.name, r.Body)
		assert.Equal(t, wire.CodeInvalidFormBody, r.APIError(t).Code, c.name)
	}
	// Another app's bot, a user, no token; an unknown guild.
	child := guildtest.Bot(f.E.ChildApp.BotToken)
	assert.Equal(t, http.StatusForbidden, guildtest.Do(t, http.MethodGet, u, nil, child).Status)
	assert.Equal(t, http.StatusUnauthorized, guildtest.Do(t, http.MethodGet, u, nil, guildtest.Bearer(f.Alice)).Status)
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, commandsURL(f, f.E.App.ID, f.BotID), nil, h).Status)

	var c wire.ApplicationCommand
	r := guildtest.SendJSON(t, http.MethodPost, u, map[string]any{"name": "roll", "description": "Roll dice",
		"options": []any{map[string]any{"type": 4, "name": "sides", "description": "Sides", "required": true}}}, h)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.JSON(t, &c)
	assert.Equal(t, f.E.App.ID, c.ApplicationID)
	require.NotNil(t, c.GuildID)
	assert.Equal(t, f.Guild.ID, *c.GuildID)
	one := u + "/" + c.ID.String()
	var got wire.ApplicationCommand
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, one, nil, h), &got)
	assert.Equal(t, c, got)
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, one, map[string]any{"description": "Roll some dice"}, h), &got)
	assert.Equal(t, "Roll some dice", got.Description)
	assert.Equal(t, c.ID, got.ID)
	assert.Equal(t, http.StatusBadRequest, guildtest.SendJSON(t, http.MethodPatch, one, map[string]any{"name": "Bad"}, h).Status)

	var list []wire.ApplicationCommand
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPut, u, []any{map[string]any{"name": "roll", "description": "d"},
		map[string]any{"type": 2, "name": "Wave"}}, h), &list)
	require.Len(t, list, 2)
	assert.Equal(t, c.ID, list[0].ID, "PUT keeps the id of a kept command")
	r = guildtest.SendJSON(t, http.MethodPut, u, []any{map[string]any{"name": "a", "description": "d"}, map[string]any{"name": "a", "description": "e"}}, h)
	assert.Equal(t, http.StatusBadRequest, r.Status, "duplicate names: %s", r.Body)

	assert.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete, one, nil, h).Status)
	r = guildtest.Do(t, http.MethodGet, one, nil, h)
	require.Equal(t, http.StatusNotFound, r.Status)
	assert.Equal(t, wire.CodeUnknownApplicationCommand, r.APIError(t).Code)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, commandsURL(f, f.E.App.ID), nil, h), &list)
	assert.Empty(t, list, "guild commands are not global")
}

// CMD-1: commands are kept in the store: after a restart on the same data the global and the
// guild commands are still there, ids and all, and the 16th context-menu command is still refused.
func TestCommandsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	e := servertest.Start(t, servertest.WithDataDir(dir))
	h := guildtest.Bot(e.App.BotToken)
	g, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Kept", OwnerID: e.User("alice").ID, Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID}}})
	require.NoError(t, err)
	global := e.APIURL + "/applications/" + e.App.ID.String() + "/commands"
	guild := e.APIURL + "/applications/" + e.App.ID.String() + "/guilds/" + g.ID.String() + "/commands"
	var made []wire.ApplicationCommand
	for i := range 15 {
		var c wire.ApplicationCommand
		r := guildtest.SendJSON(t, http.MethodPost, global, map[string]any{"type": wire.CommandUser, "name": fmt.Sprintf("Menu %d", i)}, h)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		r.JSON(t, &c)
		made = append(made, c)
	}
	var ping wire.ApplicationCommand
	r := guildtest.SendJSON(t, http.MethodPost, guild, map[string]any{"name": "ping", "description": "Ping"}, h)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.JSON(t, &ping)

	require.NoError(t, e.Server.Close())
	e = servertest.Start(t, servertest.WithDataDir(dir))
	h = guildtest.Bot(e.App.BotToken)
	var list []wire.ApplicationCommand
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, e.APIURL+"/applications/"+e.App.ID.String()+"/commands", nil, h), &list)
	assert.Equal(t, made, list, "the global commands after a restart")
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, e.APIURL+"/applications/"+e.App.ID.String()+"/guilds/"+g.ID.String()+"/commands", nil, h), &list)
	assert.Equal(t, []wire.ApplicationCommand{ping}, list, "the guild's commands after a restart")
	r = guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/applications/"+e.App.ID.String()+"/commands",
		map[string]any{"type": wire.CommandUser, "name": "Menu 16"}, h)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeMaxApplicationCommands, r.APIError(t).Code)
}
