package dms_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// A bot opens a DM with a user it shares a guild with (POST /users/@me/channels, recipient_id),
// writes there, and gets the user's answer as MESSAGE_CREATE by its DIRECT_MESSAGES intent,
// with channel_type 1 and the users the content mentions; a session without that intent gets
// none. Its channel lists the other user only, as the platform's does.
func TestBotOpensDM(t *testing.T) {
	f := guildtest.NewBots(t)
	bob := f.E.User("bob").ID
	dmGW := guildtest.Dial(t, f.E, "?v=10&encoding=json")
	dmGW.Identify(f.E.App.BotToken, gwire.IntentGuilds|gwire.IntentDirectMessages)
	guildOnly := guildtest.Dial(t, f.E, "?v=10&encoding=json")
	guildOnly.Identify(f.E.App.BotToken, gwire.IntentGuilds)
	var created map[string]json.RawMessage
	guildOnly.Until(gwire.EventGuildCreate, &created)

	var dm wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"),
		map[string]any{"recipient_id": bob.String()}, f.BotHeader()), &dm)
	assert.Equal(t, wire.ChannelTypeDM, dm.Type)
	require.Len(t, dm.Recipients, 1, "the other user only: %+v", dm.Recipients)
	assert.Equal(t, bob, dm.Recipients[0].ID)
	var again wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"),
		map[string]any{"recipient_id": bob.String()}, f.BotHeader()), &again)
	assert.Equal(t, dm.ID, again.ID, "one channel per pair")
	var got wire.DMChannel
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()), nil, f.BotHeader()), &got)
	assert.Equal(t, dm.ID, got.ID)

	// The bot writes; its message comes back as its own MESSAGE_CREATE.
	var sent wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"),
		map[string]any{"content": "hello <@" + bob.String() + ">", "tts": false}, f.BotHeader()), &sent)
	assert.Equal(t, f.BotID, sent.Author.ID)
	assert.True(t, sent.Author.Bot)
	assert.Nil(t, sent.ChannelType, "REST answers carry no channel_type")
	var own map[string]json.RawMessage
	dmGW.Until(gwire.EventMessageCreate, &own)
	assert.JSONEq(t, `"`+sent.ID.String()+`"`, string(own["id"]))

	// bob answers with his game's token; the bot's DM session gets it.
	var answer wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"),
		map[string]any{"content": "hi <@" + f.BotID.String() + ">"}, guildtest.Bearer(f.Bob)), &answer)
	var ev wire.Message
	var raw map[string]json.RawMessage
	dmGW.Until(gwire.EventMessageCreate, &raw)
	b, _ := json.Marshal(raw)
	require.NoError(t, json.Unmarshal(b, &ev))
	assert.Equal(t, answer.ID, ev.ID)
	assert.Equal(t, "hi <@"+f.BotID.String()+">", ev.Content, "a DM's content reaches the bot without MESSAGE_CONTENT")
	require.NotNil(t, ev.ChannelType)
	assert.Equal(t, wire.ChannelTypeDM, *ev.ChannelType)
	require.Len(t, ev.Mentions, 1)
	assert.Equal(t, f.BotID, ev.Mentions[0].ID)
	assert.NotContains(t, raw, "guild_id")
	guildOnly.Sync()
	dmGW.Sync()

	// The bot edits and deletes its own message; bob's it may not edit.
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.API("/channels/"+dm.ID.String()+"/messages/"+sent.ID.String()),
		map[string]any{"content": "hello again"}, f.BotHeader()), nil)
	guildtest.ExpectAPIError(t, "another user's message", guildtest.SendJSON(t, http.MethodPatch,
		f.API("/channels/"+dm.ID.String()+"/messages/"+answer.ID.String()), map[string]any{"content": "x"}, f.BotHeader()),
		http.StatusForbidden, 50005)
	var history []wire.Message
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()+"/messages"), nil, f.BotHeader()), &history)
	require.Len(t, history, 2)
	assert.Equal(t, "hello again", history[1].Content)
	var upd map[string]json.RawMessage
	dmGW.Until(gwire.EventMessageUpdate, &upd)
	assert.JSONEq(t, `1`, string(upd["channel_type"]))
	r := guildtest.Do(t, http.MethodDelete, f.API("/channels/"+dm.ID.String()+"/messages/"+sent.ID.String()), nil, f.BotHeader())
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var del map[string]json.RawMessage
	dmGW.Until(gwire.EventMessageDelete, &del)
	assert.JSONEq(t, `"`+sent.ID.String()+`"`, string(del["id"]))
	guildOnly.Sync() // nothing of the DM reached the session without DIRECT_MESSAGES
}

// Whom a bot may not open a DM with: 403 50007 for a user it shares no guild with, for itself
// and for another bot; 404 10013 for an unknown user; 400 50035 for a missing recipient_id.
func TestBotOpensDMRefused(t *testing.T) {
	f := guildtest.NewBots(t)
	dave := &store.User{ID: 4242, Username: "dave", CreatedAt: f.E.Clock.Now()}
	require.NoError(t, f.E.Server.Store().CreateUser(context.Background(), dave))
	stranger := wire.Snowflake(dave.ID)
	for _, c := range []struct {
		what         string
		body         map[string]any
		status, code int
	}{
		{"a user in none of its guilds", map[string]any{"recipient_id": stranger.String()}, http.StatusForbidden, wire.CodeCannotSendToUser},
		{"itself", map[string]any{"recipient_id": f.BotID.String()}, http.StatusForbidden, wire.CodeCannotSendToUser},
		{"an unknown user", map[string]any{"recipient_id": "12345"}, http.StatusNotFound, 10013},
		{"no recipient_id", map[string]any{}, http.StatusBadRequest, 50035},
	} {
		guildtest.ExpectAPIError(t, c.what, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"), c.body, f.BotHeader()),
			c.status, c.code)
	}
	guildtest.ExpectAPIError(t, "a bad bot token", guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"),
		map[string]any{"recipient_id": f.E.User("bob").ID.String()}, guildtest.Bot("nope")), http.StatusUnauthorized, 0)
}

// Replies in a DM channel: a message_reference (type 0) to a message of the channel makes a
// message of type 19 with message_reference and referenced_message (null once that message is
// deleted), for players and bots alike; a forward, another channel's message or a missing one
// (unless fail_if_not_exists is false: then a plain message) is a 400 50035.
func TestDMReplies(t *testing.T) {
	f := guildtest.NewBots(t)
	bob := f.E.User("bob").ID
	var dm wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"), map[string]any{"recipient_id": bob.String()}, f.BotHeader()), &dm)
	send := func(body map[string]any, h http.Header) guildtest.Resp {
		t.Helper()
		return guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"), body, h)
	}
	var question, answer wire.Message
	guildtest.OK(t, send(map[string]any{"content": "which map?"}, f.BotHeader()), &question)
	guildtest.OK(t, send(map[string]any{"content": "harbour", "message_reference": map[string]any{"message_id": question.ID}},
		guildtest.Bearer(f.Bob)), &answer)
	assert.Equal(t, wire.MessageTypeReply, answer.Type)
	require.NotNil(t, answer.MessageReference)
	assert.Equal(t, wire.MessageReference{MessageID: question.ID, ChannelID: dm.ID}, *answer.MessageReference)
	require.NotNil(t, answer.ReferencedMessage.Message)
	assert.Equal(t, "which map?", answer.ReferencedMessage.Message.Content)
	raw := send(map[string]any{"content": "ok", "message_reference": map[string]any{"message_id": answer.ID}}, f.BotHeader())
	guildtest.OK(t, raw, nil)
	assert.NotContains(t, string(guildtest.JSONField(t, raw.Body, "message_reference")), "guild_id")

	// The question deleted, the reply's referenced_message is null.
	r := guildtest.Do(t, http.MethodDelete, f.API("/channels/"+dm.ID.String()+"/messages/"+question.ID.String()), nil, f.BotHeader())
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var history []wire.Message
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()+"/messages"), nil, guildtest.Bearer(f.Bob)), &history)
	require.Len(t, history, 2)
	assert.True(t, history[1].ReferencedMessage.Present)
	assert.Nil(t, history[1].ReferencedMessage.Message, "deleted: null")

	var plain wire.Message
	guildtest.OK(t, send(map[string]any{"content": "x", "message_reference": map[string]any{"message_id": question.ID, "fail_if_not_exists": false}},
		f.BotHeader()), &plain)
	assert.Equal(t, 0, plain.Type)
	assert.Nil(t, plain.MessageReference)
	for _, c := range []struct {
		what string
		ref  map[string]any
	}{
		{"a deleted message", map[string]any{"message_id": question.ID}},
		{"a forward", map[string]any{"message_id": answer.ID, "type": 1}},
		{"another channel", map[string]any{"message_id": answer.ID, "channel_id": f.Channel("general").ID}},
		{"a guild", map[string]any{"message_id": answer.ID, "guild_id": f.Guild.ID}},
		{"no message_id", map[string]any{}},
	} {
		guildtest.ExpectAPIError(t, c.what, send(map[string]any{"content": "x", "message_reference": c.ref}, f.BotHeader()),
			http.StatusBadRequest, wire.CodeInvalidFormBody)
	}
}

// Pins in a DM channel, on the guild channels' routes: either user (a bot too) pins and unpins;
// both get CHANNEL_PINS_UPDATE without guild_id (a bot by DIRECT_MESSAGES); the message is
// pinned in reads; Get Channel Pins and the deprecated Get Pinned Messages list it; someone not
// in the channel gets 10003, an unknown message 10008.
func TestDMPins(t *testing.T) {
	f := guildtest.NewBots(t)
	bob := f.E.User("bob").ID
	gw := guildtest.Dial(t, f.E, "")
	gw.Identify(f.E.App.BotToken, gwire.IntentDirectMessages)
	var dm wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"), map[string]any{"recipient_id": bob.String()}, f.BotHeader()), &dm)
	var m wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"), map[string]any{"content": "remember this"},
		guildtest.Bearer(f.Bob)), &m)
	var created wire.Message
	gw.Until(gwire.EventMessageCreate, &created)
	pins := f.API("/channels/" + dm.ID.String() + "/messages/pins/" + m.ID.String())
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodPut, pins, nil, guildtest.Bearer(f.Bob)).Status)
	var upd map[string]json.RawMessage
	gw.Expect(gwire.OpDispatch, gwire.EventChannelPinsUpdate, &upd)
	assert.NotContains(t, upd, "guild_id")
	assert.JSONEq(t, `"`+dm.ID.String()+`"`, string(upd["channel_id"]))
	assert.NotEqual(t, "null", string(upd["last_pin_timestamp"]))
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodPut, pins, nil, f.BotHeader()).Status, "pinned already")
	gw.Sync() // no second update

	var list wire.ChannelPinsOf[wire.Message]
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()+"/messages/pins"), nil, f.BotHeader()), &list)
	require.Len(t, list.Items, 1)
	assert.Equal(t, m.ID, list.Items[0].Message.ID)
	assert.True(t, list.Items[0].Message.Pinned)
	assert.False(t, list.HasMore)
	var legacy []wire.Message
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()+"/pins"), nil, guildtest.Bearer(f.Bob)), &legacy)
	require.Len(t, legacy, 1)
	guildtest.ExpectAPIError(t, "bad before", guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()+"/messages/pins?before=x"), nil,
		f.BotHeader()), http.StatusBadRequest, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "carol is not in the channel", guildtest.Do(t, http.MethodPut, pins, nil, guildtest.Bearer(f.Carol)),
		http.StatusNotFound, wire.CodeUnknownChannel)
	guildtest.ExpectAPIError(t, "an unknown message", guildtest.Do(t, http.MethodPut, f.API("/channels/"+dm.ID.String()+"/pins/"+dm.ID.String()), nil,
		f.BotHeader()), http.StatusNotFound, wire.CodeUnknownMessage)

	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete, f.API("/channels/"+dm.ID.String()+"/pins/"+m.ID.String()), nil,
		f.BotHeader()).Status)
	gw.Expect(gwire.OpDispatch, gwire.EventChannelPinsUpdate, &upd)
	assert.Equal(t, "null", string(upd["last_pin_timestamp"]))
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+dm.ID.String()+"/messages/pins"), nil, f.BotHeader()), &list)
	assert.Empty(t, list.Items)
}
