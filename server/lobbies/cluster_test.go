package lobbies_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/lobbies"
	"sdkpp/server/order"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// fakeOrder is a cluster's order lock for one process: it records each hold and, while gate is
// set, keeps the first holder waiting until gate is closed. Its holders commit on the service's
// store, and the release records the largest id made (as a commit under it would).
type fakeOrder struct {
	mu    sync.Mutex
	held  map[string]bool
	last  map[string]uint64
	holds []string
	gate  chan struct{}
}

// lockOn is the lock, whose holders commit on st.
func (o *fakeOrder) lockOn(st store.Store) order.Lock {
	return func(_ context.Context, keys []string, last func() uint64) (order.Held, error) {
		key := keys[0] // a lobby's lock has one key
		o.mu.Lock()
		gate := o.gate
		o.gate = nil
		o.mu.Unlock()
		if gate != nil {
			<-gate
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.held[key] {
			panic("the order lock is held twice")
		}
		if o.held == nil {
			o.held = map[string]bool{}
		}
		o.held[key] = true
		o.holds = append(o.holds, key)
		return order.Held{Floor: o.last[key], Store: st, Release: func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.held[key] = false
			if last != nil {
				o.last[key] = max(o.last[key], last())
			}
		}}, nil
	}
}

// batchRecorder is a recorder that also takes events together (lobbies.BatchNotifier) and
// counts the calls of each kind.
type batchRecorder struct {
	*recorder
	batches, singles int
}

func (b *batchRecorder) LobbyEvent(appID uint64, userIDs []uint64, event string, data any) {
	b.mu.Lock()
	b.singles++
	b.mu.Unlock()
	b.recorder.LobbyEvent(appID, userIDs, event, data)
}

func (b *batchRecorder) LobbyEvents(appID uint64, events []lobbies.Event) {
	b.mu.Lock()
	b.batches++
	b.mu.Unlock()
	for _, e := range events {
		b.recorder.LobbyEvent(appID, e.UserIDs, e.Name, e.Data)
	}
}

// On a cluster, the messages sent while a group of one lobby is being stored and published wait
// and go together as the next group, in one call of a BatchNotifier, and several groups go under
// one hold of the lobby's order lock; every sender gets its own message, every member every
// message once, in id order, and the history holds them all. A member's messages keep their
// order.
func TestClusterSendsMessagesInGroups(t *testing.T) {
	sqliteOnly(t, inBubble)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		gate := make(chan struct{})
		order := &fakeOrder{last: map[string]uint64{}}
		rec := &batchRecorder{recorder: e.rec}
		var epochs int
		e.svc.Order = order.lockOn(e.svc.Store)
		e.svc.Epoch = func(context.Context, string) (uint64, error) { epochs++; return 1, nil }
		e.svc.Notifier = rec
		ps, l := threeInALobby(e)
		e.rec.take()
		holdsBefore, groupsBefore, epochsBefore := len(order.holds), rec.batches+rec.singles, epochs
		order.gate = gate

		// The first send holds the lock and waits at the gate; the others queue behind it.
		const each = 4
		sent := make([][]string, len(ps)) // the ids each sender got back, in its order
		var wg sync.WaitGroup
		path := "/lobbies/" + l.ID + "/messages"
		send := func(i, k int) {
			var m message
			e.do("POST", path, ps[i].auth, map[string]any{"content": "m" + strconv.Itoa(i) + "-" + strconv.Itoa(k)}).OK(t, http.StatusOK, &m)
			sent[i] = append(sent[i], m.ID)
		}
		sends := func(i int) {
			for k := range each {
				send(i, k)
			}
		}
		wg.Go(func() { sends(0) })
		synctest.Wait()
		for i := 1; i < len(ps); i++ {
			wg.Go(func() { sends(i) })
		}
		synctest.Wait() // each of the other senders waits with its first message
		close(gate)
		wg.Wait()
		e.svc.Close() // the send goes on after its senders are answered

		total := len(ps) * each
		holds := len(order.holds) - holdsBefore
		groups := rec.batches + rec.singles - groupsBefore
		epochs -= epochsBefore
		require.Less(t, holds, groups, "one hold per group")
		require.Less(t, groups, total, "one group per message")
		require.GreaterOrEqual(t, groups, each, "a sender's next message came before its previous one was answered")
		require.Equal(t, groups, epochs, "the epoch is read once per group")
		var got []uint64
		for _, ev := range e.rec.take() {
			require.Equal(t, wire.EventLobbyMessageCreate, ev.event)
			require.Len(t, ev.users, len(ps), "every member gets each message")
			m := messageOf(t, ev.data)
			got = append(got, uint64(m.ID))
		}
		require.Len(t, got, total, "deliveries: %v", got)
		require.IsIncreasing(t, got, "delivered out of id order")
		for i, ids := range sent {
			require.Len(t, ids, each, "sender %d", i)
			for k := 1; k < len(ids); k++ {
				a, _ := strconv.ParseUint(ids[k-1], 10, 64)
				b, _ := strconv.ParseUint(ids[k], 10, 64)
				require.Less(t, a, b, "sender %d's messages out of order: %v", i, ids)
			}
		}
		var history []message
		e.do("GET", path+"?limit=200", ps[0].auth, nil).OK(t, http.StatusOK, &history)
		require.Len(t, history, total, "stored messages")
	})
}

// threeInALobby joins alice, bob and carol, players of e's application, to one lobby.
func threeInALobby(e *env) ([]player, lobby) {
	ps := []player{e.user("alice", e.app), e.user("bob", e.app), e.user("carol", e.app)}
	var l lobby
	for _, p := range ps {
		l = e.join(p, "s", map[string]any{"idle_timeout_seconds": 3600})
	}
	return ps, l
}

// stager is a recorder that keeps events in the outbox (lobbies.Stager): each staged event is
// its message's id; PublishStaged checks that the store holds exactly the rows it is given,
// records them and deletes them, or, while refuse is set, refuses them. (It asserts, not
// requires: it runs on the sender's goroutine, which must not end there.)
type stager struct {
	*recorder
	t         *testing.T
	st        store.Store
	key       string
	refuse    bool
	published []uint64 // the messages' ids, in publish order
	calls     int
	hold      chan struct{} // when set, publish number holdAt (from 0) waits until it is closed
	holdAt    int
}

func (s *stager) StageLobbyEvents(_ uint64, events []lobbies.Event) [][]byte {
	data := make([][]byte, len(events))
	for i, ev := range events {
		a, ok := ev.Data.(wire.Appender)
		if assert.True(s.t, ok, "event data %T", ev.Data) {
			var m wire.LobbyMessage
			assert.NoError(s.t, wire.DecodeLobbyMessage(a.AppendJSON(nil), &m))
			data[i] = []byte(strconv.FormatUint(uint64(m.ID), 10))
		}
	}
	return data
}

func (s *stager) PublishStaged(ids []uint64, data [][]byte) bool {
	ctx := context.Background()
	s.mu.Lock()
	hold := s.hold
	if hold != nil && s.calls == s.holdAt {
		s.hold = nil
	} else {
		hold = nil
	}
	s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	left, err := s.st.ListOutbox(ctx, s.key)
	assert.NoError(s.t, err)
	var newest []store.OutboxEvent // after any a refused group left
	if len(left) >= len(ids) {
		newest = left[len(left)-len(ids):]
	}
	if assert.Len(s.t, newest, len(ids), "the outbox holds the group's events") {
		for i, row := range newest {
			assert.Equal(s.t, ids[i], row.ID)
			assert.Equal(s.t, data[i], row.Data)
		}
	}
	s.calls++
	if s.refuse {
		s.refuse = false
		return false
	}
	for _, d := range data {
		id, err := strconv.ParseUint(string(d), 10, 64)
		assert.NoError(s.t, err)
		s.published = append(s.published, id)
	}
	assert.NoError(s.t, s.st.DeleteOutboxes(ctx, ids))
	return true
}

// On a cluster with a Stager, each group's events are stored in the outbox with its messages
// (one row per message, in id order) and published from there once committed; none goes to the
// Notifier directly. A group whose events cannot be published stays in the outbox and ends the
// lock's hold, so that the messages queued behind it go under a new hold (whose holder publishes
// what was left first), and its senders are answered: their messages are stored.
func TestClusterStagesGroupsInTheOutbox(t *testing.T) {
	sqliteOnly(t, inBubble)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		order := &fakeOrder{last: map[string]uint64{}}
		e.svc.Order = order.lockOn(e.svc.Store)
		ps, l := threeInALobby(e)
		st := &stager{recorder: e.rec, t: t, st: e.st, key: "lobby:" + l.ID, refuse: true}
		e.svc.Notifier = st
		e.rec.take()
		holdsBefore := len(order.holds)
		gate := make(chan struct{})
		order.gate = gate

		path := "/lobbies/" + l.ID + "/messages"
		var wg sync.WaitGroup
		var mu sync.Mutex
		var answered []uint64
		send := func(i, k int) {
			var m message
			e.do("POST", path, ps[i].auth, map[string]any{"content": "m" + strconv.Itoa(i) + "-" + strconv.Itoa(k)}).OK(t, http.StatusOK, &m)
			id, err := strconv.ParseUint(m.ID, 10, 64)
			require.NoError(t, err)
			mu.Lock()
			answered = append(answered, id)
			mu.Unlock()
		}
		wg.Go(func() { send(0, 0) })
		synctest.Wait() // the first holds the lock, at the gate
		for i := 1; i < len(ps); i++ {
			wg.Go(func() { send(i, 0) })
		}
		synctest.Wait()
		close(gate) // the first group's publish is refused; the others go under a new hold
		wg.Wait()
		e.svc.Close() // the send goes on after its senders are answered

		require.Len(t, order.holds[holdsBefore:], 2, "a new hold after the refused group")
		require.Equal(t, 2, st.calls, "one publish per group")
		left, err := e.st.ListOutbox(context.Background(), st.key)
		require.NoError(t, err)
		require.Len(t, left, 1, "the refused group waits in the outbox")
		require.Len(t, st.published, len(ps)-1)
		require.IsIncreasing(t, st.published)
		require.Len(t, answered, len(ps), "every sender answered")
		require.Empty(t, e.rec.take(), "nothing published but through the outbox")
		var history []message
		e.do("GET", path+"?limit=200", ps[0].auth, nil).OK(t, http.StatusOK, &history)
		require.Len(t, history, len(ps), "stored messages")
	})
}

// On a cluster with a Stager, a group's senders are answered once it is committed, while it is
// still being published, the one whose request started the hold's send too; a message sent
// meanwhile to the kept lobby joins the next group under the same hold, published after it.
func TestClusterAnswersOnceCommitted(t *testing.T) {
	sqliteOnly(t, inBubble)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		order := &fakeOrder{last: map[string]uint64{}}
		e.svc.Order = order.lockOn(e.svc.Store)
		e.svc.Epoch = func(ctx context.Context, key string) (uint64, error) { return e.st.SharedEpoch(ctx, key) }
		e.svc.EpochChecked = true
		ps, l := threeInALobby(e)
		path := "/lobbies/" + l.ID + "/messages"
		hold, gate := make(chan struct{}), make(chan struct{})
		// The second group's publish waits.
		st := &stager{recorder: e.rec, t: t, st: e.st, key: "lobby:" + l.ID, hold: hold, holdAt: 1}
		e.svc.Notifier = st
		e.rec.take()
		holdsBefore := len(order.holds)
		order.gate = gate
		var answered atomic.Int32
		send := func(p player, content string, id *uint64) {
			var m message
			e.do("POST", path, p.auth, map[string]any{"content": content}).OK(t, http.StatusOK, &m)
			var err error
			*id, err = strconv.ParseUint(m.ID, 10, 64)
			require.NoError(t, err)
			answered.Add(1)
		}
		var wg sync.WaitGroup
		var a1, b1, b2 uint64
		wg.Go(func() { send(ps[0], "a1", &a1) }) // starts the hold's send
		synctest.Wait()                          // at the lock's gate
		wg.Go(func() { send(ps[1], "b1", &b1) })
		synctest.Wait() // queued: the second group
		close(gate)
		synctest.Wait() // the second group committed; its publish waits
		require.EqualValues(t, 2, answered.Load(),
			"the first group's sender is answered, and the second's while its group is published")
		wg.Go(func() { send(ps[1], "b2", &b2) })
		synctest.Wait()
		close(hold)
		wg.Wait()
		e.svc.Close() // the send goes on after its senders are answered

		require.Equal(t, []uint64{a1, b1, b2}, st.published, "published in order, each once")
		require.Equal(t, 3, st.calls, "one publish per group")
		require.Len(t, order.holds[holdsBefore:], 1, "the three groups under one hold")
		require.Empty(t, e.rec.take(), "nothing published but through the outbox")
	})
}

// On a cluster whose commits check the shared epoch, a group of messages to a lobby kept since
// an earlier group is sent without reading the epoch, under the lock kept since (messages sent
// one after the other: one hold). A user's change moves the epoch: the next group's commit is
// refused, and it reads the epoch and the lobby again and is stored. The lock is released once it
// has lingered. Every member gets every message once, in order.
func TestClusterKeepsTheLobbyAndItsLockBetweenGroups(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	order := &fakeOrder{last: map[string]uint64{}}
	var epochs atomic.Int32
	e.svc.Order = order.lockOn(e.svc.Store)
	e.svc.Epoch = func(ctx context.Context, key string) (uint64, error) {
		epochs.Add(1)
		return e.st.SharedEpoch(ctx, key)
	}
	e.svc.EpochChecked = true
	e.svc.LockLinger = 2 * time.Millisecond
	e.svc.Start()
	defer e.svc.Close()
	ps := []player{e.user("alice", e.app), e.user("bob", e.app)}
	var l lobby
	for _, p := range ps {
		l = e.join(p, "s", map[string]any{"idle_timeout_seconds": 3600})
	}
	e.rec.take()
	key := "lobby:" + l.ID
	path := "/lobbies/" + l.ID + "/messages"
	var sent []uint64
	send := func(i int) {
		t.Helper()
		var m message
		e.do("POST", path, ps[i].auth, map[string]any{"content": "m" + strconv.Itoa(len(sent))}).OK(t, http.StatusOK, &m)
		id, err := strconv.ParseUint(m.ID, 10, 64)
		require.NoError(t, err)
		sent = append(sent, id)
	}
	holds := func() int {
		order.mu.Lock()
		defer order.mu.Unlock()
		n := 0
		for _, k := range order.holds {
			if k == key {
				n++
			}
		}
		return n
	}
	held := func() bool {
		order.mu.Lock()
		defer order.mu.Unlock()
		return order.held[key]
	}

	send(0)
	require.Equal(t, 1, holds())
	require.True(t, held(), "kept after the group")
	read := epochs.Load()
	for range 3 {
		send(0)
	}
	require.Equal(t, 1, holds(), "one hold for messages one after the other")
	require.Equal(t, read, epochs.Load(), "a kept lobby's groups read no epoch")

	u, err := e.st.GetUser(ctx, ps[1].id)
	require.NoError(t, err)
	u.GlobalName = "Bobby"
	require.NoError(t, e.st.UpdateUser(ctx, u))
	send(1)
	require.Equal(t, read+1, epochs.Load(), "the refused commit reads the epoch again")
	require.Equal(t, 1, holds())

	e.clock.Advance(2 * time.Millisecond)
	require.False(t, held(), "released once it lingered")
	send(1)
	require.Equal(t, 2, holds(), "a new hold")

	var got []uint64
	for _, ev := range e.rec.take() {
		require.Equal(t, wire.EventLobbyMessageCreate, ev.event)
		require.Len(t, ev.users, len(ps), "every member gets each message")
		got = append(got, uint64(messageOf(t, ev.data).ID))
	}
	require.Equal(t, sent, got, "each message once, in order")
	require.IsIncreasing(t, got)
	var history []message
	e.do("GET", path+"?limit=200", ps[0].auth, nil).OK(t, http.StatusOK, &history)
	require.Len(t, history, len(sent), "stored messages")
}

// A group whose commit finds the shared epoch moved at every checked try is stored by its last
// try, whose epoch and lobby were read after it arrived, without the check: once, delivered once.
func TestClusterGroupStoredWhenTheEpochKeepsMoving(t *testing.T) {
	e := newEnv(t)
	order := &fakeOrder{last: map[string]uint64{}}
	var epochs atomic.Int32
	e.svc.Order = order.lockOn(e.svc.Store)
	e.svc.Epoch = func(ctx context.Context, key string) (uint64, error) {
		epochs.Add(1)
		n, err := e.st.SharedEpoch(ctx, key)
		return n + 1, err // never the store's: every checked commit finds it moved
	}
	e.svc.EpochChecked = true
	ps := []player{e.user("alice", e.app), e.user("bob", e.app)}
	var l lobby
	for _, p := range ps {
		l = e.join(p, "s", map[string]any{"idle_timeout_seconds": 3600})
	}
	e.rec.take()
	path := "/lobbies/" + l.ID + "/messages"
	var m message
	e.do("POST", path, ps[0].auth, map[string]any{"content": "kept"}).OK(t, http.StatusOK, &m)
	require.Equal(t, int32(3), epochs.Load(), "read for each try")
	evs := e.rec.take()
	require.Len(t, evs, 1, "delivered once")
	require.Equal(t, m.ID, strconv.FormatUint(uint64(messageOf(t, evs[0].data).ID), 10))
	var history []message
	e.do("GET", path, ps[0].auth, nil).OK(t, http.StatusOK, &history)
	require.Len(t, history, 1, "stored once")
}

// On a cluster, after a group of several senders, the next group waits a moment (as long as the
// group took, at most) for as many messages: the senders were just answered and send again, and
// their messages go as one group under the same hold rather than as a group of what came first.
func TestClusterGathersTheNextGroup(t *testing.T) {
	sqliteOnly(t, inBubble)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		order := &fakeOrder{last: map[string]uint64{}}
		e.svc.Order = order.lockOn(e.svc.Store)
		ps, l := threeInALobby(e)
		path := "/lobbies/" + l.ID + "/messages"
		hold, gate, again := make(chan struct{}), make(chan struct{}), make(chan struct{})
		// The second group's (b1 and c1) publish waits.
		st := &stager{recorder: e.rec, t: t, st: e.st, key: "lobby:" + l.ID, hold: hold, holdAt: 1}
		e.svc.Notifier = st
		e.rec.take()
		holdsBefore := len(order.holds)
		order.gate = gate
		send := func(p player, content string) {
			e.do("POST", path, p.auth, map[string]any{"content": content}).OK(t, http.StatusOK, nil)
		}
		var wg sync.WaitGroup
		wg.Go(func() { send(ps[0], "a1") }) // starts the hold's send, at the gate
		synctest.Wait()
		for _, p := range ps[1:] {
			wg.Go(func() {
				send(p, "1")
				<-again
				send(p, "2")
			})
		}
		synctest.Wait()
		close(gate)
		synctest.Wait() // b1 and c1, committed and answered, are being published
		require.Equal(t, 1, st.calls, "a1 is published, b1 and c1 wait")
		e.clock.Advance(time.Millisecond) // the group took a millisecond
		close(hold)
		synctest.Wait() // the send waits for the next group
		close(again)
		wg.Wait()
		e.svc.Close()

		require.Len(t, order.holds[holdsBefore:], 1, "b2 and c2 are sent under the hold that waited for them")
		require.Equal(t, 3, st.calls, "b2 and c2 go as one group")
		require.Len(t, st.published, 5)
		require.IsIncreasing(t, st.published)
	})
}
