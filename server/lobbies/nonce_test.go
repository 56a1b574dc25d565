package lobbies_test

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/lobbies"
	"sdkpp/server/store"
)

// nonceQueries is a store that counts the lookups of enforced nonces.
type nonceQueries struct {
	store.Store
	finds atomic.Int32
}

func (s *nonceQueries) FindLobbyMessageByNonce(ctx context.Context, lobbyID, authorID uint64, nonce string, since time.Time) (*store.LobbyMessage, error) {
	s.finds.Add(1)
	return s.Store.FindLobbyMessageByNonce(ctx, lobbyID, authorID, nonce, since)
}

// Rule LOB-2's idempotent send holds past the memory's limit (Service.NonceMemory): a send
// repeated within lobbies.NonceWindow after the memory forgot its first message early gets that
// message back from the store, and no second message is stored or delivered. The cost: only the
// sends within the window after an early forget query the store, none before the limit is
// passed or once the window has passed after the newest message forgotten early.
func TestMessageNonceOverTheMemoryLimit(t *testing.T) {
	for _, run := range []struct {
		name  string
		start bool
	}{{"inline commit", false}, {"writer", true}} {
		t.Run(run.name, func(t *testing.T) {
			e := newEnv(t)
			st := &nonceQueries{Store: e.st}
			// About ten messages of this size: each costs its 640-byte encoding buffer and some.
			e.svc = &lobbies.Service{Store: st, Clock: e.clock, IDs: e.ids, Logger: e.w.Log, Notifier: e.rec, NonceMemory: 10 * 900}
			e.mux = http.NewServeMux()
			e.svc.Register(e.mux)
			if run.start {
				e.svc.Start()
				t.Cleanup(e.svc.Close)
			}
			alice := e.user("alice", e.app)
			l := e.join(alice, "s", map[string]any{"idle_timeout_seconds": 3600}) // outlives the nonce window
			path := "/lobbies/" + l.ID + "/messages"
			post := func(content, nonce string) message {
				t.Helper()
				var m message
				e.do("POST", path, alice.auth, map[string]any{"content": content, "nonce": nonce, "enforce_nonce": true}).OK(t, http.StatusOK, &m)
				return m
			}
			e.rec.take()
			first := post("hi", "first")
			for i := range 5 { // under the limit: the memory answers alone
				e.clock.Advance(time.Millisecond)
				post("m", strconv.Itoa(i))
			}
			require.Zero(t, st.finds.Load(), "a send under the limit queried the store")
			const sends = 40
			for i := range sends { // past the limit: the oldest are forgotten early
				e.clock.Advance(time.Millisecond)
				post("m", "more"+strconv.Itoa(i))
			}
			queried := st.finds.Load()
			require.Positive(t, queried, "the memory forgot nothing early: its limit does not hold")
			require.Less(t, int(queried), sends, "sends before the first early forget queried the store")
			require.Len(t, e.rec.take(), 1+5+sends)

			again := post("hi (retry)", "first")
			require.Equal(t, first.ID, again.ID, "repeat after an early forget: %+v, first %+v", again, first)
			require.Equal(t, "hi", again.Content, "repeat after an early forget: %+v, first %+v", again, first)
			require.Empty(t, e.rec.take(), "a repeat was delivered again")
			require.Equal(t, queried+1, st.finds.Load(), "the repeat asked the store once")
			var history []message
			e.do("GET", path+"?limit=200", alice.auth, nil).OK(t, http.StatusOK, &history)
			require.Len(t, history, 1+5+sends, "a repeat stored a second message")

			e.clock.Advance(lobbies.NonceWindow) // past the window of everything forgotten early
			queried = st.finds.Load()
			later := post("after the window", "first")
			require.NotEqual(t, first.ID, later.ID, "a nonce outside the window found the old message")
			require.Equal(t, later.ID, post("again", "first").ID, "a repeat of the new message")
			require.Equal(t, queried, st.finds.Load(), "a send with no early forget in its window queried the store")
		})
	}
}
