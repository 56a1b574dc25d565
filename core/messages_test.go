package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"sdkpp/server/servertest"
)

// botRequest makes a request as the application's backend and fails the test unless it gets want.
func botRequest(t *testing.T, env *servertest.Env, method, path string, body any, want int) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, env.APIURL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bot "+env.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d", method, path, resp.StatusCode, want)
	}
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
		if !res.Successful() {
			t.Fatalf("%s: %s", n, res.ToString())
		}
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
		if !res.Successful() {
			t.Fatal(res.ToString())
		}
	}
	await(t, "the reader to get five messages", func() bool { return len(created) == 5 })
	if !slices.Equal(created, sent) {
		t.Fatalf("created %v, sent %v", created, sent)
	}
	m := reader.GetMessageHandle(sent[2])
	if m == nil || m.Content() != "hello 2" || m.RawContent() != "hello 2" || m.AuthorId() != writerID || m.ChannelId() != lobby ||
		m.Metadata()["n"] != "2" || m.RecipientId() != 0 || !m.SentFromGame() || m.SentTimestamp() == 0 || m.EditedTimestamp() != 0 {
		t.Fatalf("message %+v", m.message())
	}
	if app, ok := m.ApplicationId(); !ok || app != uint64(env.App.ID) { // rule MSG-1
		t.Fatalf("application id %d %v", app, ok)
	}
	if name, ok := m.AdditionalName(); !ok || name != "Sir Write" { // rule MSG-2
		t.Fatalf("additional name %q %v", name, ok)
	}
	if a := m.Author(); a == nil || a.Id() != writerID {
		t.Fatal("the author is not in the cache")
	}
	if l := m.Lobby(); l == nil || l.Id() != lobby {
		t.Fatal("the message's lobby")
	}

	// A dispatch seen twice (a replay) is delivered once.
	raw, _ := json.Marshal(map[string]any{"id": strconv.FormatUint(sent[4], 10), "lobby_id": strconv.FormatUint(lobby, 10),
		"content": "dup", "author": map[string]any{"id": strconv.FormatUint(writerID, 10)}})
	reader.onMessageDispatch("LOBBY_MESSAGE_CREATE", raw)
	RunCallbacks()
	if len(created) != 5 {
		t.Fatalf("a duplicate was delivered: %v", created)
	}

	// rules MODR-1, MSG-3: the backend sets moderation metadata; the handle reads it live.
	botRequest(t, env, http.MethodPut, fmt.Sprintf("/lobbies/%d/messages/%d/moderation-metadata", lobby, sent[2]),
		map[string]string{"verdict": "ok"}, http.StatusNoContent)
	await(t, "the update", func() bool { return slices.Contains(updated, sent[2]) })
	if m.ModerationMetadata()["verdict"] != "ok" {
		t.Fatalf("moderation metadata %v", m.ModerationMetadata())
	}

	// rules LOB-3, LIM-2: history, newest first, capped.
	late := connected(t, env, "m3")
	var res *ClientResult
	var got []*MessageHandle
	late.GetLobbyMessagesWithLimit(lobby, 3, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
	await(t, "history of a lobby the player is not in", func() bool { return res != nil })
	if res.Type() != ErrorTypeValidationError {
		t.Fatalf("a non-member read history: %s", res.ToString())
	}
	res = nil
	reader.GetLobbyMessagesWithLimit(lobby, 3, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
	await(t, "history", func() bool { return res != nil })
	if !res.Successful() || len(got) != 3 || got[0].Id() != sent[4] || got[2].Id() != sent[2] {
		t.Fatalf("history %s %d", res.ToString(), len(got))
	}
	for _, limit := range []int32{0, -1} {
		res = nil
		reader.GetLobbyMessagesWithLimit(lobby, limit, Func(func(r *ClientResult, ms []*MessageHandle) { res = r }))
		await(t, "bad limit", func() bool { return res != nil })
		if res.Type() != ErrorTypeValidationError {
			t.Fatalf("limit %d: %s", limit, res.ToString())
		}
	}
	res = nil
	reader.GetLobbyMessagesWithLimit(lobby, 5000, Func(func(r *ClientResult, ms []*MessageHandle) { res, got = r, ms }))
	await(t, "big limit", func() bool { return res != nil })
	if !res.Successful() || len(got) != 5 {
		t.Fatalf("limit 5000 is capped at 200: %s %d", res.ToString(), len(got))
	}

	// Handles default once the Client is gone.
	reader.Close()
	if m.Id() != 0 || m.Content() != "" || m.Metadata() != nil {
		t.Fatal("a handle of a closed client reads values")
	}
}
