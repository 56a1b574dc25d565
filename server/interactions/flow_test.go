package interactions_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// ixFixture is newBotFixture with a frozen clock, no rate limits, and the app's bot and alice
// connected to the gateway.
type ixFixture struct {
	*guildtest.Bots
	bot, alice *guildtest.Gateway
}

func newIxFixture(t *testing.T) *ixFixture {
	f := guildtest.NewBots(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) { c.RateLimits.Disabled = true }))
	x := &ixFixture{Bots: f, bot: guildtest.Dial(t, f.E, ""), alice: guildtest.Dial(t, f.E, "")}
	x.bot.Identify(f.E.App.BotToken, gwire.IntentGuildMessages) // for MESSAGE_CREATE; interactions need none
	x.alice.Identify(f.Alice, 0)
	return x
}

// command registers a command of app (bot token tok) in the guild and returns it.
func (x *ixFixture) command(t *testing.T, tok string, app wire.Snowflake, spec map[string]any) wire.ApplicationCommand {
	t.Helper()
	var c wire.ApplicationCommand
	r := guildtest.SendJSON(t, http.MethodPost, commandsURL(x.Bots, app, x.Guild.ID), spec, guildtest.Bot(tok))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.JSON(t, &c)
	return c
}

// invoke posts an interaction as alice and checks the status.
func (x *ixFixture) invoke(t *testing.T, body map[string]any, status int) guildtest.Resp {
	t.Helper()
	r := guildtest.SendJSON(t, http.MethodPost, x.API("/interactions"), body, guildtest.Bearer(x.Bots.Alice))
	require.Equal(t, status, r.Status, "%s", r.Body)
	return r
}

// callback answers an interaction.
func (x *ixFixture) callback(t *testing.T, ix wire.Interaction, body any) guildtest.Resp {
	t.Helper()
	return guildtest.SendJSON(t, http.MethodPost, x.API("/interactions/"+ix.ID.String()+"/"+ix.Token+"/callback"), body, nil)
}

// A member invokes a slash command: the bot gets INTERACTION_CREATE with the member, the channel,
// app_permissions and the resolved channel of a CHANNEL option, which carries app_permissions
// because the bot is in the guild (INT-1); a USER command resolves its target user and member, a
// MESSAGE command its message. Answering with type 4 posts the bot's message with
// interaction_metadata; a second answer is 40060; after 3 s an initial answer is 10062.
func TestInteractionCommandAndResponse(t *testing.T) {
	x := newIxFixture(t)
	general := x.Channel("general")
	cmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"name": "where", "description": "d",
		"options": []any{map[string]any{"type": 7, "name": "room", "description": "d", "required": true}}})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "where", "type": 1,
			"options": []any{map[string]any{"name": "room", "value": general.ID.String()}}}}, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &ix)
	assert.Equal(t, wire.InteractionApplicationCommand, ix.Type)
	assert.Equal(t, cmd.ID, ix.Data.ID)
	require.NotNil(t, ix.Member.User)
	assert.Equal(t, x.E.User("alice").ID, ix.Member.User.ID)
	assert.NotEmpty(t, ix.Token)
	botPerms := guildaccess.PermViewChannel | guildaccess.PermSendMessages
	assert.Equal(t, botPerms, uint64(ix.AppPermissions)&botPerms, "the bot's permissions in the channel")
	require.NotNil(t, ix.Data.Resolved)
	rc, ok := ix.Data.Resolved.Channels[general.ID.String()]
	require.True(t, ok, "resolved %+v", ix.Data.Resolved)
	require.NotNil(t, rc.AppPermissions, "INT-1: the bot is in the guild")
	assert.Equal(t, ix.AppPermissions, *rc.AppPermissions)

	r := x.callback(t, ix, map[string]any{"type": 4, "data": map[string]any{"content": "here"}})
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var msg wire.InteractionMessage
	x.bot.Until("MESSAGE_CREATE", &msg)
	assert.Equal(t, "here", msg.Content)
	require.NotNil(t, msg.InteractionMetadata)
	assert.Equal(t, ix.ID, msg.InteractionMetadata.ID)
	assert.Equal(t, x.E.User("alice").ID, msg.InteractionMetadata.User.ID)
	var list []wire.GuildMessage
	ok2 := guildtest.Do(t, http.MethodGet, x.MessagesURL(general.ID), nil, guildtest.Bot(x.E.App.BotToken))
	ok2.JSON(t, &list)
	require.NotEmpty(t, list)
	assert.Equal(t, "here", list[0].Content)
	assert.Equal(t, x.BotID, list[0].Author.ID)

	r = x.callback(t, ix, map[string]any{"type": 5})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeInteractionAcknowledged, r.APIError(t).Code)

	// A USER command resolves bob; its answer comes too late.
	user := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"type": 2, "name": "Wave"})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": user.ID, "name": "Wave", "type": 2, "target_id": x.E.User("bob").ID}}, http.StatusNoContent)
	x.bot.Until("INTERACTION_CREATE", &ix)
	require.NotNil(t, ix.Data.Resolved)
	assert.Contains(t, ix.Data.Resolved.Users, x.E.User("bob").ID.String())
	assert.Contains(t, ix.Data.Resolved.Members, x.E.User("bob").ID.String())
	x.E.Clock.Advance(3*time.Second + time.Millisecond)
	r = x.callback(t, ix, map[string]any{"type": 5})
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeUnknownInteraction, r.APIError(t).Code)

	// A MESSAGE command resolves its message; a wrong token is unknown.
	mcmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"type": 3, "name": "Quote"})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": mcmd.ID, "name": "Quote", "type": 3, "target_id": list[0].ID}}, http.StatusNoContent)
	x.bot.Until("INTERACTION_CREATE", &ix)
	require.NotNil(t, ix.Data.Resolved)
	assert.Equal(t, "here", ix.Data.Resolved.Messages[list[0].ID.String()].Content)
	wrong := ix
	wrong.Token = "x" + ix.Token
	assert.Equal(t, http.StatusNotFound, x.callback(t, wrong, map[string]any{"type": 5}).Status)

	// Refusals: unknown command, missing target, a channel alice cannot view, bad bodies.
	base := map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID}
	with := func(k string, v any, data map[string]any) map[string]any {
		out := map[string]any{"data": data}
		for kk, vv := range base {
			out[kk] = vv
		}
		if k != "" {
			out[k] = v
		}
		return out
	}
	x.invoke(t, with("", nil, map[string]any{"id": cmd.ID, "name": "other", "type": 1}), http.StatusNotFound)
	x.invoke(t, with("", nil, map[string]any{"id": user.ID, "name": "Wave", "type": 2}), http.StatusBadRequest)
	x.invoke(t, with("", nil, map[string]any{"id": cmd.ID, "name": "where", "type": 1}), http.StatusBadRequest) // required option
	x.invoke(t, with("", nil, map[string]any{"id": cmd.ID, "name": "where", "type": 1,
		"options": []any{map[string]any{"name": "room", "value": 5}}}), http.StatusBadRequest)
	x.invoke(t, with("type", 3, map[string]any{"id": cmd.ID}), http.StatusBadRequest)
	x.invoke(t, with("guild_id", x.Other.ID, map[string]any{"id": cmd.ID, "name": "where"}), http.StatusNotFound)
	r = guildtest.SendJSON(t, http.MethodPost, x.API("/interactions"), with("", nil, map[string]any{"id": cmd.ID}), guildtest.Bot(x.E.App.BotToken))
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a bot does not invoke: %s", r.Body)
}

// INT-1: an app whose bot user is not in the guild (its commands registered in the guild) gets
// the interaction on a session without intents with resolved channels without app_permissions.
func TestInteractionResolvedChannelWithoutBot(t *testing.T) {
	x := newIxFixture(t)
	child := guildtest.Dial(t, x.E, "")
	child.Identify(x.E.ChildApp.BotToken, 0)
	general := x.Channel("general")
	cmd := x.command(t, x.E.ChildApp.BotToken, x.E.ChildApp.ID, map[string]any{"name": "where", "description": "d",
		"options": []any{map[string]any{"type": 7, "name": "room", "description": "d"}}})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.ChildApp.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "where",
			"options": []any{map[string]any{"name": "room", "value": general.ID.String()}}}}, http.StatusNoContent)
	var raw map[string]json.RawMessage
	child.Until("INTERACTION_CREATE", &raw)
	var ix wire.Interaction
	require.NoError(t, json.Unmarshal(mustJSON(t, raw), &ix))
	require.NotNil(t, ix.Data.Resolved)
	rc, ok := ix.Data.Resolved.Channels[general.ID.String()]
	require.True(t, ok)
	assert.Nil(t, rc.AppPermissions, "INT-1: the bot is not in the guild")
	var data struct {
		Resolved struct {
			Channels map[string]map[string]json.RawMessage `json:"channels"`
		} `json:"resolved"`
	}
	require.NoError(t, json.Unmarshal(raw["data"], &data))
	assert.NotContains(t, data.Resolved.Channels[general.ID.String()], "app_permissions")
	assert.Contains(t, data.Resolved.Channels[general.ID.String()], "permissions")

	// A global command of that app is not invocable where its bot is not.
	var global wire.ApplicationCommand
	r := guildtest.SendJSON(t, http.MethodPost, commandsURL(x.Bots, x.E.ChildApp.ID), map[string]any{"name": "hi", "description": "d"},
		guildtest.Bot(x.E.ChildApp.BotToken))
	r.JSON(t, &global)
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.ChildApp.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": global.ID, "name": "hi"}}, http.StatusNotFound)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// MOD-1..MOD-8, ERR-2 over the routes: the bot answers with a modal (a disabled String Select is
// refused, ERR-2, and does not use up the answer); alice's sessions get INTERACTION_MODAL_CREATE;
// her submission is checked against the modal (a required String Select, MOD-4; a Checkbox,
// MOD-7) and reaches the bot as INTERACTION_CREATE type 5, answered with a message; a modal
// cannot answer a submission, and a modal is submitted once.
func TestModalFlow(t *testing.T) {
	x := newIxFixture(t)
	general := x.Channel("general")
	cmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"name": "feedback", "description": "d"})
	invoke := map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "feedback"}}
	x.invoke(t, invoke, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &ix)
	selectOf := func(extra string) string {
		return `{"type": 18, "label": "Pick", "component": {"type": 3, "custom_id": "pick", ` + extra +
			`"options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}]}}`
	}
	modal := func(sel string) json.RawMessage {
		return json.RawMessage(`{"type": 9, "data": {"custom_id": "fb", "title": "Feedback", "components": [
			{"type": 10, "content": "**Thanks**"}, ` + sel + `,
			{"type": 18, "label": "Agree", "component": {"type": 23, "custom_id": "ok"}}]}}`)
	}
	r := x.callback(t, ix, modal(selectOf(`"disabled": true, `)))
	require.Equal(t, http.StatusBadRequest, r.Status, "ERR-2: %s", r.Body)
	assert.Equal(t, wire.CodeInvalidFormBody, r.APIError(t).Code)
	assert.Contains(t, string(r.Body), "disabled")
	r = x.callback(t, ix, modal(selectOf("")))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var shown wire.ModalCreate
	x.alice.Until("INTERACTION_MODAL_CREATE", &shown)
	assert.Equal(t, ix.ID, shown.ID)
	assert.Equal(t, "Feedback", shown.Title)
	require.Len(t, shown.Components, 3)

	submit := func(components string) map[string]any {
		return map[string]any{"type": 5, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
			"data": map[string]any{"id": shown.ID, "custom_id": "fb", "components": json.RawMessage(components)}}
	}
	x.invoke(t, submit(`[{"type": 18, "component": {"type": 23, "custom_id": "ok", "value": true}}]`), http.StatusBadRequest) // MOD-4: required
	x.invoke(t, submit(`[{"type": 18, "component": {"type": 3, "custom_id": "pick", "values": ["z"]}}]`), http.StatusBadRequest)
	x.invoke(t, submit(`[{"type": 18, "component": {"type": 3, "custom_id": "pick", "values": ["a"]}},
		{"type": 18, "component": {"type": 23, "custom_id": "ok", "value": "yes"}}]`), http.StatusBadRequest) // MOD-7
	good := submit(`[{"type": 18, "component": {"type": 3, "custom_id": "pick", "values": ["b"]}},
		{"type": 18, "component": {"type": 23, "custom_id": "ok", "value": true}}]`)
	x.invoke(t, good, http.StatusNoContent)
	var sub wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &sub)
	assert.Equal(t, wire.InteractionModalSubmit, sub.Type)
	assert.Equal(t, "fb", sub.Data.CustomID)
	require.Len(t, sub.Data.Components, 2)
	assert.Equal(t, []string{"b"}, sub.Data.Components[0].Component.Values)
	x.invoke(t, good, http.StatusNotFound) // submitted once

	r = x.callback(t, sub, modal(selectOf("")))
	require.Equal(t, http.StatusBadRequest, r.Status, "no modal for a modal: %s", r.Body)
	r = x.callback(t, sub, map[string]any{"type": 4, "data": map[string]any{"content": "thanks"}})
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)

	// The token lasts 15 minutes.
	x.E.Clock.Advance(15 * time.Minute)
	r = x.callback(t, sub, map[string]any{"type": 5})
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeUnknownInteraction, r.APIError(t).Code)
}
