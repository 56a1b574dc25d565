package dms_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/devseed"
	"sdkpp/server/dms"
	"sdkpp/server/scopes"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/server/servertest/world"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// recorder is a Notifier that remembers every dispatch.
type recorder struct {
	mu     sync.Mutex
	events []string // "EVENT user,user"
}

func (r *recorder) DispatchMany(userIDs []uint64, event string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprint(event, " ", userIDs))
}

func (r *recorder) DispatchBots(userIDs []uint64, intent uint64, event string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprint(event, " bots ", userIDs, " intent ", intent))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

type env struct {
	t     *testing.T
	w     *world.World
	st    store.Store
	clock *clock.Fake
	api   apicheck.Client
	rec   *recorder
	app   wire.DevApplication
	other wire.DevApplication
}

type player struct {
	id   uint64
	auth string
}

func newEnv(t *testing.T) *env {
	w := world.New(t)
	e := &env{t: t, w: w, st: w.Store, clock: w.Clock, rec: &recorder{}}
	e.app = w.App(devseed.AppSpec{Name: "Game", WebhookURL: "http://127.0.0.1:9/webhook"})
	e.other = w.App(devseed.AppSpec{Name: "Other Game"})
	svc := &dms.Service{Store: w.Store, Clock: w.Clock, IDs: w.IDs, Logger: w.Log, Notifier: e.rec}
	mux := http.NewServeMux()
	svc.Register(mux)
	e.api = apicheck.Client{T: t, Handler: mux}
	return e
}

// user makes a player of app with the scopes of sdk.social_layer.
func (e *env) user(name string, app wire.DevApplication) player {
	return e.userWithScopes(name, app, world.SocialScopes())
}

func (e *env) userWithScopes(name string, app wire.DevApplication, granted []string) player {
	e.t.Helper()
	id := e.w.User(name)
	return player{id: id, auth: e.w.Token(id, app, granted)}
}

func (e *env) open(p, to player) wire.DMChannel {
	e.t.Helper()
	var ch wire.DMChannel
	e.api.Do("POST", "/users/@me/channels", p.auth, map[string]any{"recipient_id": fmt.Sprint(to.id)}).OK(e.t, 200, &ch)
	return ch
}

// webhooks counts the queued webhook deliveries of event.
func (e *env) webhooks(event string) int {
	e.t.Helper()
	return len(e.w.QueuedWebhooks(event))
}

// Rules WH-2, MSG-1, MSG-3, MODR-1: a DM conversation: open, send, read, edit, moderate, delete,
// each change to both players in real time and to the game's webhook.
func TestDirectMessages(t *testing.T) {
	e := newEnv(t)
	a, b := e.user("ann", e.app), e.user("bob", e.app)
	ch := e.open(a, b)
	again := e.open(b, a)
	require.Equal(t, ch.ID, again.ID, "channels %+v %+v", ch, again)
	require.Len(t, ch.Recipients, 2, "channels %+v %+v", ch, again)
	require.Equal(t, wire.ChannelTypeDM, ch.Type, "channels %+v %+v", ch, again)
	path := fmt.Sprintf("/channels/%d/messages", ch.ID)

	var m wire.Message
	e.api.Do("POST", path, a.auth, map[string]any{"content": "hi bob", "metadata": map[string]string{"k": "v"}}).OK(t, 200, &m)
	// rule MSG-1
	require.Equal(t, "hi bob", m.Content, "message %+v", m)
	require.Equal(t, b.id, uint64(m.RecipientID), "message %+v", m)
	require.Equal(t, a.id, uint64(m.Author.ID), "message %+v", m)
	require.Equal(t, "v", m.Metadata["k"], "message %+v", m)
	require.Equal(t, e.app.ID, m.ApplicationID, "message %+v", m)
	require.Nil(t, m.EditedTimestamp, "message %+v", m)
	got := e.rec.take()
	require.Len(t, got, 1, "dispatches %v", got)
	require.Equal(t, fmt.Sprint("MESSAGE_CREATE ", []uint64{a.id, b.id}), got[0], "dispatches %v", got)
	// rule WH-2
	require.Equal(t, 1, e.webhooks(wire.EventGameDirectMessageCreate), "no GAME_DIRECT_MESSAGE_CREATE webhook")

	var list []wire.Message
	e.api.Do("GET", path+"?limit=10", b.auth, nil).OK(t, 200, &list)
	require.Len(t, list, 1, "history %+v", list)
	require.Equal(t, m.ID, list[0].ID, "history %+v", list)
	var chans []wire.DMChannel
	e.api.Do("GET", "/users/@me/channels", b.auth, nil).OK(t, 200, &chans)
	require.Len(t, chans, 1, "summaries %+v", chans)
	require.NotNil(t, chans[0].LastMessageID, "summaries %+v", chans)
	require.Equal(t, m.ID, *chans[0].LastMessageID, "summaries %+v", chans)
	// GET /channels/{id}: the same channel object, to either player.
	for _, p := range []player{a, b} {
		var one wire.DMChannel
		e.api.Do("GET", fmt.Sprintf("/channels/%d", ch.ID), p.auth, nil).OK(t, 200, &one)
		require.Equal(t, chans[0], one, "GET /channels/{id}")
	}

	mpath := fmt.Sprintf("%s/%d", path, m.ID)
	e.clock.Advance(time.Minute)
	e.api.Do("PATCH", mpath, a.auth, map[string]any{"content": "hi bob!"}).OK(t, 200, &m)
	require.Equal(t, "hi bob!", m.Content, "edited %+v", m)
	require.NotNil(t, m.EditedTimestamp, "edited %+v", m)
	require.Equal(t, "v", m.Metadata["k"], "edited %+v", m)
	e.api.Do("PATCH", mpath, b.auth, map[string]any{"content": "not yours"}).Fails(t, 403, 50005, "")
	require.Equal(t, 1, e.webhooks(wire.EventGameDirectMessageUpdate), "no GAME_DIRECT_MESSAGE_UPDATE webhook")

	// rules MODR-1, MSG-3: the backend sets moderation metadata: both players hear of it, no webhook.
	e.rec.take()
	mod := fmt.Sprintf("/partner-sdk/dms/%d/%d/messages/%d/moderation-metadata", b.id, a.id, m.ID)
	e.api.Do("PUT", mod, "Bot "+e.app.BotToken, map[string]string{"verdict": "clean"}).OK(t, 204, nil)
	e.api.Do("GET", path, a.auth, nil).OK(t, 200, &list)
	require.Equal(t, "clean", list[0].ModerationMetadata["verdict"], "moderation %+v", list[0])
	got = e.rec.take()
	require.Len(t, got, 1, "dispatches %v", got)
	require.True(t, strings.HasPrefix(got[0], "MESSAGE_UPDATE"), "dispatches %v", got)
	require.Equal(t, 1, e.webhooks(wire.EventGameDirectMessageUpdate), "moderation sent a webhook")
	// Another game's backend cannot moderate this game's messages.
	e.api.Do("PUT", mod, "Bot "+e.other.BotToken, map[string]string{"verdict": "x"}).Fails(t, 404, wire.CodeUnknownMessage, "")

	e.api.Do("DELETE", mpath, b.auth, nil).Fails(t, 403, 50005, "")
	e.api.Do("DELETE", mpath, a.auth, nil).OK(t, 204, nil)
	e.api.Do("DELETE", mpath, a.auth, nil).Fails(t, 404, wire.CodeUnknownMessage, "")
	require.Equal(t, 1, e.webhooks(wire.EventGameDirectMessageDelete), "no GAME_DIRECT_MESSAGE_DELETE webhook")
	e.api.Do("GET", path, a.auth, nil).OK(t, 200, &list)
	require.Empty(t, list, "a deleted message is listed: %+v", list)

	// History reaches back 72 hours.
	e.api.Do("POST", path, a.auth, map[string]any{"content": "old"}).OK(t, 200, &m)
	e.clock.Advance(dms.HistoryWindow + time.Minute)
	e.api.Do("GET", path, a.auth, nil).OK(t, 200, &list)
	require.Empty(t, list, "a message older than 72 hours is listed: %+v", list)
}

// Bad input on every route: a 4xx in the platform's shape, never a 5xx, nothing stored.
func TestDirectMessagesBadInput(t *testing.T) {
	e := newEnv(t)
	a, b := e.user("ann", e.app), e.user("bob", e.app)
	stranger := e.user("cat", e.other) // a player of another game only
	noScope := e.userWithScopes("dan", e.app, []string{scopes.OpenID, scopes.Identify})
	ch := e.open(a, b)
	path := fmt.Sprintf("/channels/%d/messages", ch.ID)
	var m wire.Message
	e.api.Do("POST", path, a.auth, map[string]any{"content": "first"}).OK(t, 200, &m)
	mpath := fmt.Sprintf("%s/%d", path, m.ID)
	bot := "Bot " + e.app.BotToken
	mod := fmt.Sprintf("/partner-sdk/dms/%d/%d/messages/%d/moderation-metadata", a.id, b.id, m.ID)
	sixKeys := map[string]string{"1": "", "2": "", "3": "", "4": "", "5": "", "6": ""}

	cases := []struct {
		name               string
		method, path, auth string
		body               any
		status, code       int
		field              string
	}{
		{"no credentials", "POST", "/users/@me/channels", "", map[string]any{"recipient_id": "1"}, 401, 0, ""},
		{"no dm scope", "POST", "/users/@me/channels", noScope.auth, map[string]any{"recipient_id": fmt.Sprint(a.id)}, 403, wire.CodeMissingAccess, ""},
		{"malformed JSON", "POST", "/users/@me/channels", a.auth, "{", 400, wire.CodeInvalidJSON, ""},
		{"recipient missing", "POST", "/users/@me/channels", a.auth, map[string]any{}, 400, wire.CodeInvalidFormBody, "recipient_id"},
		{"recipient wrong type", "POST", "/users/@me/channels", a.auth, map[string]any{"recipient_id": true}, 400, wire.CodeInvalidFormBody, "recipient_id"},
		{"recipient unknown", "POST", "/users/@me/channels", a.auth, map[string]any{"recipient_id": "424242"}, 404, wire.CodeUnknownUser, ""},
		{"recipient self", "POST", "/users/@me/channels", a.auth, map[string]any{"recipient_id": fmt.Sprint(a.id)}, 403, wire.CodeCannotSendToUser, ""},
		{"recipient not a player", "POST", "/users/@me/channels", a.auth, map[string]any{"recipient_id": fmt.Sprint(stranger.id)}, 403, wire.CodeCannotSendToUser, ""},
		{"content missing", "POST", path, a.auth, map[string]any{}, 400, wire.CodeInvalidFormBody, "content"},
		{"content empty", "POST", path, a.auth, map[string]any{"content": "  "}, 400, wire.CodeInvalidFormBody, "content"},
		{"content too long", "POST", path, a.auth, map[string]any{"content": strings.Repeat("x", 2001)}, 400, wire.CodeInvalidFormBody, "content"},
		{"content wrong type", "POST", path, a.auth, map[string]any{"content": 7}, 400, wire.CodeInvalidFormBody, "content"},
		{"metadata too big", "POST", path, a.auth, map[string]any{"content": "x", "metadata": map[string]string{"k": strings.Repeat("v", 1000)}}, 400, wire.CodeInvalidFormBody, "metadata"},
		{"channel id malformed", "POST", "/channels/abc/messages", a.auth, map[string]any{"content": "x"}, 400, wire.CodeInvalidFormBody, "channel_id"},
		{"channel unknown", "POST", "/channels/77/messages", a.auth, map[string]any{"content": "x"}, 404, wire.CodeUnknownChannel, ""},
		{"channel not the caller's", "POST", path, stranger.auth, map[string]any{"content": "x"}, 404, wire.CodeUnknownChannel, ""},
		{"read not the caller's", "GET", path, stranger.auth, nil, 404, wire.CodeUnknownChannel, ""},
		{"get a channel not the caller's", "GET", fmt.Sprintf("/channels/%d", ch.ID), stranger.auth, nil, 404, wire.CodeUnknownChannel, ""},
		{"get an unknown channel", "GET", "/channels/77", a.auth, nil, 404, wire.CodeUnknownChannel, ""},
		{"get a malformed channel id", "GET", "/channels/x", a.auth, nil, 400, wire.CodeInvalidFormBody, "channel_id"},
		{"get without dm_channels.read", "GET", fmt.Sprintf("/channels/%d", ch.ID), noScope.auth, nil, 403, wire.CodeMissingAccess, ""},
		{"limit zero", "GET", path + "?limit=0", a.auth, nil, 400, wire.CodeInvalidFormBody, "limit"},
		{"limit 201", "GET", path + "?limit=201", a.auth, nil, 400, wire.CodeInvalidFormBody, "limit"},
		{"limit not a number", "GET", path + "?limit=x", a.auth, nil, 400, wire.CodeInvalidFormBody, "limit"},
		{"edit unknown message", "PATCH", path + "/99", a.auth, map[string]any{"content": "x"}, 404, wire.CodeUnknownMessage, ""},
		{"edit too long", "PATCH", mpath, a.auth, map[string]any{"content": strings.Repeat("x", 2001)}, 400, wire.CodeInvalidFormBody, "content"},
		{"edit by the other player", "PATCH", mpath, b.auth, map[string]any{"content": "x"}, 403, 50005, ""},
		{"delete not the caller's", "DELETE", mpath, stranger.auth, nil, 404, wire.CodeUnknownChannel, ""},
		{"moderation without bot", "PUT", mod, a.auth, map[string]string{}, 401, 0, ""},
		{"moderation six keys", "PUT", mod, bot, sixKeys, 400, wire.CodeInvalidFormBody, ""},
		{"moderation not a map", "PUT", mod, bot, []int{1}, 400, wire.CodeInvalidFormBody, ""},
		{"moderation unknown pair", "PUT", fmt.Sprintf("/partner-sdk/dms/%d/%d/messages/%d/moderation-metadata", a.id, stranger.id, m.ID), bot, map[string]string{}, 404, wire.CodeUnknownChannel, ""},
		{"moderation bad id", "PUT", "/partner-sdk/dms/x/1/messages/1/moderation-metadata", bot, map[string]string{}, 400, wire.CodeInvalidFormBody, "user1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.api.Do(c.method, c.path, c.auth, c.body).Fails(t, c.status, c.code, c.field)
		})
	}
	// Nothing of the refused requests was stored: the one message is unchanged.
	var list []wire.Message
	e.api.Do("GET", path, a.auth, nil).OK(t, 200, &list)
	require.Len(t, list, 1, "history after refusals %+v", list)
	require.Equal(t, "first", list[0].Content, "history after refusals %+v", list)
	require.Nil(t, list[0].ModerationMetadata, "history after refusals %+v", list)
	got := e.webhooks(wire.EventGameDirectMessageCreate)
	require.Equal(t, 1, got, "%d webhooks", got)
}
