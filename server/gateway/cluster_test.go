package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/internal/outbox"
	gwire "sdkpp/wire/gateway"
	"sdkpp/wire/voice"
)

// memBus is a bus in memory: one log, read by each subscribed hub on a goroutine of its own
// in log order, as JetStream's stream is.
type memBus struct {
	mu   sync.Mutex
	cond *sync.Cond
	log  [][]byte
	ids  map[string]uint64 // PublishID's ids: stored once each
	read map[*Hub]int      // how many messages each subscribed hub has been given (readAll)
	done bool
	wg   sync.WaitGroup
}

func newMemBus(t *testing.T) *memBus {
	b := &memBus{read: map[*Hub]int{}}
	b.cond = sync.NewCond(&b.mu)
	t.Cleanup(func() {
		b.mu.Lock()
		b.done = true
		b.cond.Broadcast()
		b.mu.Unlock()
		b.wg.Wait()
	})
	return b
}

func (b *memBus) Publish(_ context.Context, msg []byte) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = append(b.log, msg)
	b.cond.Broadcast()
	return uint64(len(b.log)), nil
}

func (b *memBus) PublishID(_ context.Context, msg []byte, id string) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq, ok := b.ids[id]; ok {
		return seq, nil
	}
	b.log = append(b.log, msg)
	b.cond.Broadcast()
	if b.ids == nil {
		b.ids = map[string]uint64{}
	}
	b.ids[id] = uint64(len(b.log))
	return uint64(len(b.log)), nil
}

func (b *memBus) Read(_ context.Context, first, last uint64, handle func(uint64, []byte)) error {
	b.mu.Lock()
	msgs := append([][]byte(nil), b.log[first-1:last]...)
	b.mu.Unlock()
	for i, m := range msgs {
		handle(first+uint64(i), m)
	}
	return nil
}

// identifyOnBus is identify on a hub with a bus, whose READY is numbered after the bus's
// messages read so far.
func (c *client) identifyOnBus(token string) gwire.Ready {
	c.t.Helper()
	c.send(gwire.OpIdentify, identifyData(token))
	var r gwire.Ready
	require.NoError(c.t, json.Unmarshal(c.expectOp(gwire.OpDispatch).D, &r))
	return r
}

// node starts a hub on b, numbered id, that reads b.
func (b *memBus) node(t *testing.T, id int) *env {
	e := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay = b, id, b.Read })
	b.subscribe(e.hub)
	return e
}

// readAll waits until h has been given every message published so far: what a node saw of them
// is then settled.
func (b *memBus) readAll(t *testing.T, h *Hub) {
	t.Helper()
	b.mu.Lock()
	published := len(b.log)
	b.mu.Unlock()
	waitFor(t, "the node to read the bus", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.read[h] >= published
	})
}

// subscribe delivers every message to h, in order, until the test ends or stop is called
// (the node is dead: it reads nothing more).
func (b *memBus) subscribe(h *Hub) (stop func()) {
	stopped := false
	b.wg.Add(1)
	go func() { // owned by the test's cleanup, which ends and waits for it
		defer b.wg.Done()
		next := 0
		for {
			b.mu.Lock()
			for next == len(b.log) && !b.done && !stopped {
				b.cond.Wait()
			}
			if b.done || stopped {
				b.mu.Unlock()
				return
			}
			msg := b.log[next]
			next++
			b.mu.Unlock()
			h.Deliver(uint64(next), msg)
			b.mu.Lock()
			b.read[h] = next
			b.mu.Unlock()
		}
	}()
	return func() {
		b.mu.Lock()
		stopped = true
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

// Two hubs on one bus: a dispatch made on B reaches a session on A, numbered from the bus; A's
// session counts as online on B; the session, dropped from A, resumes on B with what it missed
// and no READY, and A lets it go; ending the user's sessions on B ends them on A too.
func TestHubsShareSessionsThroughTheBus(t *testing.T) {
	bus := newMemBus(t)
	var lagMu sync.Mutex
	kinds := map[string]int{}
	node := func(id int) *env {
		e := newEnv(t, func(c *Config) {
			c.Bus, c.Node, c.Replay = bus, id, bus.Read
			c.OnBusDelivered = func(kind string, sent, delivered time.Time) {
				lagMu.Lock()
				kinds[kind]++
				lagMu.Unlock()
			}
		})
		bus.subscribe(e.hub)
		return e
	}
	a, b := node(1), node(2)
	c := a.dial()
	c.send(gwire.OpIdentify, identifyData("user-7"))
	ready := c.expectOp(gwire.OpDispatch)
	var r gwire.Ready
	require.NoError(t, json.Unmarshal(ready.D, &r))
	waitFor(t, "B to know the session", func() bool { return b.hub.Online(7) })
	assert.True(t, b.hub.OnlineApp(testApp, 7))

	b.hub.Dispatch(7, "FIRST", map[string]int{"n": 1})
	first := c.expectOp(gwire.OpDispatch)
	require.Equal(t, "FIRST", deref(first.T))
	assert.Zero(t, *first.S&(1<<busmsg.Shift-1), "a bus dispatch is numbered from the bus")
	c.drop()
	waitFor(t, "A to let the connection go", func() bool { return a.hub.Sessions(7) == 0 })
	b.hub.Dispatch(7, "MISSED", map[string]int{"n": 2})
	// Read by B before the resume: else B replays the bus only up to what it read, writes
	// RESUMED, and then MISSED as any dispatch that comes after (as it should, but not what
	// this test looks at).
	waitFor(t, "B to read MISSED", func() bool {
		lagMu.Lock()
		defer lagMu.Unlock()
		return kinds["MISSED"] == 2
	})

	d := b.dial()
	d.resume("user-7", r.SessionID, *first.S)
	missed := d.expectOp(gwire.OpDispatch)
	assert.Equal(t, "MISSED", deref(missed.T), "the missed dispatch, replayed from the bus")
	assert.Greater(t, *missed.S, *first.S)
	resumed := d.expectOp(gwire.OpDispatch)
	assert.Equal(t, gwire.EventResumed, deref(resumed.T))
	assert.Equal(t, 1, b.hub.Sessions(7))
	waitFor(t, "A to forget the session", func() bool { return len(a.hub.UserSessions(7)) == 0 })
	assert.True(t, a.hub.Online(7), "A sees the user online on B")

	a.hub.EndSessions(7)
	d.expectClose(gwire.CloseAuthenticationFailed)
	waitFor(t, "the user offline everywhere", func() bool { return !a.hub.Online(7) && !b.hub.Online(7) })
	lagMu.Lock()
	defer lagMu.Unlock()
	assert.Equal(t, 2, kinds["FIRST"], "each node measured the lag of each message")
	assert.Positive(t, kinds["session"])
}

// recorder records what a hub tells of its sessions' ends: each callback's user, by kind.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(kind string, userID uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, kind+":"+strconv.FormatUint(userID, 10))
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// seen counts the events ev recorded and not yet taken.
func (r *recorder) seen(ev string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e == ev {
			n++
		}
	}
	return n
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func (r *recorder) VoiceStateUpdate(Session, voice.StateUpdate) {}
func (r *recorder) VoiceKeys(Session, voice.Keys)               {}
func (r *recorder) VoiceSessionGone(s Session)                  { r.add("voice", s.UserID) }

// A node that stops without a word (its connections are never closed) and is found down: the
// node that found it makes its connected sessions detached on every node, so the users are
// offline everywhere, and ends what their connections held once for the cluster (voice, the
// last connection, the session's end for presence); a session already resumed elsewhere is
// untouched, and a session of the dead node can still be resumed within the window.
func TestNodeDownEndsItsSessionsConnections(t *testing.T) {
	bus := newMemBus(t)
	stops := map[int]func(){}
	node := func(id int) (*env, *recorder) {
		r := &recorder{}
		e := newEnv(t, func(c *Config) {
			c.Bus, c.Node, c.Replay, c.Voice = bus, id, bus.Read, r
			c.OnConnection = func(who Identity, connected bool) {
				if !connected {
					r.add("offline", who.UserID)
				}
			}
			c.OnSession = func(who Identity) { r.add("session", who.UserID) }
		})
		stops[id] = bus.subscribe(e.hub)
		return e, r
	}
	a, ra := node(1)
	b, rb := node(2)
	c, rc := node(3)
	seven := a.dial()
	seven.send(gwire.OpIdentify, identifyData("user-7"))
	var r7 gwire.Ready
	require.NoError(t, json.Unmarshal(seven.expectOp(gwire.OpDispatch).D, &r7))
	eight := a.dial()
	eight.send(gwire.OpIdentify, identifyData("user-8"))
	ready8 := eight.expectOp(gwire.OpDispatch)
	var r8 gwire.Ready
	require.NoError(t, json.Unmarshal(ready8.D, &r8))
	waitFor(t, "B and C to know the sessions", func() bool {
		return b.hub.Online(7) && b.hub.Online(8) && c.hub.Online(7) && c.hub.Online(8)
	})
	// User 8's client saw node A go first, and resumed on C; user 7's did not yet.
	eight.drop()
	// A ends the connection's hold (OnSession once more) after it lets it go.
	waitFor(t, "A to let user 8's connection go", func() bool { return a.hub.Sessions(8) == 0 && ra.seen("session:8") == 2 })
	moved := c.dial()
	moved.resume("user-8", r8.SessionID, *ready8.S)
	require.Equal(t, gwire.EventResumed, deref(moved.expectOp(gwire.OpDispatch).T))
	waitFor(t, "B to know user 8 is on C", func() bool { return b.hub.OnlineApp(testApp, 8) })
	rb.take()
	rc.take()

	// Taken for dead while alive (its heartbeats were late): A tells of its sessions again,
	// and its users' presence and lobby states are run again.
	ra.take()
	b.hub.NodeDown(1, a.hub.Life())
	waitFor(t, "A to tell again", func() bool { return ra.count() >= 1 })
	assert.Equal(t, []string{"session:7"}, ra.take(), "OnSession again for user 7, A's only connected user")
	waitFor(t, "B to end user 7's connection", func() bool { return rb.count() >= 3 })
	rb.take()
	waitFor(t, "user 7 online on B again, as A told after", func() bool { return b.hub.Online(7) })

	// Now A dies for good: it reads and writes nothing more, and is found down.
	stops[1]()
	b.hub.NodeDown(1, a.hub.Life())
	waitFor(t, "B to end user 7's connection", func() bool { return rb.count() >= 3 })
	assert.Equal(t, []string{"voice:7", "offline:7", "session:7"}, rb.take(), "once, on the node that found A down")
	assert.False(t, b.hub.Online(7))
	b.hub.Dispatch(8, "MARK", map[string]int{}) // read by C after the node-down message
	require.Equal(t, "MARK", deref(moved.expectOp(gwire.OpDispatch).T))
	assert.False(t, c.hub.Online(7), "offline on every node")
	assert.True(t, c.hub.Online(8) && b.hub.Online(8), "the session resumed elsewhere is untouched")
	assert.Empty(t, rc.take(), "only the node that found A down ends the connections")

	// User 7's client comes back within the resume window, on C.
	c.clk.Advance(DefaultResumeWindow / 2)
	back := c.dial()
	back.resume("user-7", r7.SessionID, 1)
	resumed := back.expectOp(gwire.OpDispatch)
	assert.Equal(t, gwire.EventResumed, deref(resumed.T))
	waitFor(t, "user 7 online again", func() bool { return b.hub.Online(7) })
	assert.Equal(t, 1, c.hub.Sessions(7))
}

// refusingBus is a bus that refuses every publish.
type refusingBus struct{ *memBus }

func (refusingBus) PublishID(context.Context, []byte, string) (uint64, error) {
	return 0, errors.New("the bus is unreachable")
}

// memOutbox is an outbox in memory.
type memOutbox struct {
	mu   sync.Mutex
	next uint64
	rows map[uint64]Staged
	keys map[uint64]string
}

func (o *memOutbox) AddOutbox(_ context.Context, key string, data []byte, _ time.Time) (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rows == nil {
		o.rows, o.keys = map[uint64]Staged{}, map[uint64]string{}
	}
	o.next++
	o.rows[o.next], o.keys[o.next] = Staged{ID: o.next, Data: data}, key
	return o.next, nil
}

// release deletes what h published, as the release of its order lock does.
func (o *memOutbox) release(h *Hub) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range h.Published() {
		delete(o.rows, id)
	}
}

// stageAll stores msgs in the outbox under key, as a change's transaction does (StageEach).
func (o *memOutbox) stageAll(t *testing.T, key string, msgs [][]byte) []Staged {
	t.Helper()
	ss := make([]Staged, len(msgs))
	for i, m := range msgs {
		id, err := o.AddOutbox(context.Background(), key, m, time.Time{})
		require.NoError(t, err)
		ss[i] = Staged{ID: id, Data: m}
	}
	return ss
}

// flakyBus is a memBus that refuses, once each, the messages with the ids in refuse (a bus that
// took part of what a node sent).
type flakyBus struct {
	*memBus
	refuse map[string]bool
}

func (b flakyBus) PublishID(ctx context.Context, msg []byte, id string) (uint64, error) {
	b.mu.Lock()
	refused := b.refuse[id]
	delete(b.refuse, id)
	b.mu.Unlock()
	if refused {
		return 0, errors.New("the bus did not take it")
	}
	return b.memBus.PublishID(ctx, msg, id)
}

// dispatches counts the dispatches of event the bus holds.
func (b *memBus) dispatches(t *testing.T, event string) int {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, m := range b.log {
		var e busmsg.Envelope
		require.NoError(t, busmsg.Decode(m, &e))
		for _, d := range e.Dispatches() {
			if d.Event == event {
				n++
			}
		}
	}
	return n
}

// left is what key holds, in id order.
func (o *memOutbox) left(key string) []Staged {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Staged
	for id, k := range o.keys {
		if _, ok := o.rows[id]; ok && k == key {
			out = append(out, o.rows[id])
		}
	}
	slices.SortFunc(out, func(a, b Staged) int { return int(a.ID) - int(b.ID) })
	return out
}

// The transactional outbox: a dispatch staged with its change reaches a session on another node
// exactly once and in order, whether its node dies after the commit and before the publish (the
// next holder of the order lock relays it) or after the publish and before deleting it (the
// relay's publish is stored once by the bus).
func TestStagedDispatchesSurviveTheirNode(t *testing.T) {
	bus := newMemBus(t)
	box := &memOutbox{}
	node := func(id int) (*env, func()) {
		e := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay, c.Outbox = bus, id, bus.Read, box })
		return e, bus.subscribe(e.hub)
	}
	a, stopA := node(1)
	b, _ := node(2)
	c, _ := node(3)
	player := c.dial()
	player.send(gwire.OpIdentify, identifyData("user-7"))
	player.expectOp(gwire.OpDispatch) // READY
	waitFor(t, "A and B to know the session", func() bool { return a.hub.Online(7) && b.hub.Online(7) })
	ctx := context.Background()
	const key = "lobby:1"
	stage := func(h *Hub, n int) func() {
		t.Helper()
		publish, err := h.Stage(ctx, box, key, []outbox.Dispatch{{Users: []uint64{7}, App: testApp, Event: "MESSAGE", Data: map[string]int{"n": n}}})
		require.NoError(t, err)
		return publish
	}

	stage(a.hub, 1) // committed; A dies before it publishes
	stopA()
	require.Len(t, box.left(key), 1)
	require.True(t, b.hub.Relay(box.left(key))) // B takes the lock next
	box.release(b.hub)
	assert.Empty(t, box.left(key), "relayed, and deleted with the lock's release")
	stage(b.hub, 2)()
	box.release(b.hub)

	stage(b.hub, 3)() // published; B dies before its lock's release deletes it
	b.hub.Published()
	require.Len(t, box.left(key), 1)
	require.True(t, c.hub.Relay(box.left(key))) // C takes the lock next: the bus stores it once
	stage(c.hub, 4)()
	box.release(c.hub)

	// A node whose bus refuses cannot relay: the dispatch stays, and it says so (its lock is
	// then refused); the next node relays it.
	stage(c.hub, 5) // committed; C dies before it publishes
	refusing := newEnv(t, func(cf *Config) { cf.Bus, cf.Node, cf.Outbox = refusingBus{bus}, 4, box })
	assert.False(t, refusing.hub.Relay(box.left(key)))
	require.Len(t, box.left(key), 1)
	require.True(t, b.hub.Relay(box.left(key)))
	box.release(b.hub)

	// Groups staged together (StageEach): one message of the bus each, published and deleted;
	// a group published whose node died before the delete is relayed by the next holder and
	// stored once.
	d := newEnv(t, func(cf *Config) { cf.Bus, cf.Node, cf.Replay, cf.Outbox = bus, 5, bus.Read, box })
	bus.subscribe(d.hub)
	group := func(from, to int) []Staged {
		var ds []AppDispatch
		for n := from; n <= to; n++ {
			ds = append(ds, AppDispatch{UserIDs: []uint64{7}, Event: "MESSAGE", Data: map[string]int{"n": n}})
		}
		return box.stageAll(t, key, d.hub.StageEach(testApp, ds))
	}
	require.True(t, d.hub.PublishStaged(group(6, 8)))
	box.release(d.hub)
	assert.Empty(t, box.left(key), "published and deleted")
	require.True(t, d.hub.PublishStaged(group(9, 10)))
	d.hub.Published() // D dies before its lock's release
	require.Len(t, box.left(key), 1, "one row for the group")
	require.True(t, b.hub.Relay(box.left(key)))
	box.release(b.hub)
	assert.Empty(t, box.left(key))

	for n := 1; n <= 10; n++ {
		p := player.expectOp(gwire.OpDispatch)
		assert.Equal(t, "MESSAGE", deref(p.T))
		assert.JSONEq(t, `{"n":`+strconv.Itoa(n)+`}`, string(p.D), "in order, once each")
	}
	player.heartbeat() // nothing more came before the heartbeat's answer
	assert.Equal(t, 10, bus.dispatches(t, "MESSAGE"), "the bus holds each once")
	bus.mu.Lock()
	defer bus.mu.Unlock()
	carrying := 0
	for _, m := range bus.log {
		if bytes.Contains(m, []byte(`"e":"MESSAGE"`)) {
			carrying++
		}
	}
	assert.Equal(t, 5+2, carrying, "five alone and two groups")
}

// A bus that takes part of what is staged: the publish stops at the first dispatch it refuses,
// whose node publishes none after it (the relay would publish it after them, and the SDK would
// drop it as not newer); the next holder of the lock publishes the rest, in order, once each.
func TestStagedPartlyTakenKeepsOrder(t *testing.T) {
	bus := newMemBus(t)
	box := &memOutbox{}
	flaky := flakyBus{memBus: bus, refuse: map[string]bool{}}
	a := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay, c.Outbox = flaky, 1, bus.Read, box })
	bus.subscribe(a.hub)
	b := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay, c.Outbox = bus, 2, bus.Read, box })
	bus.subscribe(b.hub)
	player := a.dial()
	player.send(gwire.OpIdentify, identifyData("user-7"))
	player.expectOp(gwire.OpDispatch) // READY
	const key = "lobby:1"
	var staged []Staged
	for n := 1; n <= 3; n++ { // three changes' dispatches, left by a node that died
		ds := []AppDispatch{{UserIDs: []uint64{7}, Event: "MESSAGE", Data: map[string]int{"n": n}}}
		staged = append(staged, box.stageAll(t, key, a.hub.StageEach(testApp, ds))...)
	}
	flaky.refuse[OutboxMsgID(staged[1].ID)] = true

	assert.False(t, a.hub.Relay(staged), "the second was refused")
	box.release(a.hub)
	assert.Equal(t, staged[1:], box.left(key), "the first published and deleted; the rest wait")
	assert.Equal(t, 1, bus.dispatches(t, "MESSAGE"), "the third was not published before the second")
	require.True(t, b.hub.Relay(box.left(key)))
	box.release(b.hub)
	assert.Empty(t, box.left(key))
	for n := 1; n <= 3; n++ {
		p := player.expectOp(gwire.OpDispatch)
		assert.JSONEq(t, `{"n":`+strconv.Itoa(n)+`}`, string(p.D), "in order, once each")
	}
	player.heartbeat()
	assert.Equal(t, 3, bus.dispatches(t, "MESSAGE"))
}

// An outbox row that a node of the previous build staged, a group whose dispatches carry their
// users inline (no table of user lists), is relayed and delivered as it was staged, and
// replayed from the bus to a session resumed on another node (an upgrade).
func TestPreviousBuildsGroupRelayedAndReplayed(t *testing.T) {
	bus := newMemBus(t)
	box := &memOutbox{}
	a := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay, c.Outbox = bus, 1, bus.Read, box })
	bus.subscribe(a.hub)
	b := bus.node(t, 2)
	c := a.dial()
	r := c.identifyOnBus("user-7")
	waitFor(t, "B to know the session", func() bool { return b.hub.Online(7) })
	var group []busmsg.Dispatch
	for n := 1; n <= 2; n++ {
		group = append(group, busmsg.Dispatch{Users: busmsg.Users{7, 8}, App: testApp, Event: "MESSAGE",
			Data: json.RawMessage(`{"n":` + strconv.Itoa(n) + `}`)})
	}
	old, err := json.Marshal(busmsg.Envelope{Type: busmsg.TypeGroup, Group: group})
	require.NoError(t, err)
	require.NotContains(t, string(old), `"ut"`, "the previous build's form")
	require.True(t, b.hub.Relay(box.stageAll(t, "lobby:1", [][]byte{old})))
	var seqs []int64
	for n := 1; n <= 2; n++ {
		p := c.expectOp(gwire.OpDispatch)
		assert.JSONEq(t, `{"n":`+strconv.Itoa(n)+`}`, string(p.D), "relayed, in order")
		seqs = append(seqs, *p.S)
	}
	c.drop()
	waitFor(t, "A to let the connection go", func() bool { return a.hub.Sessions(7) == 0 })
	d := b.dial()
	d.resume("user-7", r.SessionID, seqs[0])
	p := d.expectOp(gwire.OpDispatch)
	assert.JSONEq(t, `{"n":2}`, string(p.D), "replayed from the bus")
	assert.Equal(t, seqs[1], *p.S)
	assert.Equal(t, gwire.EventResumed, deref(d.expectOp(gwire.OpDispatch).T))
}

// A group crosses the bus as one message: its dispatches are numbered up to the message's
// number, and a session that had only the first of them, resumed on another node, is replayed
// the others with the numbers they had.
func TestGroupResumesWithinIt(t *testing.T) {
	bus := newMemBus(t)
	a, b := bus.node(t, 1), bus.node(t, 2)
	c := a.dial()
	r := c.identifyOnBus("user-7")
	waitFor(t, "B to know the session", func() bool { return b.hub.Online(7) })
	var ds []AppDispatch
	for n := 1; n <= 3; n++ {
		ds = append(ds, AppDispatch{UserIDs: []uint64{7}, Event: "MESSAGE", Data: map[string]int{"n": n}})
	}
	before := len(bus.log)
	b.hub.DispatchAppEach(testApp, ds)
	var seqs []int64
	for n := 1; n <= 3; n++ {
		p := c.expectOp(gwire.OpDispatch)
		assert.JSONEq(t, `{"n":`+strconv.Itoa(n)+`}`, string(p.D))
		seqs = append(seqs, *p.S)
	}
	bus.mu.Lock()
	m := uint64(len(bus.log))
	bus.mu.Unlock()
	require.Equal(t, before+1, int(m), "one message of the bus")
	assert.Equal(t, []int64{int64(m)<<busmsg.Shift - 2, int64(m)<<busmsg.Shift - 1, int64(m) << busmsg.Shift}, seqs)
	c.drop()
	waitFor(t, "A to let the connection go", func() bool { return a.hub.Sessions(7) == 0 })

	d := b.dial()
	d.resume("user-7", r.SessionID, seqs[0])
	for n := 2; n <= 3; n++ {
		p := d.expectOp(gwire.OpDispatch)
		assert.JSONEq(t, `{"n":`+strconv.Itoa(n)+`}`, string(p.D), "replayed from within the group")
		assert.Equal(t, seqs[n-1], *p.S)
	}
	assert.Equal(t, gwire.EventResumed, deref(d.expectOp(gwire.OpDispatch).T))
}

// Sessions whose tokens grant the same scopes share one slice of them, and a session's note,
// which every other node keeps, carries none.
func TestScopesSharedAndLeftOutOfNotes(t *testing.T) {
	var sets scopeSets
	a := sets.intern([]string{"openid", "sdk.social_layer"})
	b := sets.intern([]string{"openid", "sdk.social_layer"})
	require.Len(t, b, 2)
	assert.Same(t, &a[0], &b[0], "one slice for one set")
	c := sets.intern([]string{"openid"})
	assert.NotSame(t, &a[0], &c[0])
	n := noteOf(&session{id: "s", who: Identity{UserID: 7, AppID: testApp, Scopes: a}}, busmsg.NoteLive)
	assert.Nil(t, n.Who.Scopes)
	assert.Equal(t, uint64(7), n.Who.UserID)
}

// A dispatch to one session of another node crosses the bus to that session only: the user's
// session on the dispatching node does not get it, and gets what the bus carried next.
func TestDispatchSessionReachesAnotherNode(t *testing.T) {
	bus := newMemBus(t)
	a, b := bus.node(t, 1), bus.node(t, 2)
	onA := a.dial()
	r := onA.identifyOnBus("user-7")
	onB := b.dial()
	onB.send(gwire.OpIdentify, identifyData("user-7"))
	onB.expectOp(gwire.OpDispatch) // READY
	waitFor(t, "B to know A's session", func() bool {
		b.hub.mu.Lock()
		defer b.hub.mu.Unlock()
		return b.hub.remote[r.SessionID] != nil
	})

	require.True(t, b.hub.DispatchSession(r.SessionID, "ONLY_A", map[string]int{"n": 1}))
	b.hub.Dispatch(7, "BOTH", map[string]int{"n": 2})
	got := onA.expectOp(gwire.OpDispatch)
	assert.Equal(t, "ONLY_A", deref(got.T))
	assert.Zero(t, *got.S&(1<<busmsg.Shift-1), "numbered from the bus")
	assert.Equal(t, "BOTH", deref(onA.expectOp(gwire.OpDispatch).T))
	assert.Equal(t, "BOTH", deref(onB.expectOp(gwire.OpDispatch).T), "B's own session did not get A's")
	assert.False(t, b.hub.DispatchSession("no-such-session", "NONE", map[string]int{}))
}

// A note a node sent before the session moved on, read after it (node A let the connection go
// and told so, while the client had already resumed on C), is stale: C keeps the session it
// resumed, and B still counts the user as online on C.
func TestStaleNoteLeavesAMovedSessionAlone(t *testing.T) {
	bus := newMemBus(t)
	a, b, c := bus.node(t, 1), bus.node(t, 2), bus.node(t, 3)
	eight := a.dial()
	eight.send(gwire.OpIdentify, identifyData("user-8"))
	ready := eight.expectOp(gwire.OpDispatch)
	var r gwire.Ready
	require.NoError(t, json.Unmarshal(ready.D, &r))
	waitFor(t, "C to know the session", func() bool { return c.hub.Online(8) })
	a.hub.mu.Lock()
	stale := noteOf(a.hub.sessions[r.SessionID], busmsg.NoteDetached) // what A says once the connection goes
	a.hub.mu.Unlock()

	moved := c.dial()
	moved.resume("user-8", r.SessionID, *ready.S)
	require.Equal(t, gwire.EventResumed, deref(moved.expectOp(gwire.OpDispatch).T))
	waitFor(t, "A to let the session go", func() bool { return a.hub.Sessions(8) == 0 })
	a.hub.note(stale) // read by every node after C's note of the resumed session

	b.hub.Dispatch(8, "MARK", map[string]int{}) // read by C after the stale note
	require.Equal(t, "MARK", deref(moved.expectOp(gwire.OpDispatch).T), "the resumed session stays on C")
	assert.Equal(t, 1, c.hub.Sessions(8))
	bus.readAll(t, b.hub) // B has read the stale note too, not only what came before it
	assert.True(t, b.hub.OnlineApp(testApp, 8), "B counts the user online on C")
}
