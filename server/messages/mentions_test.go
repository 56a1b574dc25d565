package messages_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// mentioned is the ids of a message's mentions.
func mentioned(m wire.GuildMessage) []wire.Snowflake {
	out := []wire.Snowflake{}
	for _, u := range m.Mentions {
		out = append(out, u.ID)
	}
	return out
}

// allowed_mentions decides which of the content's mentions ping, and so are the message's
// mentions; a reply mentions the replied-to author unless allowed_mentions is given without
// replied_user (the platform's default when it is absent); never its own author. A malformed
// allowed_mentions is 400 50035.
func TestAllowedMentions(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	bob, carol := f.E.User("bob").ID, f.E.User("carol").ID
	both := "hi <@" + bob.String() + "> and <@" + carol.String() + ">"
	for _, c := range []struct {
		what    string
		allowed any
		want    []wire.Snowflake
	}{
		{"absent: every mention", nil, []wire.Snowflake{bob, carol}},
		{"parse users", map[string]any{"parse": []string{"users"}}, []wire.Snowflake{bob, carol}},
		{"none", map[string]any{"parse": []string{}}, []wire.Snowflake{}},
		{"bob only", map[string]any{"users": []string{bob.String()}}, []wire.Snowflake{bob}},
		{"roles and everyone only", map[string]any{"parse": []string{"roles", "everyone"}}, []wire.Snowflake{}},
	} {
		body := map[string]any{"content": both}
		if c.allowed != nil {
			body["allowed_mentions"] = c.allowed
		}
		m := f.PostMessage(t, general, body, guildtest.Bearer(f.Alice))
		assert.Equal(t, c.want, mentioned(m), c.what)
	}

	// Replies: to bob's message, and to alice's own.
	bobs := f.PostMessage(t, general, map[string]any{"content": "gg"}, guildtest.Bearer(f.Bob))
	alices := f.PostMessage(t, general, map[string]any{"content": "gg too"}, guildtest.Bearer(f.Alice))
	for _, c := range []struct {
		what    string
		to      wire.Snowflake
		allowed any
		want    []wire.Snowflake
	}{
		{"a reply pings the author", bobs.ID, nil, []wire.Snowflake{bob}},
		{"not with allowed_mentions without replied_user", bobs.ID, map[string]any{"parse": []string{"users"}}, []wire.Snowflake{}},
		{"replied_user false", bobs.ID, map[string]any{"replied_user": false}, []wire.Snowflake{}},
		{"replied_user true", bobs.ID, map[string]any{"parse": []string{}, "replied_user": true}, []wire.Snowflake{bob}},
		{"never its own author", alices.ID, nil, []wire.Snowflake{}},
	} {
		body := map[string]any{"content": "yes", "message_reference": map[string]any{"message_id": c.to}}
		if c.allowed != nil {
			body["allowed_mentions"] = c.allowed
		}
		m := f.PostMessage(t, general, body, guildtest.Bearer(f.Alice))
		assert.Equal(t, c.want, mentioned(m), c.what)
	}

	// An edit reads allowed_mentions again.
	m := f.PostMessage(t, general, map[string]any{"content": both}, guildtest.Bearer(f.Alice))
	var edited wire.GuildMessage
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.MessagesURL(general, m.ID), map[string]any{"content": both + "!",
		"allowed_mentions": map[string]any{"users": []string{carol.String()}}}, guildtest.Bearer(f.Alice)), &edited)
	assert.Equal(t, []wire.Snowflake{carol}, mentioned(edited))

	many := make([]string, 101)
	for i := range many {
		many[i] = bob.String()
	}
	for _, c := range []struct {
		what    string
		allowed any
	}{
		{"not an object", 5},
		{"an unknown kind", map[string]any{"parse": []string{"channels"}}},
		{"a kind twice", map[string]any{"parse": []string{"users", "users"}}},
		{"parse users with users", map[string]any{"parse": []string{"users"}, "users": []string{bob.String()}}},
		{"parse roles with roles", map[string]any{"parse": []string{"roles"}, "roles": []string{bob.String()}}},
		{"101 users", map[string]any{"users": many}},
		{"a user id that is not one", map[string]any{"users": []any{"x"}}},
	} {
		guildtest.ExpectAPIError(t, c.what, guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general),
			map[string]any{"content": "x", "allowed_mentions": c.allowed}, guildtest.Bearer(f.Alice)), http.StatusBadRequest, wire.CodeInvalidFormBody)
	}
}
