package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/clustertest"
)

// cutBus is a node's bus whose publishes of staged dispatches fail while cut is set: the path
// between a commit and its publish is cut, as when the node dies between the two. With only
// set, the cut takes just the messages only selects, published staged or not.
type cutBus struct {
	gateway.Bus
	cut  atomic.Bool
	only func(msg []byte) bool
}

// refused tells whether msg, published staged or not, is cut.
func (b *cutBus) refused(msg []byte, staged bool) bool {
	return b.cut.Load() && (b.only == nil && staged || b.only != nil && b.only(msg))
}

func (b *cutBus) Publish(ctx context.Context, msg []byte) (uint64, error) {
	if b.refused(msg, false) {
		return 0, errors.New("cut between the commit and the publish")
	}
	return b.Bus.Publish(ctx, msg)
}

func (b *cutBus) PublishID(ctx context.Context, msg []byte, id string) (uint64, error) {
	if b.refused(msg, true) {
		return 0, errors.New("cut between the commit and the publish")
	}
	return b.Bus.PublishID(ctx, msg, id)
}

// startCut starts three nodes on a clock the test advances, the first of them on a cutBus that
// cuts what only selects (nil: every staged publish).
func startCut(t *testing.T, only func(msg []byte) bool) (*clustertest.Cluster, *cutBus, *clock.Offset) {
	t.Helper()
	cut := &cutBus{only: only}
	clk := clock.NewOffset(0)
	t.Cleanup(clk.Stop)
	c := clustertest.StartEach(t, 3, func(i int, cfg *server.Config) {
		if i == 0 {
			cfg.WrapBus = func(b gateway.Bus) gateway.Bus { cut.Bus = b; return cut }
		}
	}, servertest.WithClock(clk))
	return c, cut, clk
}

// A lobby message whose publish never happens after its commit (the path cut on node A) still
// reaches every member once and in order: the next message, sent through node B, first relays
// it from the outbox; and a message left so in a lobby where nothing more is said is relayed
// once its lease is over.
func TestCommittedMessagesOutliveTheirPublish(t *testing.T) {
	c, cut, clk := startCut(t, nil)
	a, b := c.Nodes[0], c.Nodes[1]
	players := []*player{connect(t, a, "ana"), connect(t, b, "ben"), connect(t, c.Nodes[2], "cat")}
	lobby := joinLobby(t, players, "outbox")
	got := make([]*inbox, len(players))
	for i, p := range players {
		got[i] = &inbox{}
		p.SetMessageCreatedCallback(core.Func(got[i].add))
	}
	send := func(p *player, content string) uint64 {
		t.Helper()
		var id uint64
		result(t, content, func(done func(*core.ClientResult)) {
			p.SendLobbyMessage(lobby, content, core.Func(func(r *core.ClientResult, m uint64) { id = m; done(r) }))
		})
		return id
	}
	left := func() int {
		t.Helper()
		keys, err := a.Server.Store().OutboxKeys(context.Background(), clk.Now().Add(24*3600e9))
		require.NoError(t, err)
		return len(keys)
	}

	cut.cut.Store(true)
	first := send(players[0], "stored, never published by A") // ana's answer: the commit succeeded
	cut.cut.Store(false)
	require.Equal(t, 1, left(), "the message waits in the outbox")
	second := send(players[1], "sent through B")
	everyoneHas := func(what string, n int) {
		t.Helper()
		waitFor(t, what, func() bool {
			for _, in := range got {
				if in.len() < n {
					return false
				}
			}
			return true
		})
	}
	everyoneHas("every member to get both", 2)
	// Published rows go at the lock's release, which a node that sent last keeps a moment
	// (lobbies' LockLinger): after the deliveries, not necessarily before them.
	emptied := func() { t.Helper(); waitFor(t, "the outbox to be emptied", func() bool { return left() == 0 }) }
	emptied()

	// Nothing more is said after a cut publish: the relay job takes the message once its
	// lease is over, on whichever node.
	cut.cut.Store(true)
	third := send(players[0], "the last word")
	cut.cut.Store(false)
	require.Equal(t, 1, left())
	clk.Advance(server.OutboxLease)
	everyoneHas("every member to get the last word", 3)
	emptied()
	for i, in := range got {
		in.mu.Lock()
		assert.Equal(t, []uint64{first, second, third}, in.ids, "%s: each once, in commit order", players[i].name)
		in.mu.Unlock()
	}
}
