package cluster

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/bus/natstest"
	"sdkpp/server/servertest"
)

// A node killed for good (SIGKILL, never restarted) leaves no player online: once it has missed
// three heartbeats, a live node takes its sessions over, and a friend and a lobby co-member on
// that node see the dead node's player offline and not connected; the hub of every live node
// counts the player offline. The player's SDK keeps trying the dead node, so the session is not
// resumed elsewhere.
func TestDeadNodesPlayersGoOffline(t *testing.T) {
	const beat = 2 * time.Second // down after 6 s: room for a loaded machine's late beats
	ns := natstest.Start(t)
	storeURL := servertest.PostgresDatabase(t)
	cluster := func(id int) servertest.Option {
		return servertest.WithConfig(func(c *server.Config) {
			c.Store, c.Bus, c.NodeID, c.NodeHeartbeat = storeURL, ns.URL(), id, beat
		})
	}
	a := servertest.Start(t, cluster(1))
	b := servertest.Start(t, cluster(2))
	dir := t.TempDir()
	dead := &node{id: 3, addr: servertest.FreeAddr(t), log: filepath.Join(dir, "node3.log")}
	dead.env = []string{envNode + "=1", "SDKPP_NODE_ID=3", "SDKPP_ADDR=" + dead.addr,
		"SDKPP_PUBLIC_URL=http://" + dead.addr, "SDKPP_STORE=" + storeURL, "SDKPP_BUS=" + ns.URL(),
		"SDKPP_NODE_HEARTBEAT=" + beat.String()}
	dead.start(t)
	t.Cleanup(dead.stop)
	onDead := &servertest.Env{URL: "http://" + dead.addr, APIURL: "http://" + dead.addr + server.APIVersionPath, App: a.App}

	ana, ben := connect(t, a, "ana"), connect(t, onDead, "ben")
	result(t, "ben's request", func(done func(*core.ClientResult)) { ben.SendGameFriendRequestById(ana.id, core.Func(done)) })
	waitFor(t, "ana to see the request", func() bool {
		return ana.GetRelationshipHandle(ben.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "ana accepts", func(done func(*core.ClientResult)) { ana.AcceptGameFriendRequest(ben.id, core.Func(done)) })
	var lobby uint64
	for _, p := range []*player{ana, ben} {
		result(t, p.name+" joins", func(done func(*core.ClientResult)) {
			p.CreateOrJoinLobby("node-down", core.Func(func(r *core.ClientResult, l uint64) { lobby = l; done(r) }))
		})
	}
	benThere := func() (online, connected bool) {
		u := ana.GetUser(ben.id)
		l := ana.GetLobbyHandle(lobby)
		if u == nil || l == nil {
			return false, false
		}
		m := l.GetLobbyMemberHandle(ben.id)
		return u.Status() == core.StatusTypeOnline, m != nil && m.Connected()
	}
	waitFor(t, "ana to see ben online and connected", func() bool { on, conn := benThere(); return on && conn })
	require.True(t, b.Server.Hub().Online(ben.id), "node B counts ben online (his session is on node 3)")

	dead.kill()
	waitFor(t, "ana to see ben offline and not connected", func() bool { on, conn := benThere(); return !on && !conn })
	assert.False(t, a.Server.Hub().Online(ben.id), fmt.Sprintf("node A counts ben %d offline", ben.id))
	assert.False(t, b.Server.Hub().Online(ben.id), "node B too")
	assert.True(t, b.Server.Hub().Online(ana.id), "ana, on a live node, stays online")
}
