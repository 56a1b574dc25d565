package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/servertest"
)

// envCutPresence, set to a file's path, makes a node (runNode) lose every publish of a presence
// (what it shares of a user's presence, and PRESENCE_UPDATE dispatches) while that file exists:
// the node has taken the presence, and dies before anything of it leaves.
const envCutPresence = "SDKPP_CLUSTER_CUT_PRESENCE"

// presenceCutBus is a node's bus that refuses presence publishes while its file exists
// (envCutPresence).
type presenceCutBus struct {
	gateway.Bus
	file string
}

func (b presenceCutBus) Publish(ctx context.Context, msg []byte) (uint64, error) {
	if _, err := os.Stat(b.file); err == nil && isPresence(msg) {
		return 0, errors.New("cut: the node dies before its presence leaves")
	}
	return b.Bus.Publish(ctx, msg)
}

// Presence is kept in the nodes' memory and on the bus, not in the store, so it has no outbox
// (issue 23): what a node killed after taking a player's presence and before publishing any of
// it loses is brought back by the player's SDK, which sends its whole presence again once its
// session is resumed on another node (a Presence Update carries the whole presence, so sending
// it again is harmless). The player's friend, on another node, sees the presence the dead node
// never told.
func TestPresenceOutlivesItsNodesDeath(t *testing.T) {
	addrs := []string{servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)}
	lb := newBalancer(t, addrs)
	lb.set(1, false) // ana's connections go to node 0, the one killed
	lb.set(2, false)
	base := "http://" + lb.ln.Addr().String()
	cut := filepath.Join(t.TempDir(), "cut")
	nodes, _, app := startNodes(t, addrs, func(string) string { return base }, func(i int) []string {
		if i == 0 {
			return []string{envCutPresence + "=" + cut}
		}
		return nil
	})
	direct := "http://" + addrs[1]
	ana := connect(t, &servertest.Env{URL: base, APIURL: base + server.APIVersionPath, App: app}, "ana")
	ben := connect(t, &servertest.Env{URL: direct, APIURL: direct + server.APIVersionPath, App: app}, "ben")
	result(t, "ana's request", func(done func(*core.ClientResult)) { ana.SendGameFriendRequestById(ben.id, core.Func(done)) })
	waitFor(t, "ben to see the request", func() bool {
		return ben.GetRelationshipHandle(ana.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "ben accepts", func(done func(*core.ClientResult)) { ben.AcceptGameFriendRequest(ana.id, core.Func(done)) })
	waitFor(t, "ben to see ana online", func() bool {
		u := ben.GetUser(ana.id)
		return u != nil && u.Status() == core.StatusTypeOnline
	})
	playing := func() bool {
		u := ben.GetUser(ana.id)
		if u == nil || u.GameActivity() == nil {
			return false
		}
		state, _ := u.GameActivity().State()
		return state == "in the dead node's memory"
	}

	require.NoError(t, os.WriteFile(cut, nil, 0o600))
	lost := logged(t, nodes[0], "gateway: lost: the bus refused it")
	a := core.NewActivity()
	state := "in the dead node's memory"
	a.SetState(&state)
	result(t, "ana's rich presence", func(done func(*core.ClientResult)) { ana.UpdateRichPresence(a, core.Func(done)) })
	// Node 0 took it, and lost its share and its dispatches to ana and to ben.
	waitFor(t, "node 0 to lose ana's presence", func() bool { return logged(t, nodes[0], "gateway: lost: the bus refused it") >= lost+3 })
	assert.False(t, playing(), "ben has not heard of it")

	nodes[0].kill()
	lb.set(0, false)
	lb.set(1, true)
	lb.set(2, true)
	waitFor(t, "ben to see ana's presence, sent again by her SDK once resumed on another node", playing)
	assert.Positive(t, logged(t, nodes[1], "gateway: resumed")+logged(t, nodes[2], "gateway: resumed"),
		"ana's session resumed on a live node")
}
