package cluster

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/servertest/clustertest"
)

// heldPresenceBus is node A's bus, which holds A's presence publishes (its share and its
// PRESENCE_UPDATE dispatches) while armed, until released.
type heldPresenceBus struct {
	gateway.Bus
	armed   *atomic.Bool
	held    chan struct{} // closed once a presence publish waits
	release chan struct{}
	once    *sync.Once
}

func (b heldPresenceBus) Publish(ctx context.Context, msg []byte) (uint64, error) {
	if b.armed.Load() && isPresence(msg) {
		b.once.Do(func() { close(b.held) })
		select {
		case <-b.release:
		case <-ctx.Done():
		}
	}
	return b.Bus.Publish(ctx, msg)
}

// releasingBus is node B's bus: once armed, its first presence share, published, releases what
// node A holds.
type releasingBus struct {
	gateway.Bus
	armed   *atomic.Bool
	release func()
}

func (b releasingBus) Publish(ctx context.Context, msg []byte) (uint64, error) {
	seq, err := b.Bus.Publish(ctx, msg)
	if b.armed.Load() && isPresenceShare(msg) {
		b.release()
	}
	return seq, err
}

// isPresence tells whether msg, a bus message, is a node's share of a presence or a
// PRESENCE_UPDATE dispatch.
func isPresence(msg []byte) bool {
	return isPresenceShare(msg) || bytes.Contains(msg, []byte(`"PRESENCE_UPDATE"`))
}

// isPresenceShare tells whether msg, a bus message, is a node's share of a presence.
func isPresenceShare(msg []byte) bool { return bytes.Contains(msg, []byte(`"o":"presence"`)) }

// Issue 23: one player on two devices, on nodes A and B, changes the rich presence on both at
// once: B changes it without having seen A's change, whose share and dispatches cross the bus
// after B's. Every node ends with the same presence, B's (the later change), and so does the
// friend's SDK on node C.
func TestConcurrentPresenceConvergesOnEveryNode(t *testing.T) {
	var armed atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	c := clustertest.StartEach(t, 3, func(i int, cfg *server.Config) {
		switch i {
		case 0:
			cfg.WrapBus = func(b gateway.Bus) gateway.Bus {
				return heldPresenceBus{Bus: b, armed: &armed, held: held, release: release, once: &sync.Once{}}
			}
		case 1:
			cfg.WrapBus = func(b gateway.Bus) gateway.Bus {
				return releasingBus{Bus: b, armed: &armed, release: func() { releaseOnce.Do(func() { close(release) }) }}
			}
		}
	})
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	onA := connect(t, c.Nodes[0], "pv-player")
	onB := connect(t, c.Nodes[1], "pv-player")
	friend := connect(t, c.Nodes[2], "pv-friend")
	result(t, "friend request", func(done func(*core.ClientResult)) { friend.SendGameFriendRequestById(onA.id, core.Func(done)) })
	waitFor(t, "the request on A", func() bool {
		return onA.GetRelationshipHandle(friend.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "accept", func(done func(*core.ClientResult)) { onA.AcceptGameFriendRequest(friend.id, core.Func(done)) })
	waitFor(t, "the friend to see the player online", func() bool {
		u := friend.GetUser(onA.id)
		return u != nil && u.Status() == core.StatusTypeOnline
	})

	playing := func(p *player, state string) func() bool {
		return func() bool {
			u := p.GetUser(onA.id)
			if u == nil || u.GameActivity() == nil {
				return false
			}
			s, _ := u.GameActivity().State()
			return s == state
		}
	}
	set := func(p *player, state string) {
		a := core.NewActivity()
		a.SetState(&state)
		result(t, "rich presence "+state, func(done func(*core.ClientResult)) { p.UpdateRichPresence(a, core.Func(done)) })
	}
	armed.Store(true)
	set(onA, "set on A")
	waitFor(t, "A to hold its share", func() bool {
		select {
		case <-held:
			return true
		default:
			core.RunCallbacks()
			return false
		}
	})
	set(onB, "set on B") // B has not seen A's change; its share releases A's
	waitFor(t, "the friend to see B's presence", playing(friend, "set on B"))
	armed.Store(false)

	// A fresh device of the friend on each node gets in READY the presence that node holds.
	for i, n := range c.Nodes {
		viewer := connect(t, n, "pv-friend")
		waitFor(t, "node "+string(rune('A'+i))+" to hold B's presence", playing(viewer, "set on B"))
	}
	waitFor(t, "the friend to see B's presence still", playing(friend, "set on B"))
	require.Equal(t, core.StatusTypeOnline, friend.GetUser(onA.id).Status(), "the player is still online")
}
