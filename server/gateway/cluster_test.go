package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// memBus is a bus in memory: one log, read by each subscribed hub on a goroutine of its own
// in log order, as JetStream's stream is.
type memBus struct {
	mu   sync.Mutex
	cond *sync.Cond
	log  [][]byte
	done bool
	wg   sync.WaitGroup
}

func newMemBus(t *testing.T) *memBus {
	b := &memBus{}
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

func (b *memBus) Read(_ context.Context, first, last uint64, handle func(uint64, []byte)) error {
	b.mu.Lock()
	msgs := append([][]byte(nil), b.log[first-1:last]...)
	b.mu.Unlock()
	for i, m := range msgs {
		handle(first+uint64(i), m)
	}
	return nil
}

// subscribe delivers every message to h, in order, until the test ends.
func (b *memBus) subscribe(h *Hub) {
	b.wg.Add(1)
	go func() { // owned by the test's cleanup, which ends and waits for it
		defer b.wg.Done()
		next := 0
		for {
			b.mu.Lock()
			for next == len(b.log) && !b.done {
				b.cond.Wait()
			}
			if b.done {
				b.mu.Unlock()
				return
			}
			msg := b.log[next]
			next++
			b.mu.Unlock()
			h.Deliver(uint64(next), msg)
		}
	}()
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
	assert.Zero(t, *first.S&(1<<busShift-1), "a bus dispatch is numbered from the bus")
	c.drop()
	waitFor(t, "A to let the connection go", func() bool { return a.hub.Sessions(7) == 0 })
	b.hub.Dispatch(7, "MISSED", map[string]int{"n": 2})

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

// A dispatch to one session of another node crosses the bus to that session only: the user's
// session on the dispatching node does not get it, and gets what the bus carried next.
func TestDispatchSessionReachesAnotherNode(t *testing.T) {
	bus := newMemBus(t)
	node := func(id int) *env {
		e := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay = bus, id, bus.Read })
		bus.subscribe(e.hub)
		return e
	}
	a, b := node(1), node(2)
	onA := a.dial()
	onA.send(gwire.OpIdentify, identifyData("user-7"))
	var r gwire.Ready
	require.NoError(t, json.Unmarshal(onA.expectOp(gwire.OpDispatch).D, &r))
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
	assert.Zero(t, *got.S&(1<<busShift-1), "numbered from the bus")
	assert.Equal(t, "BOTH", deref(onA.expectOp(gwire.OpDispatch).T))
	assert.Equal(t, "BOTH", deref(onB.expectOp(gwire.OpDispatch).T), "B's own session did not get A's")
	assert.False(t, b.hub.DispatchSession("no-such-session", "NONE", map[string]int{}))
}
