package interactions_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// slash registers the command name (a STRING option) and has alice invoke it in general; it
// returns the interaction the bot got.
func (x *ixFixture) slash(t *testing.T, name string) wire.Interaction {
	t.Helper()
	cmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"name": name, "description": "d",
		"options": []any{map[string]any{"type": 3, "name": "text", "description": "d"}}})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": x.Channel("general").ID,
		"data": map[string]any{"id": cmd.ID, "name": name, "type": 1}}, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &ix)
	return ix
}

// hook sends a request to one of the interaction's webhook routes (no credential but its token).
func (x *ixFixture) hook(t *testing.T, ix wire.Interaction, method, rest string, body any) guildtest.Resp {
	t.Helper()
	u := x.API("/webhooks/" + x.E.App.ID.String() + "/" + ix.Token + rest)
	if body == nil {
		return guildtest.Do(t, method, u, nil, nil)
	}
	return guildtest.SendJSON(t, method, u, body, nil)
}

// A deferred response (type 5) is completed by the first follow-up, which becomes @original;
// later follow-ups are messages of their own. Each is the bot's, of type 20
// (CHAT_INPUT_COMMAND), with application_id, webhook_id and interaction_metadata, which it keeps
// when read back; follow-ups are edited and deleted through the interaction's webhook.
func TestDeferredResponseAndFollowUps(t *testing.T) {
	x := newIxFixture(t)
	ix := x.slash(t, "echo")
	guildtest.ExpectAPIError(t, "a follow-up before the response", x.hook(t, ix, http.MethodPost, "", map[string]any{"content": "x"}),
		http.StatusNotFound, wire.CodeUnknownWebhook)
	require.Equal(t, http.StatusNoContent, x.callback(t, ix, map[string]any{"type": 5}).Status)
	guildtest.ExpectAPIError(t, "@original while deferred", x.hook(t, ix, http.MethodGet, "/messages/@original", nil),
		http.StatusNotFound, wire.CodeUnknownMessage)

	// After 3 seconds (within 15 minutes), the first follow-up completes the deferral.
	x.E.Clock.Advance(4 * time.Second)
	var first wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodPost, "?wait=true", map[string]any{"content": "done", "tts": false}), &first)
	assert.Equal(t, "done", first.Content)
	assert.Equal(t, wire.MessageTypeChatInputCommand, first.Type)
	assert.Equal(t, x.BotID, first.Author.ID)
	require.NotNil(t, first.InteractionMetadata)
	assert.Equal(t, ix.ID, first.InteractionMetadata.ID)
	require.NotNil(t, first.ApplicationID)
	assert.Equal(t, x.E.App.ID, *first.ApplicationID)
	require.NotNil(t, first.WebhookID)
	var created wire.GuildMessage
	x.bot.Until(gwire.EventMessageCreate, &created)
	assert.Equal(t, first.ID, created.ID)
	require.NotNil(t, created.InteractionMetadata)
	var original wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodGet, "/messages/@original", nil), &original)
	assert.Equal(t, first.ID, original.ID, "the first follow-up is the original")

	var second wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodPost, "", map[string]any{"content": "and more"}), &second)
	assert.NotEqual(t, first.ID, second.ID)
	var edited wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodPatch, "/messages/"+second.ID.String(), map[string]any{"content": "and more!"}), &edited)
	assert.Equal(t, "and more!", edited.Content)
	assert.NotNil(t, edited.EditedTimestamp)
	guildtest.OK(t, x.hook(t, ix, http.MethodPatch, "/messages/@original", map[string]any{"content": "done!"}), &edited)
	assert.Equal(t, first.ID, edited.ID)

	// Read back over REST: type and interaction_metadata kept.
	var list []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, x.MessagesURL(x.Channel("general").ID), nil, x.BotHeader()), &list)
	require.Len(t, list, 2)
	for _, m := range list {
		assert.Equal(t, wire.MessageTypeChatInputCommand, m.Type)
		require.NotNil(t, m.InteractionMetadata, "%+v", m)
		assert.Equal(t, ix.ID, m.InteractionMetadata.ID)
		assert.Equal(t, x.E.User("alice").ID, m.InteractionMetadata.User.ID)
	}
	assert.Equal(t, "done!", list[1].Content)

	r := x.hook(t, ix, http.MethodDelete, "/messages/"+second.ID.String(), nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	guildtest.ExpectAPIError(t, "a deleted follow-up", x.hook(t, ix, http.MethodGet, "/messages/"+second.ID.String(), nil),
		http.StatusNotFound, wire.CodeUnknownMessage)
	guildtest.ExpectAPIError(t, "a message not of the interaction", x.hook(t, ix, http.MethodGet, "/messages/"+x.Channel("general").ID.String(), nil),
		http.StatusNotFound, wire.CodeUnknownMessage)

	// Bad bodies, another application, another token, and the end of the token's 15 minutes.
	for _, c := range []struct {
		what         string
		body         any
		status, code int
	}{
		{"no content", map[string]any{}, http.StatusBadRequest, 50006},
		{"empty content", map[string]any{"content": ""}, http.StatusBadRequest, 50006},
		{"long content", map[string]any{"content": strings.Repeat("a", 2001)}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"a flag it may not set", map[string]any{"content": "x", "flags": 2}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"content not a string", map[string]any{"content": 5}, http.StatusBadRequest, wire.CodeInvalidFormBody},
	} {
		guildtest.ExpectAPIError(t, c.what, x.hook(t, ix, http.MethodPost, "", c.body), c.status, c.code)
	}
	guildtest.ExpectAPIError(t, "another application", guildtest.SendJSON(t, http.MethodPost,
		x.API("/webhooks/"+x.E.ChildApp.ID.String()+"/"+ix.Token), map[string]any{"content": "x"}, nil), http.StatusNotFound, wire.CodeUnknownWebhook)
	guildtest.ExpectAPIError(t, "another token", guildtest.SendJSON(t, http.MethodPost,
		x.API("/webhooks/"+x.E.App.ID.String()+"/nope"), map[string]any{"content": "x"}, nil), http.StatusNotFound, wire.CodeUnknownWebhook)
	x.E.Clock.Advance(15 * time.Minute)
	guildtest.ExpectAPIError(t, "after 15 minutes", x.hook(t, ix, http.MethodPost, "", map[string]any{"content": "late"}),
		http.StatusNotFound, wire.CodeUnknownWebhook)
}

// An ephemeral response (flags 64) and an ephemeral deferral: only the invoking user's sessions
// get the message (MESSAGE_CREATE, MESSAGE_UPDATE, MESSAGE_DELETE); no bot gets it and the
// channel does not keep it; the interaction's webhook reads, edits and deletes it.
func TestEphemeralResponses(t *testing.T) {
	x := newIxFixture(t)
	ix := x.slash(t, "echo")
	require.Equal(t, http.StatusNoContent, x.callback(t, ix, map[string]any{"type": 4, "data": map[string]any{"content": "psst", "flags": 64}}).Status)
	var got map[string]json.RawMessage
	x.alice.Until(gwire.EventMessageCreate, &got)
	assert.JSONEq(t, `"psst"`, string(got["content"]))
	assert.JSONEq(t, `64`, string(got["flags"]))
	assert.Contains(t, got, "interaction_metadata")
	var original wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodGet, "/messages/@original", nil), &original)
	assert.Equal(t, "psst", original.Content)
	assert.Equal(t, wire.MessageFlagEphemeral, original.Flags)
	guildtest.OK(t, x.hook(t, ix, http.MethodPatch, "/messages/@original", map[string]any{"content": "psst!"}), &original)
	x.alice.Until(gwire.EventMessageUpdate, &got)
	assert.JSONEq(t, `"psst!"`, string(got["content"]))

	// A deferral with flags 64 makes its message ephemeral.
	ix2 := x.slash(t, "think")
	require.Equal(t, http.StatusNoContent, x.callback(t, ix2, map[string]any{"type": 5, "data": map[string]any{"flags": 64}}).Status)
	var later wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix2, http.MethodPatch, "/messages/@original", map[string]any{"content": "thought about it"}), &later)
	assert.Equal(t, wire.MessageFlagEphemeral, later.Flags)
	x.alice.Until(gwire.EventMessageCreate, &got)
	assert.JSONEq(t, `"thought about it"`, string(got["content"]))
	// An ephemeral follow-up, deleted.
	var eph wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix2, http.MethodPost, "", map[string]any{"content": "only you", "flags": 64}), &eph)
	x.alice.Until(gwire.EventMessageCreate, &got)
	require.Equal(t, http.StatusNoContent, x.hook(t, ix2, http.MethodDelete, "/messages/"+eph.ID.String(), nil).Status)
	x.alice.Until(gwire.EventMessageDelete, &got)
	assert.JSONEq(t, `"`+eph.ID.String()+`"`, string(got["id"]))

	// The bot got none of them, and the channel keeps none.
	x.bot.Sync()
	var list []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, x.MessagesURL(x.Channel("general").ID), nil, x.BotHeader()), &list)
	assert.Empty(t, list)
}

// Subcommands and groups with typed options: the bot gets the invoked subcommand's path with its
// options typed and resolved; one subcommand must be named, known, with its required options,
// and a value among its option's choices.
func TestSubcommands(t *testing.T) {
	x := newIxFixture(t)
	general := x.Channel("general")
	cmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"name": "match", "description": "d", "options": []any{
		map[string]any{"type": 2, "name": "team", "description": "d", "options": []any{
			map[string]any{"type": 1, "name": "add", "description": "d", "options": []any{
				map[string]any{"type": 6, "name": "player", "description": "d", "required": true},
				map[string]any{"type": 3, "name": "side", "description": "d", "choices": []any{
					map[string]any{"name": "Red", "value": "red"}, map[string]any{"name": "Blue", "value": "blue"}}}}}}},
		map[string]any{"type": 1, "name": "start", "description": "d", "options": []any{
			map[string]any{"type": 4, "name": "rounds", "description": "d"}}}}})
	invoke := func(opts []any, status int) guildtest.Resp {
		t.Helper()
		return x.invoke(t, map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
			"data": map[string]any{"id": cmd.ID, "name": "match", "type": 1, "options": opts}}, status)
	}
	bob := x.E.User("bob").ID.String()
	invoke([]any{map[string]any{"name": "team", "type": 2, "options": []any{map[string]any{"name": "add", "type": 1, "options": []any{
		map[string]any{"name": "player", "value": bob}, map[string]any{"name": "side", "value": "red"}}}}}}, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &ix)
	require.Len(t, ix.Data.Options, 1)
	group := ix.Data.Options[0]
	assert.Equal(t, "team", group.Name)
	assert.Equal(t, wire.OptionSubCommandGroup, group.Type)
	require.Len(t, group.Options, 1)
	add := group.Options[0]
	assert.Equal(t, wire.OptionSubCommand, add.Type)
	require.Len(t, add.Options, 2)
	assert.Equal(t, 6, add.Options[0].Type)
	assert.Equal(t, wire.OptionString, add.Options[1].Type)
	require.NotNil(t, ix.Data.Resolved)
	assert.Contains(t, ix.Data.Resolved.Users, bob)

	invoke([]any{map[string]any{"name": "start", "type": 1, "options": []any{map[string]any{"name": "rounds", "value": 3}}}}, http.StatusNoContent)
	var start wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &start)
	require.Len(t, start.Data.Options, 1)
	assert.Equal(t, []wire.InteractionValue{{Name: "rounds", Type: wire.OptionInteger, Value: json.RawMessage("3")}}, start.Data.Options[0].Options)

	for _, c := range []struct {
		what string
		opts []any
	}{
		{"no subcommand", nil},
		{"two subcommands", []any{map[string]any{"name": "start"}, map[string]any{"name": "start"}}},
		{"an unknown subcommand", []any{map[string]any{"name": "stop"}}},
		{"a value for a subcommand", []any{map[string]any{"name": "start", "value": 1}}},
		{"a group without its subcommand", []any{map[string]any{"name": "team"}}},
		{"a required option missing", []any{map[string]any{"name": "team", "options": []any{map[string]any{"name": "add"}}}}},
		{"not a choice", []any{map[string]any{"name": "team", "options": []any{map[string]any{"name": "add", "options": []any{
			map[string]any{"name": "player", "value": bob}, map[string]any{"name": "side", "value": "green"}}}}}}},
		{"a value of another type", []any{map[string]any{"name": "start", "options": []any{map[string]any{"name": "rounds", "value": "x"}}}}},
	} {
		r := invoke(c.opts, http.StatusBadRequest)
		assert.Equal(t, wire.CodeInvalidFormBody, r.APIError(t).Code, c.what)
	}
}

// Autocomplete: alice types into an autocomplete option (interaction type 4, the option
// focused); the bot answers with type 8 and its choices, which alice's sessions get. Type 8 is
// the only answer an autocomplete takes, and answers nothing else.
func TestAutocomplete(t *testing.T) {
	x := newIxFixture(t)
	general := x.Channel("general")
	cmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"name": "map", "description": "d", "options": []any{
		map[string]any{"type": 1, "name": "pick", "description": "d", "options": []any{
			map[string]any{"type": 3, "name": "name", "description": "d", "required": true, "autocomplete": true},
			map[string]any{"type": 4, "name": "size", "description": "d"}}}}})
	typed := func(opts []any, status int) {
		t.Helper()
		x.invoke(t, map[string]any{"type": 4, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
			"data": map[string]any{"id": cmd.ID, "name": "map", "type": 1, "options": []any{map[string]any{"name": "pick", "options": opts}}}}, status)
	}
	typed([]any{map[string]any{"name": "name", "value": "ha", "focused": true}}, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &ix)
	assert.Equal(t, wire.InteractionAutocomplete, ix.Type)
	require.Len(t, ix.Data.Options, 1)
	require.Len(t, ix.Data.Options[0].Options, 1)
	assert.True(t, ix.Data.Options[0].Options[0].Focused)
	assert.JSONEq(t, `"ha"`, string(ix.Data.Options[0].Options[0].Value))

	r := x.callback(t, ix, map[string]any{"type": 4, "data": map[string]any{"content": "no"}})
	assert.Equal(t, http.StatusBadRequest, r.Status, "an autocomplete takes type 8 only: %s", r.Body)
	many := make([]any, 26)
	for i := range many {
		many[i] = map[string]any{"name": "m", "value": "m"}
	}
	r = x.callback(t, ix, map[string]any{"type": 8, "data": map[string]any{"choices": many}})
	assert.Equal(t, http.StatusBadRequest, r.Status, "26 choices: %s", r.Body)
	r = x.callback(t, ix, map[string]any{"type": 8, "data": map[string]any{"choices": []any{map[string]any{"name": "Harbour", "value": 7}}}})
	assert.Equal(t, http.StatusBadRequest, r.Status, "a number for a STRING option: %s", r.Body)
	r = x.callback(t, ix, map[string]any{"type": 8, "data": map[string]any{"choices": []any{
		map[string]any{"name": "Harbour", "value": "harbour"}, map[string]any{"name": "Hangar", "value": "hangar"}}}})
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var answer wire.AutocompleteResponse
	x.alice.Until(wire.EventAutocompleteResponse, &answer)
	assert.Equal(t, ix.ID, answer.ID)
	require.Len(t, answer.Choices, 2)
	assert.Equal(t, "Harbour", answer.Choices[0].Name)
	guildtest.ExpectAPIError(t, "an autocomplete has no webhook", x.hook(t, ix, http.MethodPost, "", map[string]any{"content": "x"}),
		http.StatusNotFound, wire.CodeUnknownWebhook)

	typed([]any{map[string]any{"name": "name", "value": "ha"}}, http.StatusBadRequest)                 // nothing focused
	typed([]any{map[string]any{"name": "size", "value": "1", "focused": true}}, http.StatusBadRequest) // not autocomplete
	typed([]any{map[string]any{"name": "name", "value": 5, "focused": true}}, http.StatusBadRequest)   // not what was typed
	cmdIx := x.slash(t, "echo")
	r = x.callback(t, cmdIx, map[string]any{"type": 8, "data": map[string]any{"choices": []any{}}})
	assert.Equal(t, http.StatusBadRequest, r.Status, "type 8 answers an autocomplete only: %s", r.Body)
	r = x.callback(t, cmdIx, map[string]any{"type": 6})
	assert.Equal(t, http.StatusBadRequest, r.Status, "type 6 does not answer a command: %s", r.Body)
}

// allowed_mentions in a response, a follow-up and an edit decides which of the content's
// mentions ping, as in a message the bot posts itself; absent, every mention pings; malformed,
// 400 50035.
func TestInteractionAllowedMentions(t *testing.T) {
	x := newIxFixture(t)
	bob := x.E.User("bob").ID
	hi := "hi <@" + bob.String() + ">"
	pinged := func(m wire.GuildMessage) []wire.Snowflake {
		out := []wire.Snowflake{}
		for _, u := range m.Mentions {
			out = append(out, u.ID)
		}
		return out
	}
	ix := x.slash(t, "hello")
	r := x.callback(t, ix, map[string]any{"type": 4, "data": map[string]any{"content": hi,
		"allowed_mentions": map[string]any{"parse": []string{}}}})
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var original wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodGet, "/messages/@original", nil), &original)
	assert.Equal(t, []wire.Snowflake{}, pinged(original), "response with parse []")

	var follow wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodPost, "?wait=true", map[string]any{"content": hi}), &follow)
	assert.Equal(t, []wire.Snowflake{bob}, pinged(follow), "follow-up without allowed_mentions")

	var edited wire.GuildMessage
	guildtest.OK(t, x.hook(t, ix, http.MethodPatch, "/messages/"+follow.ID.String(), map[string]any{"content": hi + "!",
		"allowed_mentions": map[string]any{"users": []string{}}}), &edited)
	assert.Equal(t, []wire.Snowflake{}, pinged(edited), "edit that allows no user")
	guildtest.OK(t, x.hook(t, ix, http.MethodPatch, "/messages/@original", map[string]any{"content": hi,
		"allowed_mentions": map[string]any{"users": []string{bob.String()}}}), &edited)
	assert.Equal(t, []wire.Snowflake{bob}, pinged(edited), "edit that allows bob")

	guildtest.ExpectAPIError(t, "malformed allowed_mentions", x.hook(t, ix, http.MethodPost, "",
		map[string]any{"content": hi, "allowed_mentions": map[string]any{"parse": "users"}}), http.StatusBadRequest, wire.CodeInvalidFormBody)
}
