package server_test

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
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// until reads payloads up to the dispatch event (skipping others) and decodes its d into out.
func (g *botGW) until(event string, out any) {
	g.t.Helper()
	for range 50 {
		p := g.next()
		if p.Op == gwire.OpDispatch && p.T != nil && *p.T == event {
			require.NoError(g.t, json.Unmarshal(p.D, out), "d %s", p.D)
			return
		}
	}
	g.t.Fatalf("no %s", event)
}

// ixFixture is newBotFixture with a frozen clock, no rate limits, and the app's bot and alice
// connected to the gateway.
type ixFixture struct {
	*botFixture
	bot, alice *botGW
}

func newIxFixture(t *testing.T) *ixFixture {
	f := newBotFixture(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) { c.RateLimits.Disabled = true }))
	x := &ixFixture{botFixture: f, bot: dialBot(t, f.e, ""), alice: dialBot(t, f.e, "")}
	x.bot.identify(f.e.App.BotToken, gwire.IntentGuildMessages) // for MESSAGE_CREATE; interactions need none
	x.alice.identify(f.alice, 0)
	return x
}

// command registers a command of app (bot token tok) in the guild and returns it.
func (x *ixFixture) command(t *testing.T, tok string, app wire.Snowflake, spec map[string]any) wire.ApplicationCommand {
	t.Helper()
	var c wire.ApplicationCommand
	r := sendJSON(t, http.MethodPost, x.commandsURL(app, x.guild.ID), spec, bot(tok))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.json(t, &c)
	return c
}

// invoke posts an interaction as alice and checks the status.
func (x *ixFixture) invoke(t *testing.T, body map[string]any, status int) resp {
	t.Helper()
	r := sendJSON(t, http.MethodPost, x.api("/interactions"), body, bearer(x.botFixture.alice))
	require.Equal(t, status, r.Status, "%s", r.Body)
	return r
}

// callback answers an interaction.
func (x *ixFixture) callback(t *testing.T, ix wire.Interaction, body any) resp {
	t.Helper()
	return sendJSON(t, http.MethodPost, x.api("/interactions/"+ix.ID.String()+"/"+ix.Token+"/callback"), body, nil)
}

// A member invokes a slash command: the bot gets INTERACTION_CREATE with the member, the channel,
// app_permissions and the resolved channel of a CHANNEL option, which carries app_permissions
// because the bot is in the guild (INT-1); a USER command resolves its target user and member, a
// MESSAGE command its message. Answering with type 4 posts the bot's message with
// interaction_metadata; a second answer is 40060; after 3 s an initial answer is 10062.
func TestInteractionCommandAndResponse(t *testing.T) {
	x := newIxFixture(t)
	general := x.channel("general")
	cmd := x.command(t, x.e.App.BotToken, x.e.App.ID, map[string]any{"name": "where", "description": "d",
		"options": []any{map[string]any{"type": 7, "name": "room", "description": "d", "required": true}}})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.e.App.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "where", "type": 1,
			"options": []any{map[string]any{"name": "room", "value": general.ID.String()}}}}, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.until("INTERACTION_CREATE", &ix)
	assert.Equal(t, wire.InteractionApplicationCommand, ix.Type)
	assert.Equal(t, cmd.ID, ix.Data.ID)
	require.NotNil(t, ix.Member.User)
	assert.Equal(t, x.e.User("alice").ID, ix.Member.User.ID)
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
	x.bot.until("MESSAGE_CREATE", &msg)
	assert.Equal(t, "here", msg.Content)
	require.NotNil(t, msg.InteractionMetadata)
	assert.Equal(t, ix.ID, msg.InteractionMetadata.ID)
	assert.Equal(t, x.e.User("alice").ID, msg.InteractionMetadata.User.ID)
	var list []wire.GuildMessage
	ok2 := do(t, http.MethodGet, x.messagesURL(general.ID), nil, bot(x.e.App.BotToken))
	ok2.json(t, &list)
	require.NotEmpty(t, list)
	assert.Equal(t, "here", list[0].Content)
	assert.Equal(t, x.botID, list[0].Author.ID)

	r = x.callback(t, ix, map[string]any{"type": 5})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeInteractionAcknowledged, r.apiError(t).Code)

	// A USER command resolves bob; its answer comes too late.
	user := x.command(t, x.e.App.BotToken, x.e.App.ID, map[string]any{"type": 2, "name": "Wave"})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.e.App.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": user.ID, "name": "Wave", "type": 2, "target_id": x.e.User("bob").ID}}, http.StatusNoContent)
	x.bot.until("INTERACTION_CREATE", &ix)
	require.NotNil(t, ix.Data.Resolved)
	assert.Contains(t, ix.Data.Resolved.Users, x.e.User("bob").ID.String())
	assert.Contains(t, ix.Data.Resolved.Members, x.e.User("bob").ID.String())
	x.e.Clock.Advance(3*time.Second + time.Millisecond)
	r = x.callback(t, ix, map[string]any{"type": 5})
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeUnknownInteraction, r.apiError(t).Code)

	// A MESSAGE command resolves its message; a wrong token is unknown.
	mcmd := x.command(t, x.e.App.BotToken, x.e.App.ID, map[string]any{"type": 3, "name": "Quote"})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.e.App.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": mcmd.ID, "name": "Quote", "type": 3, "target_id": list[0].ID}}, http.StatusNoContent)
	x.bot.until("INTERACTION_CREATE", &ix)
	require.NotNil(t, ix.Data.Resolved)
	assert.Equal(t, "here", ix.Data.Resolved.Messages[list[0].ID.String()].Content)
	wrong := ix
	wrong.Token = "x" + ix.Token
	assert.Equal(t, http.StatusNotFound, x.callback(t, wrong, map[string]any{"type": 5}).Status)

	// Refusals: unknown command, missing target, a channel alice cannot view, bad bodies.
	base := map[string]any{"type": 2, "application_id": x.e.App.ID, "guild_id": x.guild.ID, "channel_id": general.ID}
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
	x.invoke(t, with("guild_id", x.other.ID, map[string]any{"id": cmd.ID, "name": "where"}), http.StatusNotFound)
	r = sendJSON(t, http.MethodPost, x.api("/interactions"), with("", nil, map[string]any{"id": cmd.ID}), bot(x.e.App.BotToken))
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a bot does not invoke: %s", r.Body)
}

// INT-1: an app whose bot user is not in the guild (its commands registered in the guild) gets
// the interaction on a session without intents with resolved channels without app_permissions.
func TestInteractionResolvedChannelWithoutBot(t *testing.T) {
	x := newIxFixture(t)
	child := dialBot(t, x.e, "")
	child.identify(x.e.ChildApp.BotToken, 0)
	general := x.channel("general")
	cmd := x.command(t, x.e.ChildApp.BotToken, x.e.ChildApp.ID, map[string]any{"name": "where", "description": "d",
		"options": []any{map[string]any{"type": 7, "name": "room", "description": "d"}}})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.e.ChildApp.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "where",
			"options": []any{map[string]any{"name": "room", "value": general.ID.String()}}}}, http.StatusNoContent)
	var raw map[string]json.RawMessage
	child.until("INTERACTION_CREATE", &raw)
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
	r := sendJSON(t, http.MethodPost, x.commandsURL(x.e.ChildApp.ID), map[string]any{"name": "hi", "description": "d"},
		bot(x.e.ChildApp.BotToken))
	r.json(t, &global)
	x.invoke(t, map[string]any{"type": 2, "application_id": x.e.ChildApp.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
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
	general := x.channel("general")
	cmd := x.command(t, x.e.App.BotToken, x.e.App.ID, map[string]any{"name": "feedback", "description": "d"})
	invoke := map[string]any{"type": 2, "application_id": x.e.App.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "feedback"}}
	x.invoke(t, invoke, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.until("INTERACTION_CREATE", &ix)
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
	assert.Equal(t, wire.CodeInvalidFormBody, r.apiError(t).Code)
	assert.Contains(t, string(r.Body), "disabled")
	r = x.callback(t, ix, modal(selectOf("")))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var shown wire.ModalCreate
	x.alice.until("INTERACTION_MODAL_CREATE", &shown)
	assert.Equal(t, ix.ID, shown.ID)
	assert.Equal(t, "Feedback", shown.Title)
	require.Len(t, shown.Components, 3)

	submit := func(components string) map[string]any {
		return map[string]any{"type": 5, "application_id": x.e.App.ID, "guild_id": x.guild.ID, "channel_id": general.ID,
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
	x.bot.until("INTERACTION_CREATE", &sub)
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
	x.e.Clock.Advance(15 * time.Minute)
	r = x.callback(t, sub, map[string]any{"type": 5})
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeUnknownInteraction, r.apiError(t).Code)
}
