package messages_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

func reference(fields ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(fields); i += 2 {
		out[fields[i].(string)] = fields[i+1]
	}
	return out
}

// Replies: a message_reference (type 0 or absent) to a message of the same channel makes a
// message of type 19 (REPLY) carrying message_reference {type 0, message_id, channel_id,
// guild_id} and referenced_message (the whole message replied to), on the POST answer,
// MESSAGE_CREATE, GET and the list; referenced_message is null once the original is deleted.
// An unknown message is 400 50035 MESSAGE_REFERENCE_UNKNOWN_MESSAGE, unless fail_if_not_exists
// is false: then the message goes out plain. Another channel's message cannot be replied to.
func TestReplies(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayMessageContentLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMessages|gwire.IntentMessageContent)
	general, staff := f.Channel("general").ID, f.Channel("staff").ID

	orig := f.PostMessage(t, general, map[string]any{"content": "who is in?"}, guildtest.Bearer(f.Alice))
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)

	wantRef := &wire.MessageReference{Type: wire.MessageReferenceDefault, MessageID: orig.ID, ChannelID: general, GuildID: f.Guild.ID}
	check := func(what string, m wire.GuildMessage) {
		t.Helper()
		assert.Equal(t, wire.MessageTypeReply, m.Type, "%s: type", what)
		assert.Equal(t, "me", m.Content, what)
		assert.Equal(t, wantRef, m.MessageReference, "%s: message_reference", what)
		assert.Empty(t, m.MessageSnapshots, what)
		require.True(t, m.ReferencedMessage.Present, "%s: referenced_message", what)
		ref := m.ReferencedMessage.Message
		require.NotNil(t, ref, "%s: referenced_message", what)
		assert.Equal(t, orig.ID, ref.ID, what)
		assert.Equal(t, "who is in?", ref.Content, what)
		assert.Equal(t, "alice", ref.Author.Username, what)
		assert.Equal(t, orig.Timestamp, ref.Timestamp, what)
		assert.Equal(t, wire.MessageTypeDefault, ref.Type, what)
		assert.Nil(t, ref.MessageReference, what)
	}

	// bob replies with every field of message_reference.
	reply := f.PostMessage(t, general, map[string]any{"content": "me", "message_reference": reference("type", 0,
		"message_id", orig.ID, "channel_id", general, "guild_id", f.Guild.ID, "fail_if_not_exists", true)}, guildtest.Bearer(f.Bob))
	check("POST", reply)
	var created wire.GuildMessage
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate, &created)
	check("MESSAGE_CREATE", created)
	var one wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, reply.ID), nil, guildtest.Bearer(f.Carol)), &one)
	check("GET", one)
	var list []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general)+"?limit=1", nil, guildtest.Bearer(f.Carol)), &list)
	require.Len(t, list, 1)
	check("list", list[0])

	// carol replies with message_id alone, as most libraries send it.
	short := f.PostMessage(t, general, map[string]any{"content": "me", "message_reference": reference("message_id", orig.ID.String())},
		guildtest.Bearer(f.Carol))
	check("message_id only", short)
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)

	// The original is deleted: the reply keeps message_reference; referenced_message is null.
	r := guildtest.Do(t, http.MethodDelete, f.MessagesURL(general, orig.ID), nil, guildtest.Bearer(f.Alice))
	require.Equal(t, http.StatusNoContent, r.Status, "delete: %s", r.Body)
	g.Expect(gwire.OpDispatch, gwire.EventMessageDelete)
	r = guildtest.Do(t, http.MethodGet, f.MessagesURL(general, reply.ID), nil, guildtest.Bearer(f.Carol))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "null", string(guildtest.JSONField(t, r.Body, "referenced_message")), "null once deleted: %s", r.Body)
	var after wire.GuildMessage
	r.JSON(t, &after)
	assert.Equal(t, wantRef, after.MessageReference)
	assert.Equal(t, wire.MessageTypeReply, after.Type)

	// Replying to it now: unknown, unless fail_if_not_exists is false.
	r = guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), map[string]any{"content": "late",
		"message_reference": reference("message_id", orig.ID)}, guildtest.Bearer(f.Bob))
	assert.Equal(t, "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", guildtest.FormError(t, r, "message_reference"))
	r = guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), map[string]any{"content": "late",
		"message_reference": reference("message_id", orig.ID, "fail_if_not_exists", false)}, guildtest.Bearer(f.Bob))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	for _, field := range []string{"message_reference", "referenced_message", "message_snapshots"} {
		assert.Nil(t, guildtest.JSONField(t, r.Body, field), "a plain message has no %s: %s", field, r.Body)
	}
	assert.JSONEq(t, "0", string(guildtest.JSONField(t, r.Body, "type")))
	assert.JSONEq(t, `"late"`, string(guildtest.JSONField(t, r.Body, "content")))
	p := g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	assert.Nil(t, guildtest.JSONField(t, p.D, "message_reference"), "MESSAGE_CREATE of the plain message: %s", p.D)

	// A message of another channel: refused when named, unknown when looked up in this one.
	staffNote := f.PostMessage(t, staff, map[string]any{"content": "staff note"}, guildtest.Bearer(f.Carol))
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	r = guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), map[string]any{"content": "x",
		"message_reference": reference("message_id", staffNote.ID, "channel_id", staff)}, guildtest.Bearer(f.Carol))
	assert.Equal(t, "REPLIES_CANNOT_REFERENCE_OTHER_CHANNEL", guildtest.FormError(t, r, "message_reference"))
	r = guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), map[string]any{"content": "x",
		"message_reference": reference("message_id", staffNote.ID)}, guildtest.Bearer(f.Carol))
	assert.Equal(t, "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", guildtest.FormError(t, r, "message_reference"))
	r = guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), map[string]any{"content": "x",
		"message_reference": reference("message_id", reply.ID, "guild_id", f.Other.ID)}, guildtest.Bearer(f.Carol))
	assert.Equal(t, "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", guildtest.FormError(t, r, "message_reference"), "another guild's id")
	// A reply needs READ_MESSAGE_HISTORY in the channel.
	sealed := archiveGuild(t, f).Channels[1].ID
	note := f.PostMessage(t, sealed, map[string]any{"content": "note"}, guildtest.Bearer(f.Alice))
	guildtest.ExpectAPIError(t, "reply without READ_MESSAGE_HISTORY", guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(sealed),
		map[string]any{"content": "x", "message_reference": reference("message_id", note.ID)}, guildtest.Bearer(f.Bob)), 403, wire.CodeMissingPermissions)
	f.PostMessage(t, sealed, map[string]any{"content": "x", "message_reference": reference("message_id", note.ID)}, guildtest.Bearer(f.Alice))
	// A reply needs content as any message.
	guildtest.ExpectAPIError(t, "reply without content", guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general),
		map[string]any{"message_reference": reference("message_id", reply.ID)}, guildtest.Bearer(f.Carol)), 400, 50006)
	g.Sync() // nothing for the refused ones
}

// archiveGuild makes a guild of alice's with bob (not the bot), and text channels "open" and
// "sealed", where @everyone may not READ_MESSAGE_HISTORY.
func archiveGuild(t *testing.T, f *guildtest.Bots) wire.DevGuild {
	t.Helper()
	g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Archive", OwnerID: f.E.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: f.E.User("bob").ID}},
		Channel: []wire.GuildChannelSpec{{Name: "open", Type: wire.ChannelGuildText},
			{Name: "sealed", Type: wire.ChannelGuildText, Position: 1, Overwrites: []wire.OverwriteSpec{
				{Everyone: true, Deny: wire.Permissions(guildaccess.PermReadMessageHistory)}}}}})
	require.NoError(t, err)
	return g
}

// snapshotOf is the message_snapshots entry a forward of m carries (rule FWD-1).
func snapshotOf(m wire.GuildMessage) wire.SnapshotMessage {
	users := []wire.User{}
	for _, men := range m.Mentions {
		users = append(users, men.User)
	}
	return wire.SnapshotMessage{Type: m.Type, Content: m.Content, Embeds: []struct{}{}, Attachments: []wire.Attachment{},
		Timestamp: m.Timestamp, EditedTimestamp: m.EditedTimestamp, Flags: m.Flags, Mentions: users, MentionRoles: []string{}}
}

// Rule FWD-1: message_reference type 1 forwards a message, from the same channel, another one or
// another guild's, that the caller may view and read: the forward has no content of its own,
// the flag HAS_SNAPSHOT, message_reference {type 1, message_id, channel_id, guild_id} and
// message_snapshots [{message: {type, content, embeds, attachments, timestamp, edited_timestamp,
// flags, mentions, mention_roles}}] copied when forwarded; later edits of the original do not
// reach it.
func TestForward(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayMessageContentLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMessages|gwire.IntentMessageContent)
	general, staff := f.Channel("general").ID, f.Channel("staff").ID
	forwardOf := func(src wire.GuildMessage, extra ...any) map[string]any {
		return map[string]any{"message_reference": reference(append([]any{"type", 1, "message_id", src.ID,
			"channel_id", src.ChannelID}, extra...)...)}
	}
	check := func(what string, fwd, src wire.GuildMessage) {
		t.Helper()
		assert.Equal(t, wire.MessageTypeDefault, fwd.Type, "FWD-1 %s: type", what)
		assert.Equal(t, "", fwd.Content, "FWD-1 %s: no content of its own", what)
		assert.Equal(t, wire.MessageFlagHasSnapshot, fwd.Flags, "FWD-1 %s: HAS_SNAPSHOT", what)
		assert.Equal(t, &wire.MessageReference{Type: wire.MessageReferenceForward, MessageID: src.ID, ChannelID: src.ChannelID,
			GuildID: src.GuildID}, fwd.MessageReference, "FWD-1 %s: message_reference", what)
		assert.False(t, fwd.ReferencedMessage.Present, "FWD-1 %s: no referenced_message", what)
		require.Len(t, fwd.MessageSnapshots, 1, "FWD-1 %s", what)
		assert.Equal(t, snapshotOf(src), fwd.MessageSnapshots[0].Message, "FWD-1 %s: snapshot", what)
	}

	// Within the channel: carol forwards alice's message, which mentions bob.
	src := f.PostMessage(t, general, map[string]any{"content": "look <@" + f.E.User("bob").ID.String() + ">"}, guildtest.Bearer(f.Alice))
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	require.Len(t, src.Mentions, 1)
	r := guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), forwardOf(src), guildtest.Bearer(f.Carol))
	require.Equal(t, http.StatusOK, r.Status, "FWD-1: %s", r.Body)
	var fwd wire.GuildMessage
	r.JSON(t, &fwd)
	check("POST", fwd, src)
	var snapshots []struct {
		Message map[string]json.RawMessage `json:"message"`
	}
	require.NoError(t, json.Unmarshal(guildtest.JSONField(t, r.Body, "message_snapshots"), &snapshots))
	require.Len(t, snapshots, 1)
	var keys []string
	for k := range snapshots[0].Message {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"type", "content", "embeds", "attachments", "timestamp", "edited_timestamp", "flags",
		"mentions", "mention_roles"}, keys, "FWD-1: the snapshot's fields")
	var created wire.GuildMessage
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate, &created)
	check("MESSAGE_CREATE", created, src)
	var one wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, fwd.ID), nil, guildtest.Bearer(f.Bob)), &one)
	check("GET", one, src)

	// Edited later: the forward keeps what it copied; the forward itself takes no content.
	var edited wire.GuildMessage
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.MessagesURL(general, src.ID), map[string]any{"content": "never mind"}, guildtest.Bearer(f.Alice)), &edited)
	g.Expect(gwire.OpDispatch, gwire.EventMessageUpdate)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, fwd.ID), nil, guildtest.Bearer(f.Bob)), &one)
	check("after the original's edit", one, src)
	r = guildtest.SendJSON(t, http.MethodPatch, f.MessagesURL(general, fwd.ID), map[string]any{"content": "x"}, guildtest.Bearer(f.Carol))
	assert.Equal(t, "MESSAGE_FORWARD_CONTENT_NOT_ALLOWED", guildtest.FormError(t, r, "content"), "FWD-1: editing content into a forward")

	// Across channels: from staff (carol may view it) into general; the edited original's
	// snapshot carries its edited_timestamp.
	staffNote := f.PostMessage(t, staff, map[string]any{"content": "staff note"}, guildtest.Bearer(f.Carol))
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	check("across channels", f.PostMessage(t, general, forwardOf(staffNote), guildtest.Bearer(f.Carol)), staffNote)
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	require.NotNil(t, edited.EditedTimestamp)
	check("edited original", f.PostMessage(t, general, forwardOf(edited), guildtest.Bearer(f.Bob)), edited)
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	// A forward of a forward carries the original's snapshot.
	again := f.PostMessage(t, staff, forwardOf(fwd), guildtest.Bearer(f.Carol))
	g.Expect(gwire.OpDispatch, gwire.EventMessageCreate)
	require.Len(t, again.MessageSnapshots, 1)
	assert.Equal(t, snapshotOf(src), again.MessageSnapshots[0].Message, "FWD-1: a forward of a forward")

	// Another guild, where the caller is a member: bob forwards into it; a channel of it that
	// denies READ_MESSAGE_HISTORY cannot be forwarded from.
	archive := archiveGuild(t, f)
	open, sealed := archive.Channels[0].ID, archive.Channels[1].ID
	check("across guilds", f.PostMessage(t, open, forwardOf(edited), guildtest.Bearer(f.Bob)), edited) // the bot is not in Archive
	secret := f.PostMessage(t, sealed, map[string]any{"content": "sealed"}, guildtest.Bearer(f.Alice))

	msgs := f.MessagesURL(general)
	for _, tc := range []struct {
		what         string
		body         map[string]any
		header       http.Header
		status, code int
	}{
		{"a channel the caller cannot view", forwardOf(staffNote), guildtest.Bearer(f.Bob), 403, wire.CodeMissingAccess},
		{"a channel without READ_MESSAGE_HISTORY", forwardOf(secret), guildtest.Bearer(f.Bob), 403, wire.CodeMissingPermissions},
		{"an unknown channel", forwardOf(wire.GuildMessage{ID: src.ID, ChannelID: 42}), guildtest.Bearer(f.Bob), 404, wire.CodeUnknownChannel},
	} {
		guildtest.ExpectAPIError(t, "FWD-1: "+tc.what, guildtest.SendJSON(t, http.MethodPost, msgs, tc.body, tc.header), tc.status, tc.code)
	}
	for _, tc := range []struct {
		what, path, code string
		body             map[string]any
	}{
		{"an unknown message", "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
			forwardOf(wire.GuildMessage{ID: 42, ChannelID: general})},
		{"an unknown message, fail_if_not_exists false", "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
			forwardOf(wire.GuildMessage{ID: 42, ChannelID: general}, "fail_if_not_exists", false)},
		{"another guild's id", "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", forwardOf(src, "guild_id", archive.ID)},
		{"content", "content", "MESSAGE_FORWARD_CONTENT_NOT_ALLOWED", map[string]any{"content": "see this",
			"message_reference": reference("type", 1, "message_id", src.ID)}},
	} {
		assert.Equal(t, tc.code, guildtest.FormError(t, guildtest.SendJSON(t, http.MethodPost, msgs, tc.body, guildtest.Bearer(f.Carol)), tc.path), "FWD-1: %s", tc.what)
	}
	g.Sync() // nothing for the refused ones
}

// Rule FWD-1: forwarding needs the app to read the message's content (the MESSAGE_CONTENT rule
// of gateway dispatches, with the application's flags for the intent): a bot whose app has
// neither GATEWAY_MESSAGE_CONTENT nor GATEWAY_MESSAGE_CONTENT_LIMITED gets 403 160014 with the
// spec's text for another's message, and may forward its own messages and those that mention
// it; with either flag it may forward any. A user may always.
func TestForwardNeedsContentAccess(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	other := f.PostMessage(t, general, map[string]any{"content": "secret plan"}, guildtest.Bearer(f.Alice))
	mentioning := f.PostMessage(t, general, map[string]any{"content": "ping <@" + f.BotID.String() + ">"}, guildtest.Bearer(f.Alice))
	own := f.PostMessage(t, general, map[string]any{"content": "bot note"}, f.BotHeader())
	// carol's forward of other: its snapshot holds other's content, which the bot may not read.
	carols := f.PostMessage(t, general, map[string]any{"message_reference": reference("type", 1, "message_id", other.ID)}, guildtest.Bearer(f.Carol))
	forward := func(src wire.GuildMessage, h http.Header) guildtest.Resp {
		return guildtest.SendJSON(t, http.MethodPost, f.MessagesURL(general), map[string]any{"message_reference": reference("type", 1,
			"message_id", src.ID)}, h)
	}
	for _, tc := range []struct {
		name   string
		flags  uint64
		others bool // may forward alice's and carol's messages
	}{
		{"no flags", 0, false},
		{"another privileged intent only", wire.AppFlagGatewayGuildMembers | wire.AppFlagGatewayPresence, false},
		{"GATEWAY_MESSAGE_CONTENT_LIMITED", wire.AppFlagGatewayMessageContentLimited, true},
		{"GATEWAY_MESSAGE_CONTENT", wire.AppFlagGatewayMessageContent, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			guildtest.SetAppFlags(t, f.E, tc.flags)
			for _, src := range []wire.GuildMessage{other, carols} {
				r := forward(src, f.BotHeader())
				if !tc.others {
					guildtest.ExpectAPIError(t, "FWD-1", r, http.StatusForbidden, 160014)
					assert.Equal(t, "You cannot forward a message whose content you cannot read.", r.APIError(t).Message, "FWD-1")
					continue
				}
				var fwd wire.GuildMessage
				guildtest.OK(t, r, &fwd)
				require.Len(t, fwd.MessageSnapshots, 1, "FWD-1")
				assert.Equal(t, "secret plan", fwd.MessageSnapshots[0].Message.Content, "FWD-1")
			}
			for _, src := range []wire.GuildMessage{own, mentioning} {
				var fwd wire.GuildMessage
				guildtest.OK(t, forward(src, f.BotHeader()), &fwd) // FWD-1: the bot may read these
				require.Len(t, fwd.MessageSnapshots, 1, "FWD-1")
				assert.Equal(t, src.Content, fwd.MessageSnapshots[0].Message.Content, "FWD-1")
			}
		})
	}
	guildtest.SetAppFlags(t, f.E, 0)
	guildtest.OK(t, forward(other, guildtest.Bearer(f.Bob)), nil) // FWD-1: a user reads every message they may view
}

// contentView is what a reader sees of a message's content: its own, its referenced message's
// and its snapshot's.
type contentView struct{ Content, Referenced, Snapshot string }

func viewOf(m wire.GuildMessage) contentView {
	v := contentView{Content: m.Content}
	if m.ReferencedMessage.Message != nil {
		v.Referenced = m.ReferencedMessage.Message.Content
	}
	if len(m.MessageSnapshots) > 0 {
		v.Snapshot = m.MessageSnapshots[0].Message.Content
	}
	return v
}

// The MESSAGE_CONTENT rule on REST reads: GET /channels/{id}/messages and
// /channels/{id}/messages/{mid} by a bot whose app may not read message content return messages
// with content, embeds, attachments and components empty (and snapshot content), except those
// the bot wrote or is mentioned in; a reply's referenced_message follows its own author and
// mentions. A bot session without the MESSAGE_CONTENT intent gets the same from MESSAGE_CREATE:
// both paths use one rule. With GATEWAY_MESSAGE_CONTENT(_LIMITED), and for users, everything.
func TestMessageContentREST(t *testing.T) {
	f := guildtest.NewBots(t)
	gw := guildtest.Dial(t, f.E, "")
	gw.Identify(f.E.App.BotToken, gwire.IntentGuildMessages)
	general := f.Channel("general").ID

	plain := f.PostMessage(t, general, map[string]any{"content": "hello all"}, guildtest.Bearer(f.Alice))
	mention := f.PostMessage(t, general, map[string]any{"content": "hi <@" + f.BotID.String() + ">"}, guildtest.Bearer(f.Alice))
	own := f.PostMessage(t, general, map[string]any{"content": "bot here"}, f.BotHeader())
	// A reply to the bot that does not ping it (allowed_mentions without replied_user).
	toBot := f.PostMessage(t, general, map[string]any{"content": "thanks bot", "allowed_mentions": map[string]any{"parse": []string{"users"}},
		"message_reference": reference("message_id", own.ID)}, guildtest.Bearer(f.Bob))
	toAlice := f.PostMessage(t, general, map[string]any{"content": "hi alice",
		"message_reference": reference("message_id", plain.ID)}, f.BotHeader())
	fwd := f.PostMessage(t, general, map[string]any{"message_reference": reference("type", 1, "message_id", plain.ID)}, guildtest.Bearer(f.Carol))
	sent := []wire.GuildMessage{plain, mention, own, toBot, toAlice, fwd}

	whole := []contentView{{"hello all", "", ""}, {mention.Content, "", ""}, {"bot here", "", ""},
		{"thanks bot", "bot here", ""}, {"hi alice", "hello all", ""}, {"", "", "hello all"}}
	redacted := []contentView{{"", "", ""}, {mention.Content, "", ""}, {"bot here", "", ""},
		{"", "bot here", ""}, {"hi alice", "", ""}, {"", "", ""}}

	// The gateway, without MESSAGE_CONTENT.
	var dispatched []contentView
	for range sent {
		var m wire.GuildMessage
		p := gw.Expect(gwire.OpDispatch, gwire.EventMessageCreate, &m)
		for _, k := range []string{"embeds", "attachments", "components"} {
			assert.JSONEq(t, "[]", string(guildtest.JSONField(t, p.D, k)), "%s: %s", k, p.D)
		}
		dispatched = append(dispatched, viewOf(m))
	}
	assert.Equal(t, redacted, dispatched, "MESSAGE_CREATE without MESSAGE_CONTENT")

	// read returns what GET by id and the list give the caller, requiring them to agree.
	read := func(t *testing.T, h http.Header) []contentView {
		t.Helper()
		r := guildtest.Do(t, http.MethodGet, f.MessagesURL(general), nil, h)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var raw []map[string]json.RawMessage
		r.JSON(t, &raw)
		for _, m := range raw {
			for _, k := range []string{"embeds", "attachments", "components"} {
				assert.JSONEq(t, "[]", string(m[k]), k)
			}
		}
		var list []wire.GuildMessage
		r.JSON(t, &list)
		require.Len(t, list, len(sent))
		var out []contentView
		for i, m := range sent {
			var one wire.GuildMessage
			guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, m.ID), nil, h), &one)
			v := viewOf(one)
			assert.Equal(t, v, viewOf(list[len(list)-1-i]), "GET and list agree on %s", m.ID)
			out = append(out, v)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		flags  uint64
		header http.Header
		want   []contentView
	}{
		{"bot without the privilege", 0, f.BotHeader(), redacted},
		{"bot with another privileged intent", wire.AppFlagGatewayGuildMembers, f.BotHeader(), redacted},
		{"bot with GATEWAY_MESSAGE_CONTENT_LIMITED", wire.AppFlagGatewayMessageContentLimited, f.BotHeader(), whole},
		{"bot with GATEWAY_MESSAGE_CONTENT", wire.AppFlagGatewayMessageContent, f.BotHeader(), whole},
		{"user", 0, guildtest.Bearer(f.Bob), whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			guildtest.SetAppFlags(t, f.E, tc.flags)
			got := read(t, tc.header)
			assert.Equal(t, tc.want, got)
			if tc.want[0].Content == "" {
				assert.Equal(t, dispatched, got, "REST and the gateway agree")
			}
		})
	}
	gw.Sync()
}

// A malformed message_reference is a 400 50035 naming its field, never a 5xx nor a message
// sent: not an object, no message_id, a bad snowflake, a type other than 0 and 1, a
// fail_if_not_exists that is not a boolean, and a forward (FWD-1) with content.
func TestMalformedMessageReference(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	msg := f.PostMessage(t, general, map[string]any{"content": "hi"}, guildtest.Bearer(f.Alice))
	id := msg.ID.String()
	for _, tc := range []struct{ body, path, code string }{
		{`{"content": "a", "message_reference": 5}`, "message_reference", "MODEL_TYPE_CONVERT"},
		{`{"content": "a", "message_reference": "` + id + `"}`, "message_reference", "MODEL_TYPE_CONVERT"},
		{`{"content": "a", "message_reference": []}`, "message_reference", "MODEL_TYPE_CONVERT"},
		{`{"content": "a", "message_reference": {}}`, "message_reference.message_id", "BASE_TYPE_REQUIRED"},
		{`{"content": "a", "message_reference": {"message_id": "x"}}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "-` + id + `"}}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "99999999999999999999"}}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "channel_id": 1e30}}`, "message_reference.channel_id", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "guild_id": [1]}}`, "message_reference.guild_id", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "type": 7}}`, "message_reference.type", "ENUM_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "type": "forward"}}`, "message_reference.type", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "type": 1.5}}`, "message_reference.type", "NUMBER_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "fail_if_not_exists": "no"}}`, "message_reference.fail_if_not_exists", "BOOLEAN_TYPE_COERCE"},
		{`{"content": "a", "message_reference": {"message_id": "` + id + `", "type": 1}}`, "content", "MESSAGE_FORWARD_CONTENT_NOT_ALLOWED"}, // FWD-1
	} {
		for _, h := range []http.Header{guildtest.Bearer(f.Bob), f.BotHeader()} {
			h.Set("Content-Type", "application/json")
			r := guildtest.Do(t, http.MethodPost, f.MessagesURL(general), strings.NewReader(tc.body), h)
			assert.Equal(t, tc.code, guildtest.FormError(t, r, tc.path), "%s", tc.body)
		}
	}
	var list []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general), nil, guildtest.Bearer(f.Bob)), &list)
	assert.Len(t, list, 1, "nothing was sent")
}
