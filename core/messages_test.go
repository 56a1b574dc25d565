package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sdkpp/server/servertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// botRequest makes a request as the application's backend and fails the test unless it gets want.
func botRequest(t *testing.T, env *servertest.Env, method, path string, body any, want int) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, env.APIURL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bot "+env.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, want, resp.StatusCode, "%s %s: %d, want %d", method, path, resp.StatusCode, want)
}

// joined returns connected players who all joined one lobby by secret, and the lobby's id.
func joined(t *testing.T, env *servertest.Env, secret string, names ...string) ([]*sdkClient, uint64) {
	t.Helper()
	var players []*sdkClient
	var id uint64
	for _, n := range names {
		p := connected(t, env, n)
		var res *ClientResult
		p.CreateOrJoinLobby(secret, Func(func(r *ClientResult, l uint64) { res, id = r, l }))
		await(t, n+" joins", func() bool { return res != nil })
		require.True(t, res.Successful(), "%s: %s", n, res.ToString())
		players = append(players, p)
	}
	await(t, "everyone sees everyone", func() bool {
		for _, p := range players {
			if h := p.GetLobbyHandle(id); h == nil || len(h.LobbyMemberIds()) != len(players) {
				return false
			}
		}
		return true
	})
	return players, id
}

// Rules LOB-2, LOB-3, LIM-2, MSG-1, MSG-2, MSG-3, MODR-1: lobby messages reach every member once,
// in order, as MessageHandles carrying the application, the backend's additional name and
// moderation metadata; history comes newest first and only for the player's own lobbies.
func TestLobbyMessages(t *testing.T) {
	env := servertest.Start(t)
	players, lobby := joined(t, env, "msg-secret", "m1", "m2")
	reader, writer := players[0], players[1]
	writerID := writer.GetCurrentUserV2().Id()

	// rule MSG-2: the backend gives the writer a character name.
	botRequest(t, env, http.MethodPut, fmt.Sprintf("/lobbies/%d/members/%d", lobby, writerID),
		map[string]any{"additional_name": "Sir Write"}, http.StatusOK)

	var created []uint64
	var updated []uint64
	reader.SetMessageCreatedCallback(Func(func(id uint64) { created = append(created, id) }))
	reader.SetMessageUpdatedCallback(Func(func(id uint64) { updated = append(updated, id) }))
	var sent []uint64
	for i := range 5 {
		var res *ClientResult
		writer.SendLobbyMessageWithMetadata(lobby, "hello "+strconv.Itoa(i), map[string]string{"n": strconv.Itoa(i)},
			Func(func(r *ClientResult, id uint64) { res = r; sent = append(sent, id) }))
		await(t, "send", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
	}
	await(t, "the reader to get five messages", func() bool { return len(created) == 5 })
	require.Equal(t, created, sent, "created %v, sent %v", created, sent)
	m := reader.GetMessageHandle(sent[2])
	require.NotNil(t, m, "message %+v", m.message())
	require.Equal(t, "hello 2", m.Content(), "message %+v", m.message())
	require.Equal(t, "hello 2", m.RawContent(), "message %+v", m.message())
	require.Equal(t, writerID, m.AuthorId(), "message %+v", m.message())
	require.Equal(t, lobby, m.ChannelId(), "message %+v", m.message())
	require.Equal(t, "2", m.Metadata()["n"], "message %+v", m.message())
	require.Zero(t, m.RecipientId(), "message %+v", m.message())
	require.True(t, m.SentFromGame(), "message %+v", m.message())
	require.NotZero(t, m.SentTimestamp(), "message %+v", m.message())
	require.Zero(t, m.EditedTimestamp(), "message %+v", m.message())
	app, ok := m.ApplicationId()
	require.True(t, ok, "application id %d %v", app, ok)
	require.Equal(t, uint64(env.App.ID), app, "application id %d %v", app, ok) // rule MSG-1
	name, ok := m.AdditionalName()
	require.True(t, ok, "additional name %q %v", name, ok)
	require.Equal(t, "Sir Write", name, "additional name %q %v", name, ok) // rule MSG-2
	a := m.Author()
	require.NotNil(t, a, "the author is not in the cache")
	require.Equal(t, writerID, a.Id(), "the author is not in the cache")
	l := m.Lobby()
	require.NotNil(t, l, "the message's lobby")
	require.Equal(t, lobby, l.Id(), "the message's lobby")

	// A dispatch seen twice (a replay) is delivered once.
	raw, _ := json.Marshal(map[string]any{"id": strconv.FormatUint(sent[4], 10), "lobby_id": strconv.FormatUint(lobby, 10),
		"content": "dup", "author": map[string]any{"id": strconv.FormatUint(writerID, 10)}})
	reader.onMessageDispatch("LOBBY_MESSAGE_CREATE", raw)
	RunCallbacks()
	require.Len(t, created, 5, "a duplicate was delivered: %v", created)

	// rules MODR-1, MSG-3: the backend sets moderation metadata; the handle reads it live.
	botRequest(t, env, http.MethodPut, fmt.Sprintf("/lobbies/%d/messages/%d/moderation-metadata", lobby, sent[2]),
		map[string]string{"verdict": "ok"}, http.StatusNoContent)
	await(t, "the update", func() bool { return slices.Contains(updated, sent[2]) })
	require.Equal(t, "ok", m.ModerationMetadata()["verdict"], "moderation metadata %v", m.ModerationMetadata())

	// rules LOB-3, LIM-2: history, newest first, capped.
	late := connected(t, env, "m3")
	var res *ClientResult
	var got []*MessageHandle
	late.GetLobbyMessagesWithLimit(lobby, 3, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
	await(t, "history of a lobby the player is not in", func() bool { return res != nil })
	require.Equal(t, ErrorTypeValidationError, res.Type(), "a non-member read history: %s", res.ToString())
	res = nil
	reader.GetLobbyMessagesWithLimit(lobby, 3, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
	await(t, "history", func() bool { return res != nil })
	require.True(t, res.Successful(), "history %s %d", res.ToString(), len(got))
	require.Len(t, got, 3, "history %s %d", res.ToString(), len(got))
	require.Equal(t, sent[4], got[0].Id(), "history %s %d", res.ToString(), len(got))
	require.Equal(t, sent[2], got[2].Id(), "history %s %d", res.ToString(), len(got))
	for _, limit := range []int32{0, -1} {
		res = nil
		reader.GetLobbyMessagesWithLimit(lobby, limit, Func(func(r *ClientResult, ms []*MessageHandle) { res = r }))
		await(t, "bad limit", func() bool { return res != nil })
		require.Equal(t, ErrorTypeValidationError, res.Type(), "limit %d: %s", limit, res.ToString())
	}
	res = nil
	reader.GetLobbyMessagesWithLimit(lobby, 5000, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
	await(t, "big limit", func() bool { return res != nil })
	require.True(t, res.Successful(), "limit 5000 is capped at 200: %s %d", res.ToString(), len(got))
	require.Len(t, got, 5, "limit 5000 is capped at 200: %s %d", res.ToString(), len(got))

	// Handles default once the Client is gone.
	reader.Close()
	assert.Zero(t, m.Id(), "a handle of a closed client reads values")
	assert.Equal(t, "", m.Content(), "a handle of a closed client reads values")
	assert.Nil(t, m.Metadata(), "a handle of a closed client reads values")
}

// Rules LIM-2, MSG-1, MSG-3, MODR-1, WH-2: direct messages through the SDK: sent, received live,
// edited, moderated by the backend, read from history and then from the local cache, summed up,
// and deleted; the game's webhook hears of each change.
func TestDirectMessagesThroughTheSDK(t *testing.T) {
	env := servertest.Start(t)
	hooks := servertest.NewReceiver(t, env.App.PublicKey)
	require.NoError(t, env.Server.SetWebhookURL(uint64(env.App.ID), hooks.URL))
	ann, bob := connected(t, env, "dm-ann"), connected(t, env, "dm-bob")
	annID, bobID := ann.GetCurrentUserV2().Id(), bob.GetCurrentUserV2().Id()
	var created, updated []uint64
	var deleted [][2]uint64
	bob.SetMessageCreatedCallback(Func(func(id uint64) { created = append(created, id) }))
	bob.SetMessageUpdatedCallback(Func(func(id uint64) { updated = append(updated, id) }))
	bob.SetMessageDeletedCallback(Func(func(id, ch uint64) { deleted = append(deleted, [2]uint64{id, ch}) }))

	send := func(c *sdkClient, to uint64, content string) uint64 {
		t.Helper()
		var res *ClientResult
		var id uint64
		c.SendUserMessageWithMetadata(to, content, map[string]string{"from": "test"}, Func(func(r *ClientResult, m uint64) { res, id = r, m }))
		await(t, "SendUserMessage", func() bool { return res != nil })
		require.True(t, res.Successful(), "send: %s %s", res.ToString(), res.ResponseBody())
		require.NotZero(t, id, "send: %s %s", res.ToString(), res.ResponseBody())
		return id
	}
	first := send(ann, bobID, "hello bob")
	await(t, "bob to get the message", func() bool { return slices.Contains(created, first) })
	m := bob.GetMessageHandle(first)
	require.NotNil(t, m, "message %+v", m.message())
	require.Equal(t, "hello bob", m.Content(), "message %+v", m.message())
	require.Equal(t, annID, m.AuthorId(), "message %+v", m.message())
	require.Equal(t, bobID, m.RecipientId(), "message %+v", m.message())
	require.Equal(t, "test", m.Metadata()["from"], "message %+v", m.message())
	app, ok := m.ApplicationId()
	require.True(t, ok, "application id")
	require.Equal(t, uint64(env.App.ID), app, "application id") // rule MSG-1
	recipient := m.Recipient()
	require.NotNil(t, recipient, "recipient")
	require.Equal(t, bobID, recipient.Id(), "recipient")
	ev := hooks.Next(t, 5*time.Second)
	require.Equal(t, "GAME_DIRECT_MESSAGE_CREATE", ev.Event.Event.Type, "webhook %+v", ev.Event)
	require.True(t, ev.SignatureOK, "webhook %+v", ev.Event) // rule WH-2

	// Edit: bob's handle reads the new content.
	var res *ClientResult
	ann.EditUserMessage(bobID, first, "hello bob!", resultCallback(&res))
	await(t, "edit", func() bool { return res != nil && slices.Contains(updated, first) })
	require.True(t, res.Successful(), "edit: %s %q", res.ToString(), m.Content())
	require.Equal(t, "hello bob!", m.Content(), "edit: %s %q", res.ToString(), m.Content())
	require.NotZero(t, m.EditedTimestamp(), "edit: %s %q", res.ToString(), m.Content())
	res = nil
	bob.EditUserMessage(annID, first, "not mine", resultCallback(&res))
	await(t, "refused edit", func() bool { return res != nil })
	require.False(t, res.Successful(), "bob edited ann's message: %s", res.ToString())
	require.Equal(t, HttpStatusCodeForbidden, res.Status(), "bob edited ann's message: %s", res.ToString())

	// rules MODR-1, MSG-3: the backend's moderation metadata shows on the handle.
	updated = nil
	botRequest(t, env, http.MethodPut, fmt.Sprintf("/partner-sdk/dms/%d/%d/messages/%d/moderation-metadata", annID, bobID, first),
		map[string]string{"toxicity": "0.01"}, http.StatusNoContent)
	await(t, "moderation update", func() bool { return slices.Contains(updated, first) })
	require.Equal(t, "0.01", m.ModerationMetadata()["toxicity"], "moderation %v", m.ModerationMetadata())

	// History: from the service first, then from the local cache, which live messages extend.
	second := send(ann, bobID, "second")
	await(t, "second", func() bool { return slices.Contains(created, second) })
	history := func() []*MessageHandle {
		t.Helper()
		var res *ClientResult
		var got []*MessageHandle
		bob.GetUserMessagesWithLimit(annID, 10, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
		await(t, "history", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
		return got
	}
	got := history()
	require.Len(t, got, 2, "history %d", len(got))
	require.Equal(t, second, got[0].Id(), "history %d", len(got))
	require.Equal(t, first, got[1].Id(), "history %d", len(got))
	third := send(ann, bobID, "third")
	await(t, "third", func() bool { return slices.Contains(created, third) })
	before := len(bob.logs)
	got = history()
	require.Len(t, got, 3, "history from the cache %d", len(got))
	require.Equal(t, third, got[0].Id(), "history from the cache %d", len(got))
	bob.mu.Lock()
	fromCache := slices.ContainsFunc(bob.logs[before:], func(l string) bool { return strings.Contains(l, "from the cache") })
	bob.mu.Unlock()
	require.True(t, fromCache, "the second history request went to the service")

	// Summaries: one conversation, with its newest message.
	var sums []*UserMessageSummary
	res = nil
	ann.GetUserMessageSummaries(Func(func(r *ClientResult, s []*UserMessageSummary) { res, sums = r, s }))
	await(t, "summaries", func() bool { return res != nil })
	require.True(t, res.Successful(), "summaries %s %+v", res.ToString(), sums)
	require.Len(t, sums, 1, "summaries %s %+v", res.ToString(), sums)
	require.Equal(t, bobID, sums[0].UserId(), "summaries %s %+v", res.ToString(), sums)
	require.Equal(t, third, sums[0].LastMessageId(), "summaries %s %+v", res.ToString(), sums)

	// Delete: bob's handle goes empty and the callback names the channel.
	res = nil
	channel := m.ChannelId()
	ann.DeleteUserMessage(bobID, first, resultCallback(&res))
	await(t, "delete", func() bool { return res != nil && len(deleted) == 1 })
	require.True(t, res.Successful(), "delete: %s %v", res.ToString(), deleted)
	require.Equal(t, first, deleted[0][0], "delete: %s %v", res.ToString(), deleted)
	require.NotZero(t, channel, "delete: %s %v", res.ToString(), deleted)
	require.Equal(t, channel, deleted[0][1], "delete: %s %v", res.ToString(), deleted)
	require.Zero(t, m.Id(), "a deleted message is still cached")
	require.Nil(t, bob.GetMessageHandle(first), "a deleted message is still cached")

	// Refused before any request: empty and oversized content, bad limits.
	for _, content := range []string{"", strings.Repeat("x", 2001)} {
		var r *ClientResult
		ann.SendUserMessage(bobID, content, Func(func(x *ClientResult, _ uint64) { r = x }))
		await(t, "refusal", func() bool { return r != nil })
		require.Equal(t, ErrorTypeValidationError, r.Type(), "content of %d characters: %s", len(content), r.ToString())
	}
	// A user who is not a player of the game cannot be messaged.
	var r *ClientResult
	ann.SendUserMessage(987654321, "hi", Func(func(x *ClientResult, _ uint64) { r = x }))
	await(t, "unknown recipient", func() bool { return r != nil })
	assert.False(t, r.Successful(), "unknown recipient: %s", r.ToString())
	assert.Equal(t, HttpStatusCodeNotFound, r.Status(), "unknown recipient: %s", r.ToString())
}

// Concurrent senders: the service dispatches in commit order, so a reader, which drops any
// message not newer than the last one delivered, still gets every message, in id order.
func TestConcurrentLobbySendersLoseNothing(t *testing.T) {
	env := servertest.Start(t)
	players, lobby := joined(t, env, "busy-secret", "r", "w1", "w2", "w3")
	var created []uint64
	players[0].SetMessageCreatedCallback(Func(func(id uint64) { created = append(created, id) }))
	const each = 15
	var mu sync.Mutex
	sent := 0
	for _, w := range players[1:] {
		for i := range each {
			w.SendLobbyMessage(lobby, "x"+strconv.Itoa(i), Func(func(r *ClientResult, _ uint64) {
				assert.True(t, r.Successful(), "send: %s", r.ToString())
				mu.Lock()
				sent++
				mu.Unlock()
			}))
		}
	}
	await(t, "every message", func() bool { return len(created) == 3*each })
	// The members may see a message before its sender has the answer: wait for every answer, so
	// that none comes after the test has ended.
	await(t, "every answer", func() bool { mu.Lock(); defer mu.Unlock(); return sent == 3*each })
	assert.True(t, slices.IsSorted(created), "created out of order or repeated: %v", created)
	assert.Len(t, slices.Compact(slices.Clone(created)), len(created), "created out of order or repeated: %v", created)
}

// A player who joined a lobby but had seen no message in it still catches up after a new session:
// the lobby's last_message_id at join is where the missed messages start.
func TestCatchUpWithoutASeenMessage(t *testing.T) {
	env := servertest.Start(t)
	writer := connected(t, env, "cu-writer")
	var res *ClientResult
	var lobby uint64
	writer.CreateOrJoinLobby("catch-up-secret", Func(func(r *ClientResult, id uint64) { res, lobby = r, id }))
	await(t, "writer joins", func() bool { return res != nil && res.Successful() })
	before := sendN(t, writer, lobby, "before", 2) // history the reader never sees live

	reader := connected(t, env, "cu-reader")
	var created []uint64
	reader.SetMessageCreatedCallback(Func(func(id uint64) { created = append(created, id) }))
	res = nil
	reader.CreateOrJoinLobby("catch-up-secret", Func(func(r *ClientResult, _ uint64) { res = r }))
	await(t, "reader joins", func() bool { return res != nil && res.Successful() })

	reader.Disconnect() // the session ends: the next Connect starts a new one
	await(t, "reader offline", func() bool { return reader.GetStatus() == ClientStatusDisconnected })
	missed := sendN(t, writer, lobby, "missed", 3)
	reader.Connect()
	await(t, "the missed messages", func() bool { return len(created) == len(missed) })
	assert.Equal(t, created, missed, "created %v, missed %v (older history %v must not be delivered)", created, missed, before)
}

// sendN sends n lobby messages one after the other and returns their ids.
func sendN(t *testing.T, c *sdkClient, lobby uint64, prefix string, n int) []uint64 {
	t.Helper()
	var ids []uint64
	for i := range n {
		var res *ClientResult
		c.SendLobbyMessage(lobby, prefix+strconv.Itoa(i), Func(func(r *ClientResult, id uint64) { res = r; ids = append(ids, id) }))
		await(t, "send", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
	}
	return ids
}
