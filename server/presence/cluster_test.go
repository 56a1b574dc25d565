package presence_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/presence"
	"sdkpp/server/snowflake"
	"sdkpp/wire"
)

// clusterNode is one node of a cluster of presence services that share a store and a hub (the
// hub records the dispatches in the bus's order and says who is online in the cluster). What a
// node shares waits in the other node's inbox until the test delivers it, so that the test
// chooses the order in which concurrent changes reach each node.
type clusterNode struct {
	svc   *presence.Service
	inbox []sharedPresence
}

// sharedPresence is a presence as it crosses the bus (encoded, as the gateway's Share does).
type sharedPresence struct {
	user uint64
	data []byte
}

// newCluster returns two nodes over e's store and hub, e.svc being the first.
func newCluster(t *testing.T, e *env) (a, b *clusterNode) {
	a, b = &clusterNode{svc: e.svc}, &clusterNode{}
	b.svc = &presence.Service{Store: e.w.Store, Clock: e.w.Clock, Logger: e.w.Log, Hub: e.hub}
	a.svc.IDs = snowflake.NewNode(e.w.Clock, 0, 1)
	b.svc.IDs = snowflake.NewNode(e.w.Clock, 0, 2)
	for _, p := range [][2]*clusterNode{{a, b}, {b, a}} {
		to := p[1]
		p[0].svc.Share = func(userID uint64, s *presence.Shared) {
			raw, err := json.Marshal(s)
			require.NoError(t, err)
			to.inbox = append(to.inbox, sharedPresence{userID, raw})
		}
	}
	return a, b
}

// deliver applies, in their order, the presences the other node shared since the last delivery.
func (n *clusterNode) deliver(t *testing.T) {
	for _, s := range n.inbox {
		var p *presence.Shared
		require.NoError(t, json.Unmarshal(s.data, &p))
		n.svc.Apply(s.user, p)
	}
	n.inbox = nil
}

// seen returns the presence of about as n shows it to viewer (READY's).
func (n *clusterNode) seen(t *testing.T, viewer, about uint64) wire.PresenceUpdate {
	ps, err := n.svc.ReadyPresences(context.Background(), viewer)
	require.NoError(t, err)
	for _, p := range ps {
		if uint64(p.User.ID) == about {
			return p
		}
	}
	require.Failf(t, "no presence", "viewer %d has no presence of %d: %+v", viewer, about, ps)
	return wire.PresenceUpdate{}
}

// Issue 23: one user with sessions on two nodes whose presence changes on both at once. Every
// node ends with the same presence, that of the last change in the cluster's order (the version:
// time, then node; a change made after seeing another is after it), and the PRESENCE_UPDATE the
// friend got last is that presence, whatever order the shares and dispatches crossed the bus in.
func TestPresenceConvergesAcrossNodes(t *testing.T) {
	const onA, onB = `{"status":"idle","activities":[{"type":0,"details":"set on A"}]}`,
		`{"status":"dnd","activities":[{"type":0,"details":"set on B"}]}`
	type step func(t *testing.T, e *env, a, b *clusterNode, user uint64)
	set := func(n func(a, b *clusterNode) *clusterNode, p string) step {
		return func(t *testing.T, e *env, a, b *clusterNode, user uint64) {
			n(a, b).svc.OnPresence(user, uint64(e.app.ID), json.RawMessage(p))
		}
	}
	nodeA := func(a, _ *clusterNode) *clusterNode { return a }
	nodeB := func(_, b *clusterNode) *clusterNode { return b }
	setA, setB := set(nodeA, onA), set(nodeB, onB)
	toA := func(t *testing.T, _ *env, a, _ *clusterNode, _ uint64) { a.deliver(t) }
	toB := func(t *testing.T, _ *env, _, b *clusterNode, _ uint64) { b.deliver(t) }
	later := func(_ *testing.T, e *env, _, _ *clusterNode, _ uint64) { e.clock.Advance(time.Millisecond) }
	leaveB := func(_ *testing.T, e *env, _, b *clusterNode, user uint64) { // the user's last session ends
		e.hub.connect(user, uint64(e.app.ID), false)
		b.svc.OnSession(user, uint64(e.app.ID))
	}
	for _, c := range []struct {
		name   string
		steps  []step
		status string // of the presence every node ends with
		what   string // its activity's details
	}{
		{"concurrent, A's share reaches B first", []step{setA, setB, toB, toA}, "dnd", "set on B"},
		{"concurrent, B's share reaches A first", []step{setA, setB, toA, toB}, "dnd", "set on B"},
		// A's dispatches cross the bus after B's: A, which B's change overtook, tells again.
		{"concurrent, A dispatches last", []step{setB, setA, toB, toA}, "dnd", "set on B"},
		{"A changes it after seeing B's change", []step{setB, toA, setA, toB}, "idle", "set on A"},
		{"A changes it a millisecond later, unaware", []step{setB, later, setA, toA, toB}, "idle", "set on A"},
		{"offline on B while A changes it", []step{setA, leaveB, toA, toB}, "offline", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := newCluster(t, e)
			user, friend := e.player("user", e.app), e.player("friend", e.app)
			e.friends(user, friend, false)
			e.hub.connect(user.id, uint64(e.app.ID), true) // a session on each node
			a.svc.OnSession(user.id, uint64(e.app.ID))
			b.deliver(t)
			b.svc.OnSession(user.id, uint64(e.app.ID))

			for _, s := range c.steps {
				s(t, e, a, b, user.id)
			}
			a.deliver(t)
			b.deliver(t)

			onA, onB := a.seen(t, friend.id, user.id), b.seen(t, friend.id, user.id)
			require.Equal(t, onA, onB, "the nodes disagree")
			require.Equal(t, c.status, onA.Status, "the nodes hold %+v", onA)
			what := ""
			if len(onA.Activities) > 0 {
				what = *onA.Activities[0].Details
			}
			require.Equal(t, c.what, what, "the nodes hold %+v", onA)
			last := e.hub.last(friend.id, user.id)
			require.NotNil(t, last, "the friend got no presence")
			require.Equal(t, onA, *last, "the friend was told last a presence other than the nodes'")
		})
	}
}
