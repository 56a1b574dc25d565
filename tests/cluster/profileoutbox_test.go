package cluster

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/clustertest"
	gwire "sdkpp/wire/gateway"
)

// profileCutBus is a node's bus that refuses every publish of a game profile update
// (APPLICATION_PROFILES_UPDATE), staged or not, while cut is set: the node dies after the
// change's commit and before its update leaves.
type profileCutBus struct {
	gateway.Bus
	cut atomic.Bool
}

func (b *profileCutBus) refused(msg []byte) bool {
	return b.cut.Load() && bytes.Contains(msg, []byte(gwire.EventApplicationProfilesUpdate))
}

func (b *profileCutBus) Publish(ctx context.Context, msg []byte) (uint64, error) {
	if b.refused(msg) {
		return 0, errors.New("cut: the node dies before the profile update leaves")
	}
	return b.Bus.Publish(ctx, msg)
}

func (b *profileCutBus) PublishID(ctx context.Context, msg []byte, id string) (uint64, error) {
	if b.refused(msg) {
		return 0, errors.New("cut: the node dies before the profile update leaves")
	}
	return b.Bus.PublishID(ctx, msg, id)
}

// A rename committed on node A whose profile update never leaves A (its publish refused, then
// A gone) still reaches the renamed player's friend on node B: the update was staged in the
// outbox with the rename, under the renamed user's order key, and another node relays it once
// its lease is over.
func TestRenameOutlivesItsNode(t *testing.T) {
	cut := &profileCutBus{}
	clk := clock.NewOffset(0)
	t.Cleanup(clk.Stop)
	c := clustertest.StartEach(t, 3, func(i int, cfg *server.Config) {
		if i == 0 {
			cfg.WrapBus = func(b gateway.Bus) gateway.Bus { cut.Bus = b; return cut }
		}
	}, servertest.WithClock(clk))
	a := c.Nodes[0]
	ana, ben := connect(t, a, "ana"), connect(t, c.Nodes[1], "ben")
	result(t, "ana's request", func(done func(*core.ClientResult)) { ana.SendGameFriendRequestById(ben.id, core.Func(done)) })
	waitFor(t, "ben to see the request", func() bool {
		return ben.GetRelationshipHandle(ana.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "ben accepts", func(done func(*core.ClientResult)) { ben.AcceptGameFriendRequest(ana.id, core.Func(done)) })
	waitFor(t, "ben to see ana as a friend", func() bool { return ben.GetUser(ana.id) != nil })
	left := func() int {
		t.Helper()
		keys, err := c.Nodes[1].Server.Store().OutboxKeys(context.Background(), clk.Now().Add(24*3600e9))
		require.NoError(t, err)
		return len(keys)
	}
	waitFor(t, "the friendship's events to leave the outbox", func() bool { return left() == 0 })

	cut.cut.Store(true)
	result(t, "ana renames herself through A", func(done func(*core.ClientResult)) {
		ana.UpdateProvisionalAccountDisplayName("Ana Renamed", core.Func(done))
	})
	require.Equal(t, 1, left(), "the rename's update waits in the outbox under ana's key")
	require.NoError(t, a.Server.Close(), "node A dies")

	clk.Advance(server.OutboxLease)
	waitFor(t, "another node to relay what A left", func() bool { return left() == 0 })
	waitFor(t, "ben to see ana's new name", func() bool {
		u := ben.GetUser(ana.id)
		return u != nil && u.DisplayName() == "Ana Renamed"
	})
}
