package lobbies_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	gwire "sdkpp/wire/gateway"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/lobbies"
	"sdkpp/server/scopes"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Rule LOB-1: PUT /lobbies creates the application's lobby for a secret or joins it, in one call.
func TestLOB1CreateOrJoinBySecret(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.user("alice", e.app), e.user("bob", e.app), e.user("carol", e.app)
	created := e.join(alice, "match-42", map[string]any{"lobby_metadata": map[string]string{"map": "dust"},
		"member_metadata": map[string]string{"team": "red"}, "idle_timeout_seconds": 600})
	require.Equal(t, e.app.ID.String(), created.ApplicationID, "created: %+v", created)
	require.Equal(t, "dust", created.Metadata["map"], "created: %+v", created)
	require.Len(t, created.Members, 1, "created: %+v", created)
	require.Equal(t, alice.sid(), created.Members[0].ID, "created: %+v", created)
	require.Equal(t, "red", created.Members[0].Metadata["team"], "created: %+v", created)
	ev := e.rec.take()
	require.Len(t, ev, 1, "creation events: %+v", ev)
	require.Equal(t, gwire.EventLobbyCreate, ev[0].event, "creation events: %+v", ev)
	require.Equal(t, []uint64{alice.id}, ev[0].users, "creation events: %+v", ev)
	require.Equal(t, uint64(e.app.ID), ev[0].app, "creation events: %+v", ev)
	joined := e.join(bob, "match-42", nil)
	require.Equal(t, created.ID, joined.ID, "bob joined another lobby: %+v", joined)
	require.Len(t, joined.Members, 2, "bob joined another lobby: %+v", joined)
	require.Equal(t, "dust", joined.Metadata["map"], "bob joined another lobby: %+v", joined)
	ev = e.rec.take()
	require.Len(t, ev, 2, "join events: %+v", ev)
	require.Equal(t, gwire.EventLobbyCreate, ev[0].event, "join events: %+v", ev)
	require.Equal(t, []uint64{bob.id}, ev[0].users, "join events: %+v", ev)
	require.Equal(t, gwire.EventLobbyMemberAdd, ev[1].event, "join events: %+v", ev)
	require.Equal(t, []uint64{alice.id, bob.id}, ev[1].users, "join events: %+v", ev)
	require.Equal(t, bob.sid(), ev[1].data.(wire.LobbyMemberEvent).Member.ID.String(), "join events: %+v", ev)
	third := e.join(carol, "match-42", map[string]any{"lobby_metadata": map[string]string{"map": "nuke"}})
	require.Equal(t, created.ID, third.ID, "three users, one lobby: %+v", third)
	require.Len(t, third.Members, 3, "three users, one lobby: %+v", third)
	require.Equal(t, "nuke", third.Metadata["map"], "three users, one lobby: %+v", third)
	// Joining again updates only the caller's member metadata.
	again := e.join(alice, "match-42", map[string]any{"member_metadata": map[string]string{"team": "blue"}})
	require.Len(t, again.Members, 3, "rejoin: %+v", again)
	require.Equal(t, "blue", again.member(alice.sid()).Metadata["team"], "rejoin: %+v", again)
	// The same secret in another application is another lobby.
	dave := e.user("dave", e.other)
	l := e.join(dave, "match-42", nil)
	require.NotEqual(t, created.ID, l.ID, "other application's lobby: %+v", l)
	require.Equal(t, e.other.ID.String(), l.ApplicationID, "other application's lobby: %+v", l)
	require.Len(t, l.Members, 1, "other application's lobby: %+v", l)
	// And that lobby is unknown to the first application's users.
	e.do("GET", "/lobbies/"+created.ID, dave.auth, nil).Fails(t, 404, wire.CodeUnknownLobby, "")

	// Bad requests.
	e.do("PUT", "/lobbies", alice.auth, map[string]any{}).Fails(t, 400, wire.CodeInvalidFormBody, "secret")
	e.do("PUT", "/lobbies", alice.auth, map[string]any{"secret": ""}).Fails(t, 400, wire.CodeInvalidFormBody, "secret")
	e.do("PUT", "/lobbies", alice.auth, map[string]any{"secret": strings.Repeat("s", 251)}).Fails(t, 400, wire.CodeInvalidFormBody, "secret")
	e.join(alice, strings.Repeat("é", 250), nil) // 250 characters, 500 bytes
	e.do("PUT", "/lobbies", alice.auth, map[string]any{"secret": "x", "idle_timeout_seconds": 4}).
		Fails(t, 400, wire.CodeInvalidFormBody, "idle_timeout_seconds")
	e.do("PUT", "/lobbies", e.appBot, map[string]any{"secret": "x"}).Fails(t, 401, 0, "")
	e.do("PUT", "/lobbies", "", map[string]any{"secret": "x"}).Fails(t, 401, 0, "")
	noLobbies := e.userWithScopes("erin", e.app, []string{scopes.Identify})
	e.do("PUT", "/lobbies", noLobbies.auth, map[string]any{"secret": "x"}).Fails(t, 403, wire.CodeMissingAccess, "")
}

// Rule LOB-2: POST /lobbies/{id}/messages sends a message as the authenticated member; rule
// WH-2: LOBBY_MESSAGE_CREATE is queued to the application's webhook.
func TestLOB2SendMessageAndWH2Webhook(t *testing.T) {
	e := newEnv(t)
	alice, bob, mallory := e.user("alice", e.app), e.user("bob", e.app), e.user("mallory", e.app)
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	e.rec.take()
	kicks := e.kicks.Load()
	var m message
	e.do("POST", "/lobbies/"+l.ID+"/messages", alice.auth, map[string]any{"content": "gg", "metadata": map[string]string{"emote": "wave"},
		"flags": wire.MessageFlagSuppressNotifications}).OK(t, 200, &m)
	require.NotEmpty(t, m.ID, "message: %+v", m)
	require.Equal(t, 0, m.Type, "message: %+v", m)
	require.Equal(t, "gg", m.Content, "message: %+v", m)
	require.Equal(t, l.ID, m.LobbyID, "message: %+v", m)
	require.Equal(t, l.ID, m.ChannelID, "message: %+v", m)
	require.Equal(t, alice.sid(), m.Author.ID, "message: %+v", m)
	require.Equal(t, e.app.ID.String(), m.ApplicationID, "message: %+v", m)
	require.Equal(t, "wave", m.Metadata["emote"], "message: %+v", m)
	require.Equal(t, wire.MessageFlagSuppressNotifications, m.Flags, "message: %+v", m)
	require.Nil(t, m.ModerationMetadata, "message: %+v", m)
	require.Nil(t, m.LobbyMember.AdditionalName, "message: %+v", m)
	require.NotEmpty(t, m.Timestamp, "message: %+v", m)
	ev := e.rec.take()
	// The members get it, the author last (the others are waiting for it).
	require.Len(t, ev, 1, "realtime events: %+v", ev)
	require.Equal(t, gwire.EventLobbyMessageCreate, ev[0].event, "realtime events: %+v", ev)
	require.Equal(t, []uint64{bob.id, alice.id}, ev[0].users, "realtime events: %+v", ev)
	require.Equal(t, uint64(e.app.ID), ev[0].app, "realtime events: %+v", ev)
	require.Equal(t, m.ID, messageOf(t, ev[0].data).ID.String(), "realtime events: %+v", ev)
	// Rule WH-2: the webhook carries the message object.
	hooks := e.webhooks(wire.EventLobbyMessageCreate)
	require.Len(t, hooks, 1, "webhooks: %+v (kicks %d)", hooks, e.kicks.Load()-kicks)
	require.Equal(t, kicks+1, e.kicks.Load(), "webhooks: %+v (kicks %d)", hooks, e.kicks.Load()-kicks)
	require.Equal(t, e.app.ID, hooks[0].ApplicationID, "webhooks: %+v (kicks %d)", hooks, e.kicks.Load()-kicks)
	require.Equal(t, wire.EventLobbyMessageCreate, hooks[0].Event.Type, "webhooks: %+v (kicks %d)", hooks, e.kicks.Load()-kicks)
	var data message
	require.NoError(t, json.Unmarshal(hooks[0].Event.Data, &data), "webhook data: %s", hooks[0].Event.Data)
	require.Equal(t, m.ID, data.ID, "webhook data: %s", hooks[0].Event.Data)
	require.Equal(t, "gg", data.Content, "webhook data: %s", hooks[0].Event.Data)
	require.Equal(t, l.ID, data.LobbyID, "webhook data: %s", hooks[0].Event.Data)

	before := e.snapshot()
	path := "/lobbies/" + l.ID + "/messages"
	e.do("POST", path, mallory.auth, map[string]any{"content": "hi"}).Fails(t, 403, wire.CodeMissingAccess, "")
	e.do("POST", path, alice.auth, map[string]any{"content": strings.Repeat("x", 2001)}).Fails(t, 400, wire.CodeInvalidFormBody, "content")
	e.do("POST", path, alice.auth, map[string]any{"content": ""}).Fails(t, 400, wire.CodeInvalidFormBody, "content")
	e.do("POST", path, alice.auth, map[string]any{"content": "  \n"}).Fails(t, 400, wire.CodeInvalidFormBody, "content")
	e.do("POST", path, alice.auth, map[string]any{}).Fails(t, 400, wire.CodeInvalidFormBody, "content")
	e.do("POST", path, alice.auth, map[string]any{"content": "x", "metadata": map[string]string{"k": strings.Repeat("v", 1000)}}).
		Fails(t, 400, wire.CodeInvalidFormBody, "metadata")
	e.do("POST", path, alice.auth, map[string]any{"content": "x", "flags": 1}).Fails(t, 400, wire.CodeInvalidFormBody, "flags")
	e.do("POST", "/lobbies/123/messages", alice.auth, map[string]any{"content": "x"}).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("POST", "/lobbies/abc/messages", alice.auth, map[string]any{"content": "x"}).Fails(t, 400, wire.CodeInvalidFormBody, "lobby_id")
	e.do("POST", path, e.appBot, map[string]any{"content": "x"}).Fails(t, 401, 0, "")
	require.Equal(t, before, e.snapshot(), "a refused message changed something")
	require.Len(t, e.webhooks(wire.EventLobbyMessageCreate), 1, "a refused message changed something")
	require.Empty(t, e.rec.take(), "a refused message changed something")
	e.send(bob, l.ID, strings.Repeat("ü", 2000)) // 2000 characters are fine
}

// Rule LOB-3: GET /lobbies/{id}/messages returns at most 200 most recent messages, newest
// first, to members only.
func TestLOB3MessageHistory(t *testing.T) {
	e := newEnv(t)
	alice, bob, mallory := e.user("alice", e.app), e.user("bob", e.app), e.user("mallory", e.app)
	l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": lobbies.MaxIdleTimeoutSeconds})
	e.join(bob, "s", nil)
	var sent []string
	for i := range 250 {
		sender := alice
		if i%2 == 1 {
			sender = bob
		}
		sent = append(sent, e.send(sender, l.ID, "m"+strconv.Itoa(i)).ID)
	}
	path := "/lobbies/" + l.ID + "/messages"
	check := func(query string, auth string, want int) {
		t.Helper()
		var got []message
		e.do("GET", path+query, auth, nil).OK(t, 200, &got)
		require.Len(t, got, want, "%s: %d messages, want %d", query, len(got), want)
		for i, m := range got { // newest first
			require.Equal(t, sent[249-i], m.ID, "%s: message %d is %s %q", query, i, m.ID, m.Content)
			require.Equal(t, "m"+strconv.Itoa(249-i), m.Content, "%s: message %d is %s %q", query, i, m.ID, m.Content)
		}
	}
	check("?limit=200", alice.auth, 200)
	check("", bob.auth, 50)
	check("?limit=1", alice.auth, 1)
	check("?limit=200", e.appBot, 200) // the application's backend reads too
	for _, bad := range []string{"0", "201", "-1", "abc", "1.5", ""} {
		e.do("GET", path+"?limit="+bad, alice.auth, nil).Fails(t, 400, wire.CodeInvalidFormBody, "limit")
	}
	e.do("GET", path, mallory.auth, nil).Fails(t, 403, wire.CodeMissingAccess, "")
	e.do("GET", path, "Bot "+e.other.BotToken, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("GET", "/lobbies/1/messages", alice.auth, nil).Fails(t, 404, wire.CodeUnknownLobby, "")

	// Rule LOB-3 with after: pages of at most 200 of the oldest messages above the id, newest
	// first; a client walks forward through everything it missed.
	var paged []string
	for after := "0"; ; {
		var page []message
		e.do("GET", path+"?limit=200&after="+after, bob.auth, nil).OK(t, 200, &page)
		for i := len(page) - 1; i >= 0; i-- {
			paged = append(paged, page[i].ID)
		}
		if len(page) < 200 {
			break
		}
		after = page[0].ID
	}
	require.True(t, slices.Equal(paged, sent), "paging with after: %d messages, want the %d sent in order", len(paged), len(sent))
	var tail []message
	e.do("GET", path+"?limit=2&after="+sent[100], alice.auth, nil).OK(t, 200, &tail)
	require.Len(t, tail, 2, "after %s limit 2: %+v", sent[100], tail)
	require.Equal(t, sent[102], tail[0].ID, "after %s limit 2: %+v", sent[100], tail)
	require.Equal(t, sent[101], tail[1].ID, "after %s limit 2: %+v", sent[100], tail)
	e.do("GET", path+"?after="+sent[249], alice.auth, nil).OK(t, 200, &tail)
	require.Empty(t, tail, "after the newest: %d messages", len(tail))
	for _, bad := range []string{"abc", "-1", "1.5", "", "99999999999999999999"} {
		e.do("GET", path+"?after="+bad, alice.auth, nil).Fails(t, 400, wire.CodeInvalidFormBody, "after")
	}
	e.do("GET", path+"?after=1", mallory.auth, nil).Fails(t, 403, wire.CodeMissingAccess, "")

	// History reaches back 72 hours.
	e.clock.Advance(lobbies.HistoryWindow + time.Minute)
	e.send(alice, l.ID, "later")
	var got []message
	e.do("GET", path+"?limit=200", bob.auth, nil).OK(t, 200, &got)
	require.Len(t, got, 1, "after 72 hours: %d messages", len(got))
	require.Equal(t, "later", got[0].Content, "after 72 hours: %d messages", len(got))
}

// Rule LOB-4: bulk member operations, at most 25, all or nothing.
func TestLOB4BulkMembers(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol, dave := e.user("alice", e.app), e.user("bob", e.app), e.user("carol", e.app), e.user("dave", e.app)
	var l lobby
	e.do("POST", "/lobbies", e.appBot, map[string]any{"metadata": map[string]string{"mode": "duel"},
		"members": []map[string]any{{"id": alice.sid()}, {"id": bob.id, "flags": 1}}}).OK(t, 200, &l)
	require.Len(t, l.Members, 2, "created: %+v", l)
	require.Equal(t, wire.LobbyMemberCanLinkLobby, l.member(bob.sid()).Flags, "created: %+v", l)
	require.Equal(t, "duel", l.Metadata["mode"], "created: %+v", l)
	ev := e.rec.take()
	require.Len(t, ev, 1, "creation events: %+v", ev)
	require.Equal(t, gwire.EventLobbyCreate, ev[0].event, "creation events: %+v", ev)
	require.Equal(t, []uint64{alice.id, bob.id}, ev[0].users, "creation events: %+v", ev)
	bulk := "/lobbies/" + l.ID + "/members/bulk"
	var upserted []member
	e.do("POST", bulk, e.appBot, []map[string]any{
		{"id": carol.sid(), "metadata": map[string]string{"role": "medic"}},
		{"id": bob.sid(), "metadata": map[string]string{"role": "tank"}, "additional_name": "Sir Bob"},
		{"id": alice.sid(), "remove_member": true},
		{"id": dave.sid(), "remove_member": true}, // not a member: fine
	}).OK(t, 200, &upserted)
	require.Len(t, upserted, 2, "upserted: %+v", upserted)
	require.Equal(t, carol.sid(), upserted[0].ID, "upserted: %+v", upserted)
	require.Equal(t, bob.sid(), upserted[1].ID, "upserted: %+v", upserted)
	require.Equal(t, "tank", upserted[1].Metadata["role"], "upserted: %+v", upserted)
	require.Equal(t, 1, upserted[1].Flags, "upserted: %+v", upserted)
	require.Equal(t, "Sir Bob", *upserted[1].AdditionalName, "upserted: %+v", upserted)
	ev = e.rec.take()
	kinds := []string{}
	for _, x := range ev {
		kinds = append(kinds, x.event)
	}
	want := []string{gwire.EventLobbyCreate, gwire.EventLobbyMemberRemove, gwire.EventLobbyMemberAdd, gwire.EventLobbyMemberUpdate}
	require.True(t, slices.Equal(kinds, want), "bulk events: %+v", ev)
	require.Equal(t, []uint64{carol.id}, ev[0].users, "bulk events: %+v", ev)
	require.Equal(t, []uint64{bob.id, carol.id, alice.id}, ev[1].users, "bulk events: %+v", ev)
	require.Equal(t, []uint64{bob.id, carol.id}, ev[2].users, "bulk events: %+v", ev)
	var now lobby
	e.do("GET", "/lobbies/"+l.ID, e.appBot, nil).OK(t, 200, &now)
	require.Len(t, now.Members, 2, "after bulk: %+v", now)
	require.Nil(t, now.member(alice.sid()), "after bulk: %+v", now)
	require.Equal(t, "medic", now.member(carol.sid()).Metadata["role"], "after bulk: %+v", now)

	// 26 or 0 operations, a non-array, a bad id: 50035; an unknown user: 404; nothing applied.
	before := e.snapshot()
	ops := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": dave.sid()}
		}
		return out
	}
	e.do("POST", bulk, e.appBot, ops(26)).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("POST", bulk, e.appBot, ops(0)).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("POST", bulk, e.appBot, map[string]any{"id": dave.sid()}).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("POST", bulk, e.appBot, []any{map[string]any{"id": dave.sid()}, map[string]any{"id": "abc"}}).Fails(t, 400, wire.CodeInvalidFormBody, "1.id")
	e.do("POST", bulk, e.appBot, []any{map[string]any{"id": dave.sid()}, map[string]any{}}).Fails(t, 400, wire.CodeInvalidFormBody, "1.id")
	e.do("POST", bulk, e.appBot, []any{map[string]any{"id": dave.sid(), "flags": 2}}).Fails(t, 400, wire.CodeInvalidFormBody, "0.flags")
	e.do("POST", bulk, e.appBot, []any{map[string]any{"id": dave.sid(), "remove_member": "yes"}}).Fails(t, 400, wire.CodeInvalidFormBody, "0.remove_member")
	e.do("POST", bulk, e.appBot, []any{
		map[string]any{"id": dave.sid()}, map[string]any{"id": bob.sid(), "remove_member": true}, map[string]any{"id": "99999"},
	}).Fails(t, 404, wire.CodeUnknownUser, "")
	e.do("POST", bulk, e.appBot, []any{map[string]any{"id": e.app.BotUserID}}).Fails(t, 404, wire.CodeUnknownUser, "")
	e.do("POST", bulk, alice.auth, ops(1)).Fails(t, 401, 0, "")
	e.do("POST", "/lobbies/1/members/bulk", e.appBot, ops(1)).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("POST", bulk, "Bot "+e.other.BotToken, ops(1)).Fails(t, 404, wire.CodeUnknownLobby, "")
	require.Equal(t, before, e.snapshot(), "a refused bulk request changed something (rule LOB-4: all or nothing)")
	require.Empty(t, e.rec.take(), "a refused bulk request changed something (rule LOB-4: all or nothing)")
	// 25 operations are fine.
	ids := e.rawUsers(25)
	list := make([]map[string]any, 25)
	for i, id := range ids {
		list[i] = map[string]any{"id": strconv.FormatUint(id, 10)}
	}
	e.do("POST", bulk, e.appBot, list).OK(t, 200, &upserted)
	require.Len(t, upserted, 25, "25 operations: %d upserted", len(upserted))
}

// Limits: 1000 members per lobby, 100 lobbies per user per game, metadata of 1000 characters.
func TestLimits(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice", e.app)
	var l lobby
	e.do("POST", "/lobbies", e.appBot, map[string]any{}).OK(t, 200, &l)
	bulk := "/lobbies/" + l.ID + "/members/bulk"
	ids := e.rawUsers(lobbies.MaxMembersPerLobby + 1)
	for i := 0; i < lobbies.MaxMembersPerLobby; i += 25 {
		var ops []map[string]any
		for _, id := range ids[i : i+25] {
			ops = append(ops, map[string]any{"id": id})
		}
		e.do("POST", bulk, e.appBot, ops).OK(t, 200, nil)
	}
	before := e.snapshot()
	e.do("POST", bulk, e.appBot, []map[string]any{{"id": ids[0], "metadata": map[string]string{"a": "b"}}, {"id": ids[1000]}}).
		Fails(t, 400, wire.CodeMaxLobbyMembers, "")
	e.do("PUT", "/lobbies/"+l.ID+"/members/"+strconv.FormatUint(ids[1000], 10), e.appBot, map[string]any{}).
		Fails(t, 400, wire.CodeMaxLobbyMembers, "")
	require.Equal(t, before, e.snapshot(), "the 1001st member changed something")

	// 100 lobbies per user per game.
	for i := range lobbies.MaxLobbiesPerUser {
		e.join(alice, "lobby-"+strconv.Itoa(i), nil)
	}
	before = e.snapshot()
	e.do("PUT", "/lobbies", alice.auth, map[string]any{"secret": "one-too-many"}).Fails(t, 400, wire.CodeMaxLobbies, "")
	var server lobby
	e.do("POST", "/lobbies", e.appBot, map[string]any{"members": []map[string]any{{"id": alice.sid()}}}).OK(t, 200, &server)
	require.Empty(t, server.Members, "the 101st lobby was joined: %+v", server)
	e.do("PUT", "/lobbies/"+server.ID+"/members/"+alice.sid(), e.appBot, map[string]any{}).Fails(t, 400, wire.CodeMaxLobbies, "")
	var up []member
	e.do("POST", "/lobbies/"+server.ID+"/members/bulk", e.appBot, []map[string]any{{"id": alice.sid()}}).OK(t, 200, &up)
	require.Empty(t, up, "bulk must leave the user out silently: %+v", up)
	e.join(alice, "lobby-7", nil) // an existing membership is no new lobby
	// Another game's lobbies do not count.
	e.join(player{id: alice.id, auth: e.token(alice.id, e.other, scopes.Expand([]string{scopes.SocialLayer}))}, "lobby-x", nil)

	// Metadata: 1000 characters, keys and values together.
	fits := map[string]string{"k": strings.Repeat("v", 999)}
	over := map[string]string{"k": strings.Repeat("v", 1000)}
	bob := e.user("bob", e.app)
	e.join(bob, "meta", map[string]any{"lobby_metadata": fits, "member_metadata": fits})
	e.do("PUT", "/lobbies", bob.auth, map[string]any{"secret": "meta2", "lobby_metadata": over}).Fails(t, 400, wire.CodeInvalidFormBody, "lobby_metadata")
	e.do("PUT", "/lobbies", bob.auth, map[string]any{"secret": "meta2", "member_metadata": over}).Fails(t, 400, wire.CodeInvalidFormBody, "member_metadata")
	e.do("POST", "/lobbies", e.appBot, map[string]any{"metadata": over}).Fails(t, 400, wire.CodeInvalidFormBody, "metadata")
	e.do("POST", "/lobbies", e.appBot, map[string]any{"members": []map[string]any{{"id": bob.sid(), "metadata": over}}}).
		Fails(t, 400, wire.CodeInvalidFormBody, "members.0.metadata")
	e.do("PATCH", "/lobbies/"+server.ID, e.appBot, map[string]any{"metadata": over}).Fails(t, 400, wire.CodeInvalidFormBody, "metadata")
	e.do("PUT", "/lobbies/"+server.ID+"/members/"+bob.sid(), e.appBot, map[string]any{"metadata": over}).Fails(t, 400, wire.CodeInvalidFormBody, "metadata")
	e.do("POST", "/lobbies", e.appBot, map[string]any{"members": make([]map[string]any, 26)}).Fails(t, 400, wire.CodeInvalidFormBody, "members")
	for _, idle := range []int{4, 604801} {
		e.do("POST", "/lobbies", e.appBot, map[string]any{"idle_timeout_seconds": idle}).Fails(t, 400, wire.CodeInvalidFormBody, "idle_timeout_seconds")
	}
	require.NotEqual(t, before, e.snapshot(), "the snapshot does not see changes")
}

// Rule MSG-2: additional_name is set only by the application's backend, and shows on messages.
func TestMSG2AdditionalNameOnlyServerSide(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", map[string]any{"additional_name": "Queen Alice"}) // ignored: a client cannot set it
	require.Nil(t, l.Members[0].AdditionalName, "a Bearer request set additional_name: %+v", l.Members[0])
	m := e.send(alice, l.ID, "hi")
	require.Nil(t, m.LobbyMember.AdditionalName, "a message shows an additional name nobody set: %+v", m)
	var raw message
	e.do("POST", "/lobbies/"+l.ID+"/messages", alice.auth, map[string]any{"content": "x", "lobby_member": map[string]string{"additional_name": "Fake"},
		"additional_name": "Fake"}).OK(t, 200, &raw)
	require.Nil(t, raw.LobbyMember.AdditionalName, "a message set its own additional name: %+v", raw)
	// The Bearer token cannot use the backend's member route.
	e.do("PUT", "/lobbies/"+l.ID+"/members/"+alice.sid(), alice.auth, map[string]any{"additional_name": "Queen"}).Fails(t, 401, 0, "")

	// The backend sets it; later messages carry it, earlier ones keep what they were sent with.
	var mem member
	path := "/lobbies/" + l.ID + "/members/" + alice.sid()
	e.do("PUT", path, e.appBot, map[string]any{"additional_name": "Captain"}).OK(t, 200, &mem)
	require.Equal(t, alice.sid(), mem.ID, "member: %+v", mem)
	require.NotNil(t, mem.AdditionalName, "member: %+v", mem)
	require.Equal(t, "Captain", *mem.AdditionalName, "member: %+v", mem)
	ev := e.rec.take()
	require.Equal(t, gwire.EventLobbyMemberUpdate, ev[len(ev)-1].event, "events: %+v", ev)
	m2 := e.send(alice, l.ID, "aye")
	require.NotNil(t, m2.LobbyMember.AdditionalName, "message: %+v", m2)
	require.Equal(t, "Captain", *m2.LobbyMember.AdditionalName, "message: %+v", m2)
	// A Bearer rejoin keeps it.
	again := e.join(alice, "s", map[string]any{"member_metadata": map[string]string{"a": "b"}})
	require.Equal(t, "Captain", *again.member(alice.sid()).AdditionalName, "rejoin lost the additional name: %+v", again)
	var list []message
	e.do("GET", "/lobbies/"+l.ID+"/messages", bob.auth, nil).Fails(t, 403, wire.CodeMissingAccess, "")
	e.do("GET", "/lobbies/"+l.ID+"/messages", alice.auth, nil).OK(t, 200, &list)
	require.Len(t, list, 3, "history: %+v", list)
	require.Equal(t, "Captain", *list[0].LobbyMember.AdditionalName, "history: %+v", list)
	require.Nil(t, list[2].LobbyMember.AdditionalName, "history: %+v", list)
	// Bulk sets it too; bad lengths are refused; null clears it.
	e.do("POST", "/lobbies/"+l.ID+"/members/bulk", e.appBot, []map[string]any{{"id": bob.sid(), "additional_name": "Bobby"}}).OK(t, 200, nil)
	m = e.send(bob, l.ID, "yo")
	require.Equal(t, "Bobby", *m.LobbyMember.AdditionalName, "bulk additional name: %+v", m)
	e.do("PUT", path, e.appBot, map[string]any{"additional_name": strings.Repeat("n", 81)}).Fails(t, 400, wire.CodeInvalidFormBody, "additional_name")
	e.do("PUT", path, e.appBot, map[string]any{"additional_name": ""}).Fails(t, 400, wire.CodeInvalidFormBody, "additional_name")
	e.do("PUT", path, e.appBot, map[string]any{"additional_name": 5}).Fails(t, 400, wire.CodeInvalidFormBody, "additional_name")
	e.do("PUT", path, e.appBot, map[string]any{"additional_name": nil}).OK(t, 200, &mem)
	require.Nil(t, mem.AdditionalName, "null did not clear: %+v", mem)
}

// Rules MSG-3 and MODR-1: the backend sets moderation metadata (at most 5 keys) on a lobby
// message; it shows on the message object and reaches the members as LOBBY_MESSAGE_UPDATE.
func TestMSG3MODR1ModerationMetadata(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	m := e.send(bob, l.ID, "you are bad")
	e.rec.take()
	path := "/lobbies/" + l.ID + "/messages/" + m.ID + "/moderation-metadata"
	e.do("PUT", path, e.appBot, map[string]string{"action": "hide", "reason": "toxicity"}).OK(t, 204, nil)
	var list []message
	e.do("GET", "/lobbies/"+l.ID+"/messages", alice.auth, nil).OK(t, 200, &list)
	require.Len(t, list, 1, "moderation metadata not on the message: %+v", list)
	require.Equal(t, "hide", list[0].ModerationMetadata["action"], "moderation metadata not on the message: %+v", list)
	require.Equal(t, "toxicity", list[0].ModerationMetadata["reason"], "moderation metadata not on the message: %+v", list)
	ev := e.rec.take()
	require.Len(t, ev, 1, "update event: %+v", ev)
	require.Equal(t, gwire.EventLobbyMessageUpdate, ev[0].event, "update event: %+v", ev)
	require.Equal(t, []uint64{alice.id, bob.id}, ev[0].users, "update event: %+v", ev)
	require.Equal(t, "hide", ev[0].data.(wire.LobbyMessage).ModerationMetadata["action"], "update event: %+v", ev)
	// A metadata-only update sends no webhook, as on the platform (rule WH-2 covers creation).
	n := len(e.webhooks(wire.EventLobbyMessageUpdate))
	require.Equal(t, 0, n, "%d LOBBY_MESSAGE_UPDATE webhooks", n)
	// Replaced, not merged; {} clears.
	e.do("PUT", path, e.appBot, map[string]string{"action": "show"}).OK(t, 204, nil)
	e.do("GET", "/lobbies/"+l.ID+"/messages", alice.auth, nil).OK(t, 200, &list)
	require.Len(t, list[0].ModerationMetadata, 1, "replace: %+v", list[0].ModerationMetadata)
	require.Equal(t, "show", list[0].ModerationMetadata["action"], "replace: %+v", list[0].ModerationMetadata)
	other := e.join(alice, "other", nil)
	before := e.snapshot()
	six := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}
	e.do("PUT", path, e.appBot, six).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("PUT", path, e.appBot, map[string]string{"r": strings.Repeat("x", 2001)}).Fails(t, 400, wire.CodeInvalidFormBody, "r")
	e.do("PUT", path, e.appBot, map[string]string{strings.Repeat("k", 1025): "x"}).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("PUT", path, e.appBot, map[string]any{"a": 1}).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("PUT", path, e.appBot, "null").Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("PUT", path, e.appBot, `["a"]`).Fails(t, 400, wire.CodeInvalidFormBody, "")
	e.do("PUT", path, alice.auth, map[string]string{"a": "b"}).Fails(t, 401, 0, "")
	e.do("PUT", "/lobbies/"+l.ID+"/messages/1/moderation-metadata", e.appBot, map[string]string{}).Fails(t, 404, wire.CodeUnknownMessage, "")
	e.do("PUT", "/lobbies/"+other.ID+"/messages/"+m.ID+"/moderation-metadata", e.appBot, map[string]string{}).Fails(t, 404, wire.CodeUnknownMessage, "")
	e.do("PUT", path, "Bot "+e.other.BotToken, map[string]string{}).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.rec.take()
	require.Equal(t, before, e.snapshot(), "a refused moderation request changed something")
	five := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", strings.Repeat("k", 1024): strings.Repeat("v", 2000)}
	e.do("PUT", path, e.appBot, five).OK(t, 204, nil)
	e.do("PUT", path, e.appBot, map[string]string{}).OK(t, 204, nil)
	e.do("GET", "/lobbies/"+l.ID+"/messages", alice.auth, nil).OK(t, 200, &list)
	require.Nil(t, list[0].ModerationMetadata, "{} did not clear: %+v", list[0].ModerationMetadata)
}

// A lobby expires after its idle timeout without activity (joins, messages), by the service's
// clock; the janitor deletes it and tells its members. The test runs in a synctest bubble, so
// synctest.Wait marks the moment the janitor has done what the clock's move asked of it.
func TestIdleTimeout(t *testing.T) {
	sqliteOnly(t, inBubble)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.svc.Start()
		defer e.svc.Close()
		alice, bob := e.user("alice", e.app), e.user("bob", e.app)
		l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": 60})
		e.clock.Advance(50 * time.Second)
		e.send(alice, l.ID, "still here") // activity restarts the timer
		e.clock.Advance(50 * time.Second)
		e.join(bob, "s", nil)
		e.clock.Advance(59 * time.Second)
		synctest.Wait()
		e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).OK(t, 200, nil)
		e.rec.take()
		e.clock.Advance(time.Second)
		// Unknown at once, whatever the janitor does.
		e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
		e.do("POST", "/lobbies/"+l.ID+"/messages", alice.auth, map[string]any{"content": "x"}).Fails(t, 404, wire.CodeUnknownLobby, "")
		// The janitor, woken by the clock, deletes it and sends LOBBY_DELETE to both members.
		synctest.Wait()
		ev := e.rec.take()
		require.Len(t, ev, 1, "events after expiry: %+v", ev)
		assert.Equal(t, gwire.EventLobbyDelete, ev[0].event, "events after expiry: %+v", ev)
		assert.Equal(t, []uint64{alice.id, bob.id}, ev[0].users, "events after expiry: %+v", ev)
		assert.Equal(t, l.ID, ev[0].data.(wire.LobbyDeleted).ID.String(), "events after expiry: %+v", ev)
		_, ok, _ := e.st.NextLobbyExpiry(t.Context())
		require.False(t, ok, "the expired lobby is still stored")
		// The secret now makes a new lobby; the default timeout is 5 minutes.
		l2 := e.join(alice, "s", nil)
		require.NotEqual(t, l.ID, l2.ID, "an expired lobby was joined")
		e.clock.Advance(lobbies.DefaultIdleTimeout - time.Second)
		e.do("GET", "/lobbies/"+l2.ID, alice.auth, nil).OK(t, 200, nil)
		n, err := e.svc.ExpireIdle(t.Context())
		require.NoError(t, err, "ExpireIdle early: %d", n)
		require.Equal(t, 0, n, "ExpireIdle early: %d", n)
		// KeepAlive (the gateway's connected members) counts as activity.
		require.NoError(t, e.svc.KeepAlive(t.Context(), uint64(e.app.ID), alice.id))
		e.clock.Advance(lobbies.DefaultIdleTimeout - time.Second)
		e.do("GET", "/lobbies/"+l2.ID, alice.auth, nil).OK(t, 200, nil)
		e.clock.Advance(time.Second)
		e.do("GET", "/lobbies/"+l2.ID, alice.auth, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
	})
}

// Messages alone keep a lobby alive although they do not write its row (the store reads its
// newest message): a lobby whose members only send messages, more often than its idle timeout,
// lives for many idle periods, while one whose messages stopped expires its idle timeout after
// the last. The janitor carries the first lobby's stored expiry forward instead of waking at once
// again (a janitor that did would keep synctest.Wait from returning).
func TestMessagesKeepLobbyAlive(t *testing.T) {
	sqliteOnly(t, inBubble)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.svc.Start()
		defer e.svc.Close()
		alice, bob := e.user("alice", e.app), e.user("bob", e.app)
		chatty := e.join(alice, "chatty", map[string]any{"idle_timeout_seconds": 60})
		quiet := e.join(bob, "quiet", map[string]any{"idle_timeout_seconds": 60})
		e.clock.Advance(30 * time.Second)
		e.send(bob, quiet.ID, "the last word") // quiet's timer runs out at 90 s
		e.rec.take()
		for elapsed := 30 * time.Second; elapsed < 5*time.Minute; elapsed += 40 * time.Second {
			e.send(alice, chatty.ID, "still here")
			e.clock.Advance(40 * time.Second)
			synctest.Wait()
			e.do("GET", "/lobbies/"+chatty.ID, alice.auth, nil).OK(t, 200, nil)
			for _, ev := range e.rec.take() {
				if ev.event == gwire.EventLobbyDelete {
					require.Equal(t, quiet.ID, ev.data.(wire.LobbyDeleted).ID.String(), "deleted at %v", elapsed)
					require.Equal(t, []uint64{bob.id}, ev.users)
				}
			}
			if elapsed+40*time.Second >= 90*time.Second {
				e.do("GET", "/lobbies/"+quiet.ID, bob.auth, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
			} else {
				e.do("GET", "/lobbies/"+quiet.ID, bob.auth, nil).OK(t, 200, nil)
			}
			next, ok, err := e.st.NextLobbyExpiry(t.Context())
			require.NoError(t, err)
			require.True(t, ok, "at %v no lobby is left", elapsed)
			require.True(t, next.After(e.clock.Now()), "at %v the janitor left a lobby due at %v", elapsed, next)
		}
		id := func(s string) uint64 {
			n, err := strconv.ParseUint(s, 10, 64)
			require.NoError(t, err)
			return n
		}
		l, err := e.st.GetLobby(t.Context(), id(chatty.ID))
		require.NoError(t, err, "the lobby kept alive by messages")
		require.True(t, l.ExpiresAt.After(e.clock.Now()), "expires %v", l.ExpiresAt)
		_, err = e.st.GetLobby(t.Context(), id(quiet.ID))
		require.ErrorIs(t, err, store.ErrNotFound, "the lobby whose messages stopped is still stored")
		// Once its messages stop too, the first expires its idle timeout after the last.
		e.clock.Advance(20 * time.Second)
		synctest.Wait()
		e.rec.take()
		_, err = e.st.GetLobby(t.Context(), id(chatty.ID))
		require.ErrorIs(t, err, store.ErrNotFound, "the lobby is still stored a minute after its last message")
		_, ok, _ := e.st.NextLobbyExpiry(t.Context())
		require.False(t, ok, "a lobby is left")
	})
}

// An expired idle lobby met by PUT /lobbies before the janitor ran is replaced in that request.
func TestExpiredLobbyReplacedOnJoin(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice", e.app)
	l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": 5})
	e.rec.take()
	e.clock.Advance(5 * time.Second)
	l2 := e.join(alice, "s", nil)
	ev := e.rec.take()
	require.NotEqual(t, l.ID, l2.ID, "replace: %s -> %s, events %+v", l.ID, l2.ID, ev)
	require.Len(t, ev, 2, "replace: %s -> %s, events %+v", l.ID, l2.ID, ev)
	require.Equal(t, gwire.EventLobbyDelete, ev[0].event, "replace: %s -> %s, events %+v", l.ID, l2.ID, ev)
	require.Equal(t, gwire.EventLobbyCreate, ev[1].event, "replace: %s -> %s, events %+v", l.ID, l2.ID, ev)
}

// A lobby secret joins for 30 days; afterwards the lobby lives on and the secret makes a new one.
func TestSecretExpiresAfter30Days(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": lobbies.MaxIdleTimeoutSeconds})
	for elapsed := time.Duration(0); elapsed <= lobbies.SecretLifetime; elapsed += 6 * 24 * time.Hour {
		e.clock.Advance(6 * 24 * time.Hour)
		e.send(alice, l.ID, "keeping it alive")
	}
	l2 := e.join(bob, "s", nil)
	require.NotEqual(t, l.ID, l2.ID, "joined with an expired secret: %+v", l2)
	require.Len(t, l2.Members, 1, "joined with an expired secret: %+v", l2)
	var old lobby
	e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).OK(t, 200, &old)
	require.Len(t, old.Members, 1, "the old lobby: %+v", old)
	// The member of the old lobby can still leave it.
	e.do("DELETE", "/lobbies/"+l.ID+"/members/@me", alice.auth, nil).OK(t, 204, nil)
}

// GET, PATCH and DELETE of a lobby, member add and remove, and leave, with their events.
func TestLobbyLifecycle(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.user("alice", e.app), e.user("bob", e.app), e.user("carol", e.app)
	var l lobby
	e.do("POST", "/lobbies", e.appBot, map[string]any{"members": []map[string]any{{"id": alice.sid()}, {"id": bob.sid()}},
		"idle_timeout_seconds": 3600}).OK(t, 200, &l)
	id := l.ID
	e.do("GET", "/lobbies/"+id, carol.auth, nil).Fails(t, 403, wire.CodeMissingAccess, "")
	e.do("GET", "/lobbies/"+id, "Bot "+e.other.BotToken, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("GET", "/lobbies/"+id, "Bearer nope", nil).Fails(t, 401, 0, "")
	e.rec.take()

	var patched lobby
	e.do("PATCH", "/lobbies/"+id, e.appBot, map[string]any{"metadata": map[string]string{"round": "2"}}).OK(t, 200, &patched)
	require.Equal(t, "2", patched.Metadata["round"], "patched: %+v", patched)
	require.Len(t, patched.Members, 2, "patched: %+v", patched)
	ev := e.rec.take()
	require.Len(t, ev, 1, "update events: %+v", ev)
	require.Equal(t, gwire.EventLobbyUpdate, ev[0].event, "update events: %+v", ev)
	require.Equal(t, []uint64{alice.id, bob.id}, ev[0].users, "update events: %+v", ev)
	// PATCH members replaces the member list.
	e.do("PATCH", "/lobbies/"+id, e.appBot, map[string]any{"members": []map[string]any{{"id": bob.sid()}, {"id": carol.sid()}}}).OK(t, 200, &patched)
	require.Len(t, patched.Members, 2, "members replaced: %+v", patched)
	require.Nil(t, patched.member(alice.sid()), "members replaced: %+v", patched)
	require.NotNil(t, patched.member(carol.sid()), "members replaced: %+v", patched)
	require.Equal(t, "2", patched.Metadata["round"], "members replaced: %+v", patched)
	e.do("PATCH", "/lobbies/"+id, e.appBot, map[string]any{"metadata": nil}).OK(t, 200, &patched)
	require.Nil(t, patched.Metadata, "null metadata: %+v", patched.Metadata)
	e.rec.take()

	// Add and remove a member.
	var m member
	e.do("PUT", "/lobbies/"+id+"/members/"+alice.sid(), e.appBot, map[string]any{"metadata": map[string]string{"k": "v"}, "flags": 1}).OK(t, 200, &m)
	require.Equal(t, alice.sid(), m.ID, "put member: %+v", m)
	require.Equal(t, 1, m.Flags, "put member: %+v", m)
	require.Equal(t, "v", m.Metadata["k"], "put member: %+v", m)
	e.do("PUT", "/lobbies/"+id+"/members/"+alice.sid(), e.appBot, map[string]any{}).OK(t, 200, &m)
	require.Equal(t, 1, m.Flags, "an empty PUT must keep the fields: %+v", m)
	require.Equal(t, "v", m.Metadata["k"], "an empty PUT must keep the fields: %+v", m)
	e.do("PUT", "/lobbies/"+id+"/members/99999", e.appBot, map[string]any{}).Fails(t, 404, wire.CodeUnknownUser, "")
	e.do("PUT", "/lobbies/"+id+"/members/x", e.appBot, map[string]any{}).Fails(t, 400, wire.CodeInvalidFormBody, "user_id")
	e.do("PUT", "/lobbies/"+id+"/members/"+alice.sid(), e.appBot, map[string]any{"flags": 3}).Fails(t, 400, wire.CodeInvalidFormBody, "flags")
	other := e.user("olga", e.other)
	e.do("PUT", "/lobbies/"+id+"/members/"+other.sid(), "Bot "+e.other.BotToken, map[string]any{}).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("DELETE", "/lobbies/"+id+"/members/"+bob.sid(), e.appBot, nil).OK(t, 204, nil)
	e.do("DELETE", "/lobbies/"+id+"/members/"+bob.sid(), e.appBot, nil).OK(t, 204, nil)
	e.do("DELETE", "/lobbies/1/members/"+bob.sid(), e.appBot, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
	ev = e.rec.take()
	var kinds []string
	for _, x := range ev {
		kinds = append(kinds, x.event)
	}
	// join order; equal times (frozen clock): by id
	require.Equal(t, []string{gwire.EventLobbyCreate, gwire.EventLobbyMemberAdd, gwire.EventLobbyMemberRemove}, kinds, "member events: %+v", ev)
	require.Equal(t, []uint64{alice.id, carol.id, bob.id}, ev[2].users, "member events: %+v", ev)
	// A lobby made by the backend cannot be left by its members; one made by PUT /lobbies can.
	e.do("DELETE", "/lobbies/"+id+"/members/@me", alice.auth, nil).Fails(t, 403, wire.CodeMissingPermissions, "")
	e.do("DELETE", "/lobbies/"+id+"/members/@me", bob.auth, nil).OK(t, 204, nil) // not a member: fine
	mine := e.join(bob, "mine", nil)
	e.join(carol, "mine", nil)
	e.rec.take()
	e.do("DELETE", "/lobbies/"+mine.ID+"/members/@me", bob.auth, nil).OK(t, 204, nil)
	ev = e.rec.take()
	require.Len(t, ev, 1, "leave events: %+v", ev)
	require.Equal(t, gwire.EventLobbyMemberRemove, ev[0].event, "leave events: %+v", ev)
	require.Equal(t, []uint64{carol.id, bob.id}, ev[0].users, "leave events: %+v", ev)
	e.do("GET", "/lobbies/"+mine.ID, bob.auth, nil).Fails(t, 403, wire.CodeMissingAccess, "")
	e.do("DELETE", "/lobbies/"+mine.ID+"/members/@me", e.appBot, nil).Fails(t, 401, 0, "")

	// Delete: another application's delete does nothing; the owner's deletes; again is fine.
	e.do("DELETE", "/lobbies/"+id, "Bot "+e.other.BotToken, nil).OK(t, 204, nil)
	e.do("GET", "/lobbies/"+id, e.appBot, nil).OK(t, 200, nil)
	e.rec.take()
	e.do("DELETE", "/lobbies/"+id, e.appBot, nil).OK(t, 204, nil)
	ev = e.rec.take()
	require.Len(t, ev, 1, "delete events: %+v", ev)
	require.Equal(t, gwire.EventLobbyDelete, ev[0].event, "delete events: %+v", ev)
	require.Equal(t, []uint64{alice.id, carol.id}, ev[0].users, "delete events: %+v", ev)
	e.do("GET", "/lobbies/"+id, e.appBot, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("DELETE", "/lobbies/"+id, e.appBot, nil).OK(t, 204, nil)
	e.do("PATCH", "/lobbies/"+id, e.appBot, map[string]any{}).Fails(t, 404, wire.CodeUnknownLobby, "")
	e.do("DELETE", "/lobbies/x", e.appBot, nil).Fails(t, 400, wire.CodeInvalidFormBody, "lobby_id")
	e.do("DELETE", "/lobbies/"+id, "", nil).Fails(t, 401, 0, "")
}

// Malformed JSON, wrong types and wrong content types on every endpoint: a 4xx with the
// platform's error body, never a 5xx, and nothing stored.
func TestMalformedInputEveryEndpoint(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice", e.app)
	l := e.join(alice, "s", nil)
	m := e.send(alice, l.ID, "hi")
	lp := "/lobbies/" + l.ID
	routes := []struct{ method, path, auth string }{
		{"PUT", "/lobbies", alice.auth},
		{"POST", "/lobbies", e.appBot},
		{"PATCH", lp, e.appBot},
		{"PUT", lp + "/members/" + alice.sid(), e.appBot},
		{"POST", lp + "/members/bulk", e.appBot},
		{"POST", lp + "/messages", alice.auth},
		{"PUT", lp + "/messages/" + m.ID + "/moderation-metadata", e.appBot},
	}
	type badBody struct {
		body  string
		field string // the field a 50035 names ("-" for 50109, malformed JSON)
	}
	// Bodies that are wrong for every route above.
	common := []badBody{{"", "-"}, {"{", "-"}, {`{"a":`, "-"}, {"\xff\xfe", "-"}, {`{"a": 1} x`, "-"}, {"nul", "-"}}
	// Wrong types per route, with the field the error must name.
	typed := map[string][]badBody{
		"PUT /lobbies": {{`[]`, ""}, {`"s"`, ""}, {`{"secret": 5}`, "secret"}, {`{"secret": ["a"]}`, "secret"},
			{`{"secret": "s", "idle_timeout_seconds": "60"}`, "idle_timeout_seconds"}, {`{"secret": "s", "idle_timeout_seconds": 60.5}`, "idle_timeout_seconds"},
			{`{"secret": "s", "lobby_metadata": "x"}`, "lobby_metadata"}, {`{"secret": "s", "lobby_metadata": {"a": 1}}`, "lobby_metadata"},
			{`{"secret": "s", "member_metadata": [1]}`, "member_metadata"}, {`{"secret": null}`, "secret"}},
		"POST /lobbies": {{`[]`, ""}, {`{"members": {}}`, "members"}, {`{"members": [{"id": "x"}]}`, "members.0.id"},
			{`{"members": [{"id": 1.5}]}`, "members.0.id"}, {`{"members": [7]}`, "members.0"}, {`{"members": [{"id": "1", "flags": "1"}]}`, "members.0.flags"},
			{`{"metadata": 5}`, "metadata"}, {`{"idle_timeout_seconds": true}`, "idle_timeout_seconds"}},
		"PATCH": {{`5`, ""}, {`{"metadata": []}`, "metadata"}, {`{"idle_timeout_seconds": "x"}`, "idle_timeout_seconds"},
			{`{"members": [{"metadata": {}}]}`, "members.0.id"}},
		"PUT member": {{`[]`, ""}, {`{"flags": -1}`, "flags"}, {`{"flags": "x"}`, "flags"}, {`{"metadata": {"k": null}}`, "metadata"},
			{`{"additional_name": {}}`, "additional_name"}},
		"bulk": {{`{}`, ""}, {`null`, ""}, {`[null]`, "0.id"}, {`[{"id": true}]`, "0.id"}, {`[{"id": "1", "remove_member": 1}]`, "0.remove_member"},
			{`[{"id": "1", "metadata": "m"}]`, "0.metadata"}},
		"message": {{`[]`, ""}, {`{"content": 5}`, "content"}, {`{"content": "x", "metadata": {"a": 1}}`, "metadata"},
			{`{"content": "x", "flags": "4"}`, "flags"}, {`{"content": "x", "flags": 1e400}`, "flags"}},
		"moderation": {{`[]`, ""}, {`"x"`, ""}, {`{"a": {"b": "c"}}`, ""}, {`{"a": true}`, ""}},
	}
	keys := []string{"PUT /lobbies", "POST /lobbies", "PATCH", "PUT member", "bulk", "message", "moderation"}
	before := e.snapshot()
	for i, r := range routes {
		cases := append(append([]badBody{}, common...), typed[keys[i]]...)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s %s %q", r.method, keys[i], c.body), func(t *testing.T) {
				res := e.doType(r.method, r.path, r.auth, "application/json", c.body)
				if c.field == "-" {
					res.Fails(t, 400, wire.CodeInvalidJSON, "")
				} else {
					res.Fails(t, 400, wire.CodeInvalidFormBody, c.field)
				}
			})
		}
		// Not JSON at all: 415, the platform's error body.
		e.doType(r.method, r.path, r.auth, "text/plain", `{"secret": "s", "content": "x"}`).Fails(t, 415, wire.CodeInvalidJSON, "")
		e.doType(r.method, r.path, r.auth, "", nil).Fails(t, 415, wire.CodeInvalidJSON, "")
		// Over a megabyte: 413.
		big := `{"content": "` + strings.Repeat("x", 1<<20) + `"}`
		res := e.do(r.method, r.path, r.auth, big)
		require.Equal(t, 413, res.Status, "%s %s: a body over 1 MiB: HTTP %d", r.method, r.path, res.Status)
	}
	require.Equal(t, before, e.snapshot(), "a refused request stored something")
	// Routes without a body, with bad ids and queries.
	e.do("GET", "/lobbies/0", alice.auth, nil).Fails(t, 400, wire.CodeInvalidFormBody, "lobby_id")
	e.do("GET", "/lobbies/18446744073709551616", alice.auth, nil).Fails(t, 400, wire.CodeInvalidFormBody, "lobby_id")
	e.do("GET", lp+"/messages?limit=1&limit=x", alice.auth, nil).OK(t, 200, nil) // the first value counts
	e.do("PUT", lp+"/messages/x/moderation-metadata", e.appBot, map[string]string{}).Fails(t, 400, wire.CodeInvalidFormBody, "message_id")
	e.do("DELETE", lp+"/members/%20", e.appBot, nil).Fails(t, 400, wire.CodeInvalidFormBody, "user_id")
}

// Rule LOB-1 under concurrency: players joining one secret at the same moment end in one lobby.
func TestLOB1ConcurrentJoinsMakeOneLobby(t *testing.T) {
	e := newEnv(t)
	const n = 12
	players := make([]player, n)
	for i := range players {
		players[i] = e.user("p"+strconv.Itoa(i), e.app)
	}
	ids := make([]string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("PUT", "/lobbies", strings.NewReader(`{"secret": "rush"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", p.auth)
			rec := httptest.NewRecorder()
			e.mux.ServeHTTP(rec, req)
			var l lobby
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &l) != nil {
				errs <- fmt.Errorf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
				return
			}
			ids[i] = l.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var l lobby
	e.do("GET", "/lobbies/"+ids[0], e.appBot, nil).OK(t, 200, &l)
	require.Len(t, l.Members, n, "lobbies %v, members %d", ids, len(l.Members))
	require.False(t, slices.ContainsFunc(ids, func(id string) bool { return id != ids[0] }), "lobbies %v, members %d", ids, len(l.Members))
}

// A lobby with a connected member is not idle: it outlives its idle timeout, and expires once the
// timeout has passed after the last member disconnected (KeepAlive at the disconnection).
func TestConnectedMemberKeepsLobbyAlive(t *testing.T) {
	e := newEnv(t)
	var connected sync.Map
	e.svc.Connected = func(_, user uint64) bool { _, ok := connected.Load(user); return ok }
	alice := e.user("alice", e.app)
	l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": 60})
	connected.Store(alice.id, true)
	e.clock.Advance(10 * time.Minute)
	e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).OK(t, 200, nil)
	n, err := e.svc.ExpireIdle(t.Context())
	require.NoError(t, err, "ExpireIdle deleted %d lobbies with a connected member", n)
	require.Equal(t, 0, n, "ExpireIdle deleted %d lobbies with a connected member", n)
	connected.Delete(alice.id) // the last member disconnects
	require.NoError(t, e.svc.KeepAlive(t.Context(), uint64(e.app.ID), alice.id))
	e.clock.Advance(59 * time.Second)
	e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).OK(t, 200, nil)
	e.clock.Advance(time.Second)
	e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).Fails(t, 404, wire.CodeUnknownLobby, "")
	n, err = e.svc.ExpireIdle(t.Context())
	require.NoError(t, err, "ExpireIdle after the disconnection: %d", n)
	require.Equal(t, 1, n, "ExpireIdle after the disconnection: %d", n)
}
