package lobbies_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	gwire "sdkpp/wire/gateway"

	"github.com/stretchr/testify/require"

	"sdkpp/server/lobbies"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// started is an env whose service runs its writer (Start), as in the real service: members get a
// message before it is committed, and everything else waits for the commit.
func started(t *testing.T) *env {
	e := newEnv(t)
	e.svc.Start()
	t.Cleanup(e.svc.Close)
	return e
}

// A send with nonce and enforce_nonce is idempotent (rule LOB-2's send repeated after a lost
// answer): the same author repeating it in the same lobby within lobbies.NonceWindow gets the
// first message back, nothing new is stored or delivered. Without enforce_nonce, or for another
// author, or after the window, a nonce changes nothing.
func TestMessageNonce(t *testing.T) {
	for _, run := range []struct {
		name  string
		setup func(*testing.T) *env
	}{{"inline commit", newEnv}, {"writer", started}} {
		t.Run(run.name, func(t *testing.T) {
			e := run.setup(t)
			alice, bob := e.user("alice", e.app), e.user("bob", e.app)
			l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": 3600}) // outlives the nonce window
			e.join(bob, "s", nil)
			path := "/lobbies/" + l.ID + "/messages"
			post := func(p player, body map[string]any) message {
				t.Helper()
				var m message
				e.do("POST", path, p.auth, body).OK(t, http.StatusOK, &m)
				return m
			}
			e.rec.take()
			first := post(alice, map[string]any{"content": "hi", "nonce": "abc", "enforce_nonce": true})
			again := post(alice, map[string]any{"content": "hi (retry)", "nonce": "abc", "enforce_nonce": true})
			require.Equal(t, first.ID, again.ID, "repeat: %+v, first %+v", again, first)
			require.Equal(t, "hi", again.Content, "repeat: %+v, first %+v", again, first)
			var escaped message // the same nonce with an escape: read by encoding/json, not in one pass
			e.do("POST", path, alice.auth, `{"content":"x","nonce":"a\u0062c","enforce_nonce":true}`).OK(t, http.StatusOK, &escaped)
			require.Equal(t, first.ID, escaped.ID, "an escaped nonce is the same nonce")
			ev := e.rec.take()
			require.Len(t, ev, 1, "%d events for one message", len(ev))
			distinct := []message{
				post(alice, map[string]any{"content": "no enforce", "nonce": "abc"}),
				post(bob, map[string]any{"content": "other author", "nonce": "abc", "enforce_nonce": true}),
				post(alice, map[string]any{"content": "integer nonce", "nonce": 12345, "enforce_nonce": true}),
			}
			require.Equal(t, distinct[2].ID, post(alice, map[string]any{"content": "x", "nonce": "12345", "enforce_nonce": true}).ID, "an integer nonce and its decimal string differ")
			e.clock.Advance(lobbies.NonceWindow)
			later := post(alice, map[string]any{"content": "after the window", "nonce": "abc", "enforce_nonce": true})
			ids := []string{first.ID, distinct[0].ID, distinct[1].ID, distinct[2].ID, later.ID}
			require.Len(t, slices.Compact(slices.Sorted(slices.Values(ids))), len(ids), "ids %v", ids)
			var history []message
			e.do("GET", path+"?limit=200", alice.auth, nil).OK(t, http.StatusOK, &history)
			require.Len(t, history, len(ids), "%d messages stored, want %d", len(history), len(ids))

			before := e.snapshot()
			for _, bad := range []map[string]any{
				{"content": "x", "nonce": strings.Repeat("n", lobbies.MaxNonceChars+1)},
				{"content": "x", "nonce": true},
				{"content": "x", "nonce": map[string]any{}},
				{"content": "x", "nonce": 1.5},
				{"content": "x", "nonce": "n", "enforce_nonce": "yes"},
			} {
				field := "nonce"
				if _, ok := bad["enforce_nonce"]; ok {
					field = "enforce_nonce"
				}
				e.do("POST", path, alice.auth, bad).Fails(t, 400, wire.CodeInvalidFormBody, field)
			}
			require.Equal(t, before, e.snapshot(), "a refused message changed something")
		})
	}
}

// With the writer, members get each message at once and the history holds every message they
// were sent, in order, as soon as anyone reads it; the sender's answer comes once it is stored.
func TestWriterKeepsHistoryWhole(t *testing.T) {
	e := started(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	e.rec.take()
	var sent []string
	for i := range 60 {
		p := alice
		if i%2 == 1 {
			p = bob
		}
		sent = append(sent, e.send(p, l.ID, "m"+strconv.Itoa(i)).ID)
		if i%20 == 19 { // reads in between wait for the writer
			var history []message
			e.do("GET", "/lobbies/"+l.ID+"/messages?limit=200", alice.auth, nil).OK(t, http.StatusOK, &history)
			require.Len(t, history, i+1, "after %d sends the history has %d messages", i+1, len(history))
			require.Equal(t, sent[i], history[0].ID, "after %d sends the history has %d messages", i+1, len(history))
		}
	}
	var delivered []string
	for _, ev := range e.rec.take() {
		delivered = append(delivered, messageOf(t, ev.data).ID.String())
	}
	require.True(t, slices.Equal(delivered, sent), "delivered %v, sent %v", delivered, sent)
	// Rule WH-2 holds with the writer: one webhook row per message, committed with it.
	hooks := e.webhooks(wire.EventLobbyMessageCreate)
	require.Len(t, hooks, len(sent), "%d webhooks for %d messages", len(hooks), len(sent))
}

// What a sender's message carries is read again after every other change: a member the backend
// removed cannot send, a changed additional_name (rule MSG-2) and a renamed author show at once, a
// deleted lobby is unknown.
func TestHotLobbyFollowsChanges(t *testing.T) {
	e := started(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	path := "/lobbies/" + l.ID + "/messages"
	e.send(bob, l.ID, "warm")

	e.do("PUT", "/lobbies/"+l.ID+"/members/"+bob.sid(), e.appBot, map[string]any{"additional_name": "Sir Bob"}).OK(t, http.StatusOK, nil)
	named := e.send(bob, l.ID, "named")
	require.NotNil(t, named.LobbyMember.AdditionalName, "additional_name")
	require.Equal(t, "Sir Bob", *named.LobbyMember.AdditionalName, "additional_name")

	u, err := e.st.GetUser(context.Background(), bob.id)
	require.NoError(t, err)
	u.GlobalName = "Robert"
	require.NoError(t, e.st.UpdateUser(context.Background(), u))
	var raw json.RawMessage
	e.do("POST", path, bob.auth, map[string]any{"content": "renamed"}).OK(t, http.StatusOK, &raw)
	var m struct {
		Author struct {
			GlobalName string `json:"global_name"`
		} `json:"author"`
	}
	require.NoError(t, json.Unmarshal(raw, &m), "author after the rename: %s", raw)
	require.Equal(t, "Robert", m.Author.GlobalName, "author after the rename: %s", raw)

	e.do("DELETE", "/lobbies/"+l.ID+"/members/"+bob.sid(), e.appBot, nil).OK(t, http.StatusNoContent, nil)
	e.do("POST", path, bob.auth, map[string]any{"content": "removed"}).Fails(t, 403, wire.CodeMissingAccess, "")
	e.send(alice, l.ID, "still here")
	e.do("DELETE", "/lobbies/"+l.ID, e.appBot, nil).OK(t, http.StatusNoContent, nil)
	e.do("POST", path, alice.auth, map[string]any{"content": "gone"}).Fails(t, 404, wire.CodeUnknownLobby, "")
}

// Member objects carry the member's user (an sdkpp addition that the SDK's
// LobbyMemberHandle::User reads), in lobby objects, member events and the backend's answers.
func TestMemberObjectsCarryTheUser(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", nil)
	e.rec.take()
	e.join(bob, "s", nil)
	var got struct {
		Members []struct {
			ID   string `json:"id"`
			User *struct {
				ID       string `json:"id"`
				Username string `json:"username"`
			} `json:"user"`
		} `json:"members"`
	}
	e.do("GET", "/lobbies/"+l.ID, alice.auth, nil).OK(t, http.StatusOK, &got)
	names := map[string]string{alice.sid(): "alice", bob.sid(): "bob"}
	for _, m := range got.Members {
		require.NotNil(t, m.User, "member %s: user %+v", m.ID, m.User)
		require.Equal(t, m.ID, m.User.ID, "member %s: user %+v", m.ID, m.User)
		require.Equal(t, names[m.ID], m.User.Username, "member %s: user %+v", m.ID, m.User)
	}
	added := false
	for _, ev := range e.rec.take() {
		if me, ok := ev.data.(wire.LobbyMemberEvent); ok && ev.event == gwire.EventLobbyMemberAdd {
			added = me.Member.User != nil && me.Member.User.Username == "bob"
		}
	}
	require.True(t, added, "LOBBY_MEMBER_ADD without the member's user")
	var put struct {
		User *struct {
			Username string `json:"username"`
		} `json:"user"`
	}
	e.do("PUT", "/lobbies/"+l.ID+"/members/"+bob.sid(), e.appBot, map[string]any{"metadata": map[string]string{"k": "v"}}).OK(t, http.StatusOK, &put)
	require.NotNil(t, put.User, "PUT member answer: %+v", put.User)
	require.Equal(t, "bob", put.User.Username, "PUT member answer: %+v", put.User)
}

// restart replaces the env's service with a new one on the same store, as a restart of the
// service process does: everything in memory is gone.
func (e *env) restart() {
	e.svc.Close()
	e.svc = &lobbies.Service{Store: e.st, Clock: e.clock, IDs: e.ids, Logger: e.w.Log, Kick: func() { e.kicks.Add(1) }, Notifier: e.rec}
	onPostgres(e.svc)
	e.mux = http.NewServeMux()
	e.svc.Register(e.mux)
	e.svc.Start()
	e.t.Cleanup(e.svc.Close)
}

// Rule LOB-2's idempotent send holds across a restart of the service: the store keeps each
// message's enforced nonce, and a repeat within lobbies.NonceWindow gets the first message back
// (the SDK repeats a send whose answer a restart cut off); after the window it is a new message.
func TestMessageNonceSurvivesRestart(t *testing.T) {
	e := started(t)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": 3600})
	e.join(bob, "s", nil)
	path := "/lobbies/" + l.ID + "/messages"
	post := func(p player, content, nonce string) message {
		t.Helper()
		var m message
		e.do("POST", path, p.auth, map[string]any{"content": content, "nonce": nonce, "enforce_nonce": true}).OK(t, http.StatusOK, &m)
		return m
	}
	first := post(alice, "hi", "n1")
	e.restart()
	e.rec.take()
	again := post(alice, "hi (retry)", "n1")
	require.Equal(t, first.ID, again.ID, "repeat after a restart: %+v, first %+v", again, first)
	require.Equal(t, "hi", again.Content, "repeat after a restart: %+v, first %+v", again, first)
	require.Equal(t, alice.sid(), again.Author.ID, "repeat after a restart: %+v, first %+v", again, first)
	ev := e.rec.take()
	require.Empty(t, ev, "a repeat was delivered again: %+v", ev)
	require.NotEqual(t, first.ID, post(bob, "bob's", "n1").ID, "another author's nonce found alice's message")
	e.clock.Advance(lobbies.NonceWindow)
	e.restart()
	require.NotEqual(t, first.ID, post(alice, "after the window", "n1").ID, "a nonce outside the window found the old message")
	var history []message
	e.do("GET", path+"?limit=200", alice.auth, nil).OK(t, http.StatusOK, &history)
	require.Len(t, history, 3, "%d messages stored, want 3", len(history))
}

// With Service.Epoch (PostgreSQL's shared epoch), a lobby's hot entry is kept while the epoch
// read before a message is not newer than the entry's, and read again once it is: a rename that
// does not move the epoch is not seen, one that does is.
func TestHotLobbyFollowsTheEpoch(t *testing.T) {
	e := newEnv(t)
	var epoch atomic.Uint64
	epoch.Store(5)
	e.svc.Epoch = func(context.Context, string) (uint64, error) { return epoch.Load(), nil }
	e.svc.Start()
	t.Cleanup(e.svc.Close)
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	e.send(bob, l.ID, "warm")
	rename := func(name string) {
		t.Helper()
		u, err := e.st.GetUser(context.Background(), bob.id)
		require.NoError(t, err)
		u.GlobalName = name
		require.NoError(t, e.st.UpdateUser(context.Background(), u))
	}
	author := func(content string) string {
		t.Helper()
		var m struct {
			Author struct {
				GlobalName string `json:"global_name"`
			} `json:"author"`
		}
		e.do("POST", "/lobbies/"+l.ID+"/messages", bob.auth, map[string]any{"content": content}).OK(t, http.StatusOK, &m)
		return m.Author.GlobalName
	}
	rename("Robert")
	require.NotEqual(t, "Robert", author("kept"), "the entry was read again though the epoch stayed")
	epoch.Store(4) // an older read: the entry is newer
	require.NotEqual(t, "Robert", author("older"), "the entry was read again for an older epoch")
	epoch.Store(6)
	require.Equal(t, "Robert", author("moved"), "the entry was kept though the epoch moved")
}

// Messages sent over gateway connections (SendOverGateway) are held until DeliverAccepted and
// then delivered in their order, together (one call of a BatchNotifier); a message sent another
// way delivers those held first, and an answer taken before DeliverAccepted delivers them.
func TestGatewaySendsDeliveredTogether(t *testing.T) {
	e := started(t)
	rec := &batchRecorder{recorder: e.rec}
	e.svc.Notifier = rec
	alice, bob := e.user("alice", e.app), e.user("bob", e.app)
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	rec.take()
	send := func(content string) func() (int, []byte) {
		return e.svc.SendOverGateway(context.Background(), alice.auth, l.ID, []byte(`{"content":"`+content+`"}`))
	}
	delivered := func(want ...string) {
		t.Helper()
		var got []string
		for _, ev := range rec.take() {
			require.Equal(t, wire.EventLobbyMessageCreate, ev.event)
			require.ElementsMatch(t, []uint64{bob.id, alice.id}, ev.users)
			got = append(got, messageOf(t, ev.data).Content)
		}
		require.Equal(t, want, got)
	}
	answered := func(answer func() (int, []byte)) {
		t.Helper()
		status, body := answer()
		require.Equal(t, http.StatusOK, status, "%s", body)
	}

	first, second := send("1"), send("2")
	delivered() // held
	e.svc.DeliverAccepted()
	delivered("1", "2")
	require.Equal(t, 1, rec.batches, "together")
	answered(first)
	answered(second)
	e.svc.DeliverAccepted()
	delivered() // nothing twice

	third := send("3")
	e.do("POST", "/lobbies/"+l.ID+"/messages", bob.auth, map[string]any{"content": "4"}).OK(t, http.StatusOK, nil)
	delivered("3", "4")
	answered(third)

	fifth := send("5")
	answered(fifth)
	delivered("5")
}

// startingStore is the env's store with the Starter of a PostgreSQL store (groupcommit): it
// notes "start" and the group's size in log when a group's statement is sent, and stores the
// group then, its result read later.
type startingStore struct {
	store.Store
	log *[]string
	mu  *sync.Mutex
}

func (s startingStore) StartsLobbyMessages() bool { return true }

func (s startingStore) StartLobbyMessages(ctx context.Context, id uint64, ms []*store.LobbyMessage) (func() error, bool) {
	s.mu.Lock()
	*s.log = append(*s.log, "start "+strconv.Itoa(len(ms)))
	s.mu.Unlock()
	err := s.StoreLobbyMessages(ctx, id, ms, nil, nil)
	return func() error { return err }, true
}

// loggingNotifier notes "deliver" and the messages' contents in log for each delivery.
type loggingNotifier struct {
	log *[]string
	mu  *sync.Mutex
}

func (n loggingNotifier) LobbyEvent(_ uint64, _ []uint64, event string, data any) {
	if event != wire.EventLobbyMessageCreate {
		return
	}
	m, _ := data.(wire.Encoded)
	var msg wire.LobbyMessage
	_ = json.Unmarshal(m, &msg)
	n.mu.Lock()
	*n.log = append(*n.log, "deliver "+msg.Content)
	n.mu.Unlock()
}

// On a store that sends a group's statement and reads its result later (PostgreSQL), messages
// accepted together over a gateway connection have their statement sent before they are
// delivered (DeliverAccepted), so that the database stores them while the members get them; a
// lone message is delivered first, and sent when its answer waits for it (the latency case).
func TestGatewayGroupSentBeforeDelivery(t *testing.T) {
	e := newEnv(t)
	var log []string
	var mu sync.Mutex
	e.svc.Store = startingStore{Store: e.st, log: &log, mu: &mu}
	e.svc.Notifier = loggingNotifier{log: &log, mu: &mu}
	e.svc.Start()
	t.Cleanup(e.svc.Close)
	alice, bob := e.user("alice", e.other), e.user("bob", e.other) // no webhook: one statement alone
	l := e.join(alice, "s", nil)
	e.join(bob, "s", nil)
	send := func(content string) func() (int, []byte) {
		return e.svc.SendOverGateway(context.Background(), alice.auth, l.ID, []byte(`{"content":"`+content+`"}`))
	}
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		got := log
		log = nil
		return got
	}
	answered := func(answers ...func() (int, []byte)) {
		t.Helper()
		for _, a := range answers {
			status, body := a()
			require.Equal(t, http.StatusOK, status, "%s", body)
		}
	}
	taken()

	first, second := send("1"), send("2")
	e.svc.DeliverAccepted()
	require.Equal(t, []string{"start 2", "deliver 1", "deliver 2"}, taken(), "the group's statement leaves first")
	answered(first, second)
	require.Empty(t, taken(), "sent once")

	lone := send("3")
	e.svc.DeliverAccepted()
	require.Equal(t, []string{"deliver 3"}, taken(), "a lone message is delivered before its commit")
	answered(lone)
	require.Equal(t, []string{"start 1"}, taken())
	var history []wire.LobbyMessage
	e.do("GET", "/lobbies/"+l.ID+"/messages", alice.auth, nil).OK(t, http.StatusOK, &history)
	require.Len(t, history, 3, "all stored")
}
