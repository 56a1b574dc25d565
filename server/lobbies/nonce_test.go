package lobbies_test

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/devseed"
	"sdkpp/server/lobbies"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/server/servertest/world"
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
// repeated within lobbies.NonceWindow after the memory forgot its first message early, but for
// its key's hash or whole, gets that message back from the store, and no second message is
// stored or delivered. The cost: a repeat of a message kept as a hash queries the store, and so
// does every send within the window after one was forgotten whole; no other send does.
func TestMessageNonceOverTheMemoryLimit(t *testing.T) {
	for _, run := range []struct {
		name  string
		start bool
	}{{"inline commit", false}, {"writer", true}} {
		t.Run(run.name, func(t *testing.T) {
			e := newEnv(t)
			st := &nonceQueries{Store: e.st}
			// About five messages of this size (each costs its 640-byte encoding buffer and some)
			// and seventy hashes.
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
			var last message // the newest message sent
			sends := func(prefix string, n int) message {
				var first message
				for i := range n {
					e.clock.Advance(time.Millisecond)
					if last = post("m", prefix+strconv.Itoa(i)); i == 0 {
						first = last
					}
				}
				return first
			}
			repeat := func(first message, nonce string) {
				t.Helper()
				e.rec.take()
				again := post("again", nonce)
				require.Equal(t, first.ID, again.ID, "repeat after an early forget: %+v, first %+v", again, first)
				require.Equal(t, first.Content, again.Content, "repeat after an early forget: %+v, first %+v", again, first)
				require.Empty(t, e.rec.take(), "a repeat was delivered again")
				var newest []message
				e.do("GET", path+"?limit=1", alice.auth, nil).OK(t, http.StatusOK, &newest)
				require.Len(t, newest, 1)
				require.Equal(t, last.ID, newest[0].ID, "a repeat stored a second message")
			}

			first := sends("a", 1)
			sends("b", 20) // the first is kept as a hash, and the next ones
			require.Zero(t, st.finds.Load(), "a new send queried the store while the memory held every hash")
			repeat(first, "a0")
			require.Equal(t, int32(1), st.finds.Load(), "the repeat of a hash queried the store once")

			b0 := sends("c", 200) // the hashes of the first ones go too
			queried := st.finds.Load() - 1
			require.Positive(t, queried, "the memory forgot no hash: its limit does not hold")
			require.Less(t, int(queried), 200, "sends before the first whole forget queried the store")
			repeat(first, "a0")
			repeat(b0, "c0")

			e.clock.Advance(lobbies.NonceWindow) // past the window of everything forgotten early
			queried = st.finds.Load()
			later := post("after the window", "a0")
			require.NotEqual(t, first.ID, later.ID, "a nonce outside the window found the old message")
			require.Equal(t, later.ID, post("again", "a0").ID, "a repeat of the new message")
			require.Equal(t, queried, st.finds.Load(), "a send with no early forget in its window queried the store")
		})
	}
}

// discard is a Notifier that keeps nothing.
type discard struct{}

func (discard) LobbyEvent(uint64, []uint64, string, any) {}

// BenchmarkNonceMemoryHeap sends messages with an enforced nonce over a gateway session, all
// within lobbies.NonceWindow, and reports the heap they leave (the store's rows included: it is in
// the process) and the time of a send, without a limit on the memory of nonces and with one
// whose half for whole messages the sends pass (the older ones are kept as hashes: no send
// queries the store).
func BenchmarkNonceMemoryHeap(b *testing.B) {
	const n = 20000
	for _, bc := range []struct {
		name  string
		limit int
	}{{"unbounded", 1 << 40}, {"limit=4MiB", 4 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			var grown, took float64
			for b.Loop() {
				w := world.New(b)
				app := w.App(devseed.AppSpec{Name: "Game"})
				svc := &lobbies.Service{Store: w.Store, Clock: w.Clock, IDs: w.IDs, Logger: w.Log, Notifier: discard{}, NonceMemory: bc.limit}
				onPostgres(svc)
				svc.Start()
				mux := http.NewServeMux()
				svc.Register(mux)
				auth := w.Token(w.User("alice"), app, world.SocialScopes())
				var l lobby
				apicheck.Client{T: b, Handler: mux}.Do("PUT", "/lobbies", auth, map[string]any{"secret": "s", "idle_timeout_seconds": 3600}).OK(b, http.StatusOK, &l)
				ctx := context.Background()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				for i := range n {
					body := strconv.AppendInt([]byte(`{"content":"hello","enforce_nonce":true,"nonce":"`), int64(1e9+i), 10)
					if status, out := svc.SendOverGateway(ctx, auth, l.ID, append(body, `"}`...))(); status != http.StatusOK {
						require.Equal(b, http.StatusOK, status, "%s", out)
					}
					w.Clock.Advance(time.Millisecond)
				}
				took = float64(time.Since(start).Nanoseconds()) / n
				runtime.GC()
				runtime.ReadMemStats(&after)
				grown = float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
				runtime.KeepAlive(svc)
				svc.Close()
			}
			b.ReportMetric(grown/(1<<20), "heap-MiB")
			b.ReportMetric(grown/n, "heap-B/send")
			b.ReportMetric(took, "ns/send")
		})
	}
}
