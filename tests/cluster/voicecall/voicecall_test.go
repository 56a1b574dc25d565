// Package voicecall tests a voice call across the nodes of a cluster end to end: three players'
// SDKs, each connected to a different node sharing one PostgreSQL and one NATS bus
// (clustertest), with the real voice engine on in-memory devices played in real time
// (tests/internal/threecall).
package voicecall

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/clustertest"
	"sdkpp/server/store/pgtest"
	"sdkpp/tests/internal/threecall"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// rule VER-2 across nodes: three players, each connected to a different node, talk in one
// lobby's end-to-end encrypted call. One node relays it (the others route their players' voice
// signaling to it), and each player's recorded voice reaches both others, scored as the
// single-node call is scored (log-spectral distance against the same voice through Opus alone).
// When the call ends, no node keeps it.
func TestThreeNodesVoiceCall(t *testing.T) {
	c := clustertest.Start(t, 3)
	call := threecall.Start(t, [threecall.Players]*servertest.Env{c.Nodes[0], c.Nodes[1], c.Nodes[2]}, "cluster-voice-")
	relay := -1
	for i, n := range c.Nodes {
		switch got := len(n.Server.Calls().Participants(call.Lobby)); got {
		case 0:
		case threecall.Players:
			assert.Equal(t, -1, relay, "one node relays the call")
			relay = i
		default:
			t.Errorf("node %d keeps %d of the call's participants", i+1, got)
		}
	}
	require.NotEqual(t, -1, relay, "a node relays the call")
	t.Logf("node %d relays the call", relay+1)

	call.Speak()
	assert.Len(t, c.Nodes[relay].Server.Calls().Participants(call.Lobby), threecall.Players,
		"the three are still in the call after the speech")
	call.End()
	call.Score()
	require.True(t, threecall.Pump(10*time.Second, func() bool {
		for _, n := range c.Nodes {
			if len(n.Server.Calls().Participants(call.Lobby)) != 0 {
				return false
			}
		}
		return true
	}), "the call ended on its node")
}
