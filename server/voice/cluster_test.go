package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/gateway"
	"sdkpp/server/relay"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	vwire "sdkpp/wire/voice"
)

// memClaims is package bus's Claims in memory.
type memClaims struct {
	mu   sync.Mutex
	keys map[string]claim
	rev  uint64
}

type claim struct {
	holder string
	rev    uint64
}

func (m *memClaims) Claim(_ context.Context, key, holder string) (string, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.keys[key]; ok {
		return c.holder, c.rev, nil
	}
	m.rev++
	m.keys[key] = claim{holder, m.rev}
	return holder, m.rev, nil
}

func (m *memClaims) Replace(_ context.Context, key, holder string, rev uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.keys[key]; !ok || c.rev != rev {
		return 0, errors.New("wrong revision")
	}
	m.rev++
	m.keys[key] = claim{holder, m.rev}
	return m.rev, nil
}

func (m *memClaims) Release(_ context.Context, key string, rev uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.keys[key]; !ok || c.rev != rev {
		return errors.New("wrong revision")
	}
	delete(m.keys, key)
	return nil
}

func (m *memClaims) holders() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, c := range m.keys {
		out[k] = nodeOf(c.holder)
	}
	return out
}

// dispatch is what a session got.
type dispatch struct {
	event string
	data  any
}

// sessions is every node's gateway at once: a dispatch to a session reaches it whichever node
// made it, as the bus carries it.
type sessions struct {
	mu  sync.Mutex
	got map[string][]dispatch
}

func (s *sessions) DispatchSession(id, event string, data any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[id] = append(s.got[id], dispatch{event, data})
	return true
}

// take returns and forgets what the session got.
func (s *sessions) take(id string) []dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.got[id]
	delete(s.got, id)
	return d
}

type members struct{}

func (members) CheckMember(context.Context, uint64, uint64, uint64) error { return nil }

// memRelay opens flows without a socket.
type memRelay struct {
	mu   sync.Mutex
	ssrc uint32
	open int
	fail bool // Open fails
}

func (r *memRelay) Open(uint64) (relay.Flow, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return relay.Flow{}, errors.New("no flow")
	}
	r.ssrc++
	r.open++
	return relay.Flow{SSRC: r.ssrc}, nil
}

func (r *memRelay) Remove(vwire.Token) { r.mu.Lock(); r.open--; r.mu.Unlock() }

// newNodes makes n nodes' Clusters sharing claims and sessions, their ops carried to each other
// in the order they are shared, as the bus does.
func newNodes(t *testing.T, n int) ([]*Cluster, *memClaims, *sessions) {
	claims := &memClaims{keys: map[string]claim{}}
	hub := &sessions{got: map[string][]dispatch{}}
	nodes := make([]*Cluster, n)
	for i := range nodes {
		svc := &Service{Hub: hub, Members: members{}, Relay: &memRelay{}, Endpoint: "relay-" + strconv.Itoa(i+1)}
		nodes[i] = &Cluster{Service: svc, Claims: claims, Node: i + 1}
	}
	var busMu sync.Mutex
	for i, c := range nodes {
		c.Share = func(op Op) {
			d, err := json.Marshal(op)
			require.NoError(t, err)
			busMu.Lock()
			defer busMu.Unlock()
			for j, other := range nodes {
				if j != i {
					other.Receive(d)
				}
			}
		}
		c.Start()
		t.Cleanup(c.Close)
	}
	return nodes, claims, hub
}

func session(user uint64) gateway.Session {
	return gateway.Session{Identity: gateway.Identity{UserID: user, AppID: 1}, ID: fmt.Sprint("s", user)}
}

func join(lobby uint64) vwire.StateUpdate {
	ch := wire.Snowflake(lobby)
	return vwire.StateUpdate{ChannelID: &ch, E2EEPublicKeys: []byte{1}}
}

// events names the events of ds.
func events(ds []dispatch) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.event)
	}
	return out
}

// endpoint is the relay endpoint a session was told (VOICE_SERVER_UPDATE), "" for none.
func endpoint(ds []dispatch) string {
	for _, d := range ds {
		if u, ok := d.data.(vwire.ServerUpdate); ok {
			return u.Endpoint
		}
	}
	return ""
}

// Three players on three nodes join one lobby's call: the first one's node claims and relays
// it, and tells all three its relay; a key from the third reaches the others; leaving ends the
// call there and frees the lobby, which the next call's first node then relays.
func TestClusterRelaysEachCallOnOneNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes, claims, hub := newNodes(t, 3)
		a, b, c := session(1), session(2), session(3)
		nodes[1].VoiceStateUpdate(b, join(7))
		synctest.Wait()
		nodes[0].VoiceStateUpdate(a, join(7))
		synctest.Wait()
		nodes[2].VoiceStateUpdate(c, join(7))
		synctest.Wait()

		assert.Equal(t, map[string]string{"7": "2"}, claims.holders(), "the first joiner's node holds the call")
		assert.Equal(t, []uint64{2, 1, 3}, nodes[1].Service.Participants(7))
		assert.Empty(t, nodes[0].Service.Participants(7))
		assert.Empty(t, nodes[2].Service.Participants(7))
		for _, s := range []gateway.Session{a, b, c} {
			got := hub.take(s.ID)
			assert.Equal(t, "relay-2", endpoint(got), "session %s is told node 2's relay", s.ID)
			assert.NotContains(t, events(got), gwire.EventVoiceError)
		}

		nodes[2].VoiceKeys(c, vwire.Keys{ChannelID: 7, Keys: []vwire.SealedKey{{UserID: 1, Sealed: []byte("k1")}, {UserID: 2, Sealed: []byte("k2")}}})
		synctest.Wait()
		for _, s := range []gateway.Session{a, b} {
			got := hub.take(s.ID)
			require.Len(t, got, 1)
			assert.Equal(t, gwire.EventVoiceKeys, got[0].event)
			assert.Equal(t, wire.Snowflake(3), got[0].data.(vwire.KeyDelivery).SenderID)
		}
		assert.Empty(t, hub.take(c.ID), "no refusal")

		nodes[0].VoiceSessionGone(a)
		nodes[1].VoiceStateUpdate(b, vwire.StateUpdate{})
		synctest.Wait()
		assert.Equal(t, []uint64{3}, nodes[1].Service.Participants(7))
		nodes[2].VoiceStateUpdate(c, vwire.StateUpdate{})
		synctest.Wait()
		assert.Empty(t, nodes[1].Service.Participants(7))
		assert.Empty(t, claims.holders(), "the call ended: its lobby is free")

		hub.take(a.ID)
		nodes[0].VoiceStateUpdate(a, join(7))
		synctest.Wait()
		assert.Equal(t, "relay-1", endpoint(hub.take(a.ID)), "the next call is relayed by its first joiner's node")
		assert.Equal(t, map[string]string{"7": "1"}, claims.holders())
	})
}

// A user in a call relayed by one node joins another lobby's call relayed by another: the first
// call loses them; a member who leaves the lobby, told on any node, leaves its call.
func TestClusterMovesUsersAndMembersAcrossNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes, claims, hub := newNodes(t, 2)
		a, b := session(1), session(2)
		nodes[0].VoiceStateUpdate(a, join(7))
		synctest.Wait()
		nodes[1].VoiceStateUpdate(b, join(8))
		synctest.Wait()
		nodes[1].VoiceStateUpdate(b, join(7)) // relayed by node 1
		synctest.Wait()
		assert.Equal(t, []uint64{1, 2}, nodes[0].Service.Participants(7))
		assert.Empty(t, nodes[1].Service.Participants(8), "b left lobby 8's call")
		assert.Equal(t, map[string]string{"7": "1"}, claims.holders())

		nodes[0].VoiceStateUpdate(a, join(9)) // a's own node relays lobby 9's call now
		synctest.Wait()
		assert.Equal(t, []uint64{2}, nodes[0].Service.Participants(7))
		assert.Equal(t, []uint64{1}, nodes[0].Service.Participants(9))

		hub.take(b.ID)
		nodes[1].MemberLeft(7, 2) // told on node 2, the call is on node 1
		synctest.Wait()
		assert.Empty(t, nodes[0].Service.Participants(7))
		assert.Equal(t, map[string]string{"9": "1"}, claims.holders())
		left := hub.take(b.ID)
		require.NotEmpty(t, left)
		assert.Nil(t, left[len(left)-1].data.(vwire.State).ChannelID, "b is told it left")

		nodes[1].LobbyGone(9)
		synctest.Wait()
		assert.Empty(t, nodes[0].Service.Participants(9))
		assert.Empty(t, claims.holders())
	})
}

// A participant whose session lost its connection without the service being told (its node
// died) leaves the call at the next check; the call ends when no one is left.
func TestClusterPrunesParticipantsOfDeadSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes, claims, hub := newNodes(t, 2)
		var mu sync.Mutex
		gone := map[string]bool{}
		for _, n := range nodes {
			n.Connected = func(id string) bool { mu.Lock(); defer mu.Unlock(); return !gone[id] }
		}
		a, b := session(1), session(2)
		nodes[0].VoiceStateUpdate(a, join(7))
		synctest.Wait()
		nodes[1].VoiceStateUpdate(b, join(7))
		synctest.Wait()
		require.Equal(t, []uint64{1, 2}, nodes[0].Service.Participants(7))

		hub.take(a.ID)
		mu.Lock()
		gone[b.ID] = true // node 2 died with b's connection
		mu.Unlock()
		time.Sleep(ClaimTTL / 3)
		synctest.Wait()
		assert.Equal(t, []uint64{1}, nodes[0].Service.Participants(7))
		left := hub.take(a.ID)
		require.NotEmpty(t, left)
		assert.Equal(t, wire.Snowflake(2), left[len(left)-1].data.(vwire.State).UserID, "a is told b left")

		mu.Lock()
		gone[a.ID] = true
		mu.Unlock()
		time.Sleep(ClaimTTL / 3)
		synctest.Wait()
		assert.Empty(t, nodes[0].Service.Participants(7))
		assert.Empty(t, claims.holders(), "the call ended: its lobby is free")
	})
}

// A node that shuts down ends the calls it relays: every participant, on whichever node, is told
// it left, and the lobby is free for another node's relay.
func TestClusterClosingEndsItsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes, claims, hub := newNodes(t, 2)
		a, b := session(1), session(2)
		nodes[0].VoiceStateUpdate(a, join(7))
		synctest.Wait()
		nodes[1].VoiceStateUpdate(b, join(7))
		synctest.Wait()
		hub.take(a.ID)
		hub.take(b.ID)

		nodes[0].Close()
		for _, s := range []gateway.Session{a, b} {
			got := hub.take(s.ID)
			require.NotEmpty(t, got)
			assert.Nil(t, got[len(got)-1].data.(vwire.State).ChannelID, "session %s is told it left", s.ID)
		}
		assert.Empty(t, claims.holders())
		nodes[1].VoiceStateUpdate(b, join(7))
		synctest.Wait()
		assert.Equal(t, "relay-2", endpoint(hub.take(b.ID)), "the next call is relayed by a node still up")
	})
}

// A join refused by the node that claimed the lobby for it (its relay opens no flow) leaves no
// claim behind: the next join may be relayed by another node.
func TestClusterReleasesTheClaimOfARefusedJoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes, claims, hub := newNodes(t, 2)
		nodes[0].Service.Relay.(*memRelay).fail = true
		a, b := session(1), session(2)
		nodes[0].VoiceStateUpdate(a, join(7))
		synctest.Wait()
		assert.Contains(t, events(hub.take(a.ID)), gwire.EventVoiceError)
		assert.Empty(t, claims.holders())

		nodes[1].VoiceStateUpdate(b, join(7))
		synctest.Wait()
		assert.Equal(t, "relay-2", endpoint(hub.take(b.ID)))
	})
}
