package presence_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/presence"
	"sdkpp/server/snowflake"
)

// marks requires that the service keeps the marks of want offline users, and no more entries in
// its order of them.
func marks(t *testing.T, s *presence.Service, want int, msg string) {
	t.Helper()
	n, order := s.OfflineMarks()
	require.Equal(t, want, n, "%s: offline marks", msg)
	require.Equal(t, want, order, "%s: entries of their order", msg)
}

// Issue 23: each node of a cluster keeps the version of a user who went offline, so that an older
// share that reaches it late cannot bring the user back online, but only for OfflineWindow from
// that version: no share older than it can arrive after that (see OfflineWindow). Within the
// window a late share is refused; at its end the marks are forgotten, a bounded number per call,
// and what the nodes hold returns to what it was before the users came.
func TestOfflineMarksForgottenAfterWindow(t *testing.T) {
	const n = 5
	e := newEnv(t)
	a, b := newCluster(t, e)
	friend := e.player("friend", e.app)
	marks(t, a.svc, 0, "A before")
	marks(t, b.svc, 0, "B before")

	var users []player
	for i := range n {
		u := e.player("user"+strconv.Itoa(i), e.app)
		e.friends(u, friend, false)
		e.hub.connect(u.id, uint64(e.app.ID), true)
		a.svc.OnSession(u.id, uint64(e.app.ID))
		users = append(users, u)
	}
	online := b.inbox // the users' online presences, as A shared them
	for _, u := range users {
		e.hub.connect(u.id, uint64(e.app.ID), false)
		a.svc.OnSession(u.id, uint64(e.app.ID))
	}
	b.deliver(t)
	marks(t, a.svc, n, "A, where they went offline")
	marks(t, b.svc, n, "B, which A told")

	// Within the window, the online share of a user, older than the offline one, comes late
	// (it crossed the bus late, or another node shared it again): it is refused.
	e.clock.Advance(presence.OfflineWindow - time.Millisecond)
	b.inbox = online[:1]
	b.deliver(t)
	require.Equal(t, "offline", b.seen(t, friend.id, users[0].id).Status, "a late share brought the user back")
	marks(t, b.svc, n, "B within the window")

	// At the end of the window each change forgets at most PruneBatch of the oldest marks.
	e.clock.Advance(time.Millisecond)
	other := e.player("other", e.app)
	require.Positive(t, presence.PruneBatch)
	for calls := 0; ; calls++ {
		want := max(0, n-calls*presence.PruneBatch)
		marks(t, b.svc, want, "B at the end of the window, after "+strconv.Itoa(calls)+" changes")
		if want == 0 {
			break
		}
		b.svc.Apply(other.id, &presence.Shared{Status: "online", Version: e.w.IDs.Next()})
	}
	for calls := 0; ; calls++ {
		want := max(0, n-calls*presence.PruneBatch)
		marks(t, a.svc, want, "A at the end of the window, after "+strconv.Itoa(calls)+" changes")
		if want == 0 {
			break
		}
		a.svc.OnPresence(other.id, uint64(e.app.ID), json.RawMessage(`{"status":"idle"}`))
	}
}

// The window of an offline mark counts from the time in its version, or from when the node took
// it when that is later: a share that crossed the bus late, or a version made on a node whose
// clock is ahead, is kept the whole window all the same.
func TestOfflineWindowBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		age  time.Duration // of the offline version when the node takes it
		kept time.Duration // how long the node keeps it from then
	}{
		{"taken when made", 0, presence.OfflineWindow},
		{"taken late", 30 * time.Second, presence.OfflineWindow},
		{"made on a node whose clock is ahead", -30 * time.Second, presence.OfflineWindow + 30*time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.svc.Share = func(uint64, *presence.Shared) {}
			friend, user, other := e.player("friend", e.app), e.player("user", e.app), e.player("other", e.app)
			e.friends(user, friend, false)
			online := snowflake.At(e.clock.Now().Add(-c.age - time.Minute))
			e.svc.Apply(user.id, &presence.Shared{Status: "online", Version: online})
			e.svc.Apply(user.id, &presence.Shared{Status: "offline", Version: snowflake.At(e.clock.Now().Add(-c.age))})
			marks(t, e.svc, 1, "taken")

			e.clock.Advance(c.kept - time.Millisecond)
			e.svc.Apply(other.id, &presence.Shared{Status: "online", Version: e.w.IDs.Next()}) // a change: prunes
			e.svc.Apply(user.id, &presence.Shared{Status: "online", Version: online})
			require.Equal(t, "offline", (&clusterNode{svc: e.svc}).seen(t, friend.id, user.id).Status, "a late share brought the user back")
			marks(t, e.svc, 1, "within the window")

			e.clock.Advance(time.Millisecond)
			e.svc.Apply(other.id, &presence.Shared{Status: "online", Version: e.w.IDs.Next()})
			marks(t, e.svc, 0, "at the end of the window")
		})
	}
}
