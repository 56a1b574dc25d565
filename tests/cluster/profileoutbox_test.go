package cluster

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	gwire "sdkpp/wire/gateway"
)

// A rename committed on node A whose profile update never leaves A (its publish refused, then
// A gone) still reaches the renamed player's friend on node B: the update was staged in the
// outbox with the rename, under the renamed user's order key, and another node relays it once
// its lease is over.
func TestRenameOutlivesItsNode(t *testing.T) {
	// The node dies after the rename's commit and before its update leaves.
	c, cut, clk := startCut(t, func(msg []byte) bool {
		return bytes.Contains(msg, []byte(gwire.EventApplicationProfilesUpdate))
	})
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
