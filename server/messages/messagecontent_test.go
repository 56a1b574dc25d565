package messages_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// MESSAGE_CONTENT is a privileged intent: a bot session without it gets guild MESSAGE_CREATE and
// MESSAGE_UPDATE with content, embeds, attachments and components empty, unless the bot wrote
// the message or is mentioned in it; a session with it gets them whole.
func TestMessageContentIntent(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayMessageContentLimited) // the owner turns the intent on (rule LIM-4)
	with := guildtest.Dial(t, f.E, "")
	with.Identify(f.E.App.BotToken, gwire.IntentGuildMessages|gwire.IntentMessageContent)
	without := guildtest.Dial(t, f.E, "")
	without.Identify(f.E.App.BotToken, gwire.IntentGuildMessages)
	general := f.API("/channels/" + f.Channel("general").ID.String() + "/messages")
	post := func(content string, h http.Header) wire.GuildMessage {
		t.Helper()
		var m wire.GuildMessage
		guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, general, map[string]any{"content": content}, h), &m)
		return m
	}
	// read reads a message dispatch, checking the fields the intent governs in its JSON.
	read := func(g *guildtest.Gateway, event string) map[string]json.RawMessage {
		t.Helper()
		var d map[string]json.RawMessage
		g.Expect(gwire.OpDispatch, event, &d)
		for _, k := range []string{"embeds", "attachments", "components"} {
			assert.JSONEq(t, "[]", string(d[k]), "%s: %s", event, k)
		}
		return d
	}
	content := func(d map[string]json.RawMessage) string {
		var s string
		require.NoError(t, json.Unmarshal(d["content"], &s))
		return s
	}

	sent := post("the raid starts at nine", guildtest.Bearer(f.Alice))
	assert.Equal(t, "the raid starts at nine", content(read(with, gwire.EventMessageCreate)))
	d := read(without, gwire.EventMessageCreate)
	assert.Equal(t, "", content(d), "no MESSAGE_CONTENT: no content")
	assert.JSONEq(t, `"`+sent.ID.String()+`"`, string(d["id"]), "the rest of the message is there")
	assert.JSONEq(t, `"alice"`, mustField(t, d["author"], "username"))

	// Edited: the same.
	r := guildtest.SendJSON(t, http.MethodPatch, general+"/"+sent.ID.String(), map[string]any{"content": "nine thirty"}, guildtest.Bearer(f.Alice))
	require.Equal(t, http.StatusOK, r.Status, "edit: %s", r.Body)
	assert.Equal(t, "nine thirty", content(read(with, gwire.EventMessageUpdate)))
	assert.Equal(t, "", content(read(without, gwire.EventMessageUpdate)))

	// Mentioned, or the author: the content comes anyway.
	mention := "ready <@" + f.BotID.String() + ">?"
	post(mention, guildtest.Bearer(f.Alice))
	assert.Equal(t, mention, content(read(with, gwire.EventMessageCreate)))
	assert.Equal(t, mention, content(read(without, gwire.EventMessageCreate)), "the bot is mentioned")
	post("ready", f.BotHeader())
	assert.Equal(t, "ready", content(read(with, gwire.EventMessageCreate)))
	assert.Equal(t, "ready", content(read(without, gwire.EventMessageCreate)), "the bot wrote it")
	with.Sync()
	without.Sync()
}

// mustField returns the raw JSON of one field of an object.
func mustField(t *testing.T, obj json.RawMessage, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj, &m))
	return string(m[name])
}
