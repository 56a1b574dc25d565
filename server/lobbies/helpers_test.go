package lobbies_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/devseed"
	"sdkpp/server/lobbies"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/server/servertest/world"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// env is a lobby service on the world's store (world.New) with a frozen clock, two applications
// and a recording Notifier.
type env struct {
	t      *testing.T
	w      *world.World
	st     *store.DB
	clock  *clock.Fake
	ids    *snowflake.Generator
	svc    *lobbies.Service
	mux    *http.ServeMux
	seed   *devseed.Seeder
	acct   *accounts.Service
	rec    *recorder
	kicks  atomic.Int32
	app    wire.DevApplication // has a webhook URL
	other  wire.DevApplication // another application
	appBot string              // "Bot <token>" of app
}

func newEnv(t *testing.T) *env {
	t.Helper()
	w := world.New(t)
	e := &env{t: t, w: w, st: w.Store, clock: w.Clock, ids: w.IDs, seed: w.Seed, acct: w.Accounts, rec: &recorder{}}
	e.app = w.App(devseed.AppSpec{Name: "Game", WebhookURL: "http://127.0.0.1:9/webhook"})
	e.other = w.App(devseed.AppSpec{Name: "Other Game"})
	e.appBot = "Bot " + e.app.BotToken
	e.svc = &lobbies.Service{Store: w.Store, Clock: w.Clock, IDs: w.IDs, Logger: w.Log, Kick: func() { e.kicks.Add(1) }, Notifier: e.rec}
	onPostgres(e.svc)
	e.mux = http.NewServeMux()
	e.svc.Register(e.mux)
	return e
}

// onPostgres gives svc the database's epoch when its store is PostgreSQL, as the server does:
// that store's CacheEpoch keeps nothing (other processes write the database).
func onPostgres(svc *lobbies.Service) {
	if st, ok := svc.Store.(*store.DB); ok && st.Dialect() == "postgres" {
		svc.Epoch, svc.EpochChecked = st.SharedEpoch, true
	}
}

// sqliteOnly skips a test on PostgreSQL (SDKPP_TEST_STORE=postgres), saying why: a test that
// runs its service in a synctest bubble (inBubble), whose goroutines wait for nothing outside
// it while a PostgreSQL store's connections are, or one whose figure is SQLite's.
func sqliteOnly(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(servertest.EnvStore) == "postgres" {
		t.Skip(why)
	}
}

// inBubble is sqliteOnly's reason for a test in a synctest bubble.
const inBubble = "runs in a synctest bubble, which a PostgreSQL store's connections are outside of"

// player is a user with a Bearer token of one application.
type player struct {
	id   uint64
	auth string // "Bearer <token>"
}

// sid is the id as the wire writes it.
func (p player) sid() string { return strconv.FormatUint(p.id, 10) }

// user makes a user with a token of app carrying the scopes of sdk.social_layer.
func (e *env) user(name string, app wire.DevApplication) player {
	return e.userWithScopes(name, app, world.SocialScopes())
}

func (e *env) userWithScopes(name string, app wire.DevApplication, granted []string) player {
	e.t.Helper()
	id := e.w.User(name)
	return player{id: id, auth: e.w.Token(id, app, granted)}
}

// token issues a Bearer token of app for user.
func (e *env) token(userID uint64, app wire.DevApplication, granted []string) string {
	e.t.Helper()
	return e.w.Token(userID, app, granted)
}

// rawUsers makes n users without tokens, quickly.
func (e *env) rawUsers(n int) []uint64 {
	e.t.Helper()
	ctx := context.Background()
	ids := make([]uint64, n)
	err := e.st.WithTx(ctx, func(tx store.Store) error {
		for i := range ids {
			ids[i] = e.ids.Next()
			if err := tx.CreateUser(ctx, &store.User{ID: ids[i], Username: "u" + strconv.FormatUint(ids[i], 10), CreatedAt: e.clock.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(e.t, err)
	return ids
}

// do sends a request to the lobby routes; every answer must be below 500.
func (e *env) do(method, path, auth string, body any) apicheck.Resp {
	e.t.Helper()
	return apicheck.Client{T: e.t, Handler: e.mux}.Do(method, path, auth, body)
}

func (e *env) doType(method, path, auth, contentType string, body any) apicheck.Resp {
	e.t.Helper()
	return apicheck.Client{T: e.t, Handler: e.mux}.DoType(method, path, auth, contentType, body)
}

// recorded is one Notifier call.
type recorded struct {
	app   uint64
	users []uint64
	event string
	data  any
}

// recorder is a Notifier that remembers every call.
type recorder struct {
	mu     sync.Mutex
	events []recorded
}

func (r *recorder) LobbyEvent(appID uint64, userIDs []uint64, event string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, recorded{app: appID, users: append([]uint64(nil), userIDs...), event: event, data: data})
}

// messageOf decodes the data of a recorded LOBBY_MESSAGE_CREATE, which the service encodes once.
func messageOf(t *testing.T, data any) wire.LobbyMessage {
	t.Helper()
	a, ok := data.(wire.Appender)
	require.True(t, ok, "event data %T", data)
	var m wire.LobbyMessage
	require.NoError(t, wire.DecodeLobbyMessage(a.AppendJSON(nil), &m))
	return m
}

// take returns and forgets the recorded calls.
func (r *recorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// lobby is a decoded lobby object.
type lobby struct {
	ID            string            `json:"id"`
	ApplicationID string            `json:"application_id"`
	Metadata      map[string]string `json:"metadata"`
	Members       []member          `json:"members"`
}

type member struct {
	ID             string            `json:"id"`
	Metadata       map[string]string `json:"metadata"`
	Flags          int               `json:"flags"`
	AdditionalName *string           `json:"additional_name"`
}

func (l lobby) member(id string) *member {
	for i := range l.Members {
		if l.Members[i].ID == id {
			return &l.Members[i]
		}
	}
	return nil
}

// message is a decoded lobby message.
type message struct {
	ID          string              `json:"id"`
	Type        int                 `json:"type"`
	Content     string              `json:"content"`
	LobbyID     string              `json:"lobby_id"`
	ChannelID   string              `json:"channel_id"`
	Author      struct{ ID string } `json:"author"`
	LobbyMember struct {
		AdditionalName *string `json:"additional_name"`
	} `json:"lobby_member"`
	Metadata           map[string]string `json:"metadata"`
	ModerationMetadata map[string]string `json:"moderation_metadata"`
	Flags              int               `json:"flags"`
	ApplicationID      string            `json:"application_id"`
	Timestamp          string            `json:"timestamp"`
}

// join makes p create or join the lobby of secret.
func (e *env) join(p player, secret string, extra map[string]any) lobby {
	e.t.Helper()
	body := map[string]any{"secret": secret}
	for k, v := range extra {
		body[k] = v
	}
	var l lobby
	e.do("PUT", "/lobbies", p.auth, body).OK(e.t, http.StatusOK, &l)
	return l
}

// send makes p send content to the lobby.
func (e *env) send(p player, lobbyID, content string) message {
	e.t.Helper()
	var m message
	e.do("POST", "/lobbies/"+lobbyID+"/messages", p.auth, map[string]any{"content": content}).OK(e.t, http.StatusOK, &m)
	return m
}

// snapshot is everything stored about lobbies, to check that a failed request changed nothing.
func (e *env) snapshot() string {
	e.t.Helper()
	var out bytes.Buffer
	rows, err := e.st.ExpiredLobbies(context.Background(), world.Start.Add(1000*24*time.Hour), 100000)
	require.NoError(e.t, err)
	for _, l := range rows {
		members, _ := e.st.ListLobbyMembers(context.Background(), l.ID)
		msgs, _ := e.st.ListLobbyMessages(context.Background(), l.ID, time.Time{}, 100000)
		raw, _ := json.Marshal([]any{l, members, msgs})
		out.Write(raw)
	}
	return out.String()
}

// webhooks returns the queued webhook events of type event.
func (e *env) webhooks(event string) []wire.WebhookEvent {
	e.t.Helper()
	var out []wire.WebhookEvent
	for _, d := range e.w.QueuedWebhooks(event) {
		var ev wire.WebhookEvent
		require.NoError(e.t, json.Unmarshal(d.Body, &ev))
		out = append(out, ev)
	}
	return out
}
