package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// connected returns a Client of a new provisional player, Ready on the gateway.
func connected(t *testing.T, env *servertest.Env, name string) *sdkClient {
	c := newSDKClient(t, env, nil)
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, name), resultCallback(&up))
	c.Connect()
	await(t, name+" Ready", func() bool { return c.GetStatus() == ClientStatusReady && c.GetCurrentUserV2() != nil })
	return c
}

// rules LOB-1, LOB-2: three players create-or-join one lobby by secret, see each other arrive
// with their metadata, and one leaves.
func TestLobbyCreateOrJoinBySecret(t *testing.T) {
	env := servertest.Start(t)
	players := []*sdkClient{connected(t, env, "p1"), connected(t, env, "p2"), connected(t, env, "p3")}
	added := make([][]uint64, len(players))
	removed := make([][]uint64, len(players))
	for i, p := range players {
		i := i
		p.SetLobbyMemberAddedCallback(Func(func(_, member uint64) { added[i] = append(added[i], member) }))
		p.SetLobbyMemberRemovedCallback(Func(func(_, member uint64) { removed[i] = append(removed[i], member) }))
	}
	lobbyIDs := make([]uint64, len(players))
	for i, p := range players {
		var res *ClientResult
		p.CreateOrJoinLobbyWithMetadata("secret-42", map[string]string{"map": "harbor"},
			map[string]string{"class": fmt.Sprint("class-", i)}, Func(func(r *ClientResult, id uint64) { res, lobbyIDs[i] = r, id }))
		await(t, "CreateOrJoinLobby", func() bool { return res != nil })
		require.True(t, res.Successful(), "player %d: %s %s", i, res.ToString(), res.ResponseBody())
	}
	require.NotZero(t, lobbyIDs[0], "lobby ids %v", lobbyIDs)
	require.Equal(t, lobbyIDs[0], lobbyIDs[1], "lobby ids %v", lobbyIDs)
	require.Equal(t, lobbyIDs[0], lobbyIDs[2], "lobby ids %v", lobbyIDs) // rule LOB-1
	id := lobbyIDs[0]
	p3 := players[2].GetCurrentUserV2().Id()
	await(t, "the first player to see everyone", func() bool {
		h := players[0].GetLobbyHandle(id)
		return h != nil && len(h.LobbyMemberIds()) == 3
	})
	h := players[0].GetLobbyHandle(id)
	require.Equal(t, "harbor", h.Metadata()["map"], "lobby %v %v", h.Metadata(), players[0].GetLobbyIds())
	require.Contains(t, players[0].GetLobbyIds(), id, "lobby %v %v", h.Metadata(), players[0].GetLobbyIds())
	m := h.GetLobbyMemberHandle(p3)
	require.NotNil(t, m, "member %+v", m)
	require.Equal(t, "class-2", m.Metadata()["class"], "member %+v", m)
	require.False(t, m.CanLinkLobby(), "member %+v", m)
	// The cache holds the third member as soon as the gateway's reader has it; the callback comes
	// at the next RunCallbacks after that.
	await(t, "the first player to hear the third arrive", func() bool { return slices.Contains(added[0], p3) })

	// rule LOB-2: a member sends a message.
	var sent *ClientResult
	var mid uint64
	players[1].SendLobbyMessageWithMetadata(id, "gg", map[string]string{"k": "v"}, Func(func(r *ClientResult, m uint64) { sent, mid = r, m }))
	await(t, "SendLobbyMessage", func() bool { return sent != nil })
	require.True(t, sent.Successful(), "send: %s", sent.ToString())
	require.NotZero(t, mid, "send: %s", sent.ToString())

	// The third player leaves: the others see it, and the lobby leaves the third's cache.
	var left *ClientResult
	players[2].LeaveLobby(id, resultCallback(&left))
	await(t, "LeaveLobby", func() bool { return left != nil })
	require.True(t, left.Successful(), "leave: %s", left.ToString())
	require.Nil(t, players[2].GetLobbyHandle(id), "leave: %s", left.ToString())
	await(t, "the others to see the third leave", func() bool {
		return slices.Contains(removed[0], p3) && len(players[0].GetLobbyHandle(id).LobbyMemberIds()) == 2
	})
	require.Zero(t, m.Id(), "a member handle of a member who left still reads values")

	// Not connected, nothing is sent.
	off := newSDKClient(t, env, nil)
	var res *ClientResult
	off.CreateOrJoinLobby("secret-42", Func(func(r *ClientResult, _ uint64) { res = r }))
	await(t, "refusal", func() bool { return res != nil })
	require.Equal(t, ErrorTypeClientNotReady, res.Type(), res.ToString())
}

// LobbyMemberHandle.User: each member's user, with its game profile, comes with the lobby and
// with the member events; a member who left has no user view through the lobby any more.
func TestLobbyMemberUser(t *testing.T) {
	env := servertest.Start(t)
	players, lobby := joined(t, env, "member-user", "mu1", "mu2")
	a, b := players[0], players[1]
	bID := b.GetCurrentUserV2().Id()
	for _, who := range []*sdkClient{a, b} { // b learnt a from the lobby object, a learnt b from LOBBY_MEMBER_ADD
		for _, p := range players {
			id := p.GetCurrentUserV2().Id()
			m := who.GetLobbyHandle(lobby).GetLobbyMemberHandle(id)
			u := m.User()
			require.NotNil(t, u, "member %d: user %+v", id, u)
			require.Equal(t, id, u.Id(), "member %d: user %+v", id, u)
			require.Equal(t, p.GetCurrentUserV2().Username(), u.Username(), "member %d: user %+v", id, u)
			profiles := who.GetUserApplicationProfiles(id)
			require.Len(t, profiles, 1, "member %d: %d game profiles", id, len(profiles))
			require.NotEqual(t, "", profiles[0].ProviderIssuedUserId(), "member %d: %d game profiles", id, len(profiles))
		}
	}
	seat := a.GetLobbyHandle(lobby).GetLobbyMemberHandle(bID)
	var left *ClientResult
	b.LeaveLobby(lobby, resultCallback(&left))
	await(t, "b leaves", func() bool { return left != nil && seat.Id() == 0 })
	require.Nil(t, seat.User(), "the seat of a member who left still has a user")
}

// The demo's race, made deterministic: the member-added event of bob's join reaches alice before
// the answer to her own create-or-join, whose snapshot is older. The lobby keeps bob.
func TestLobbyMemberEventBeforeJoinAnswer(t *testing.T) {
	c := NewClient()
	t.Cleanup(c.Close)
	const lobbyID, alice, bob = 7, 1, 2
	event, err := json.Marshal(wire.LobbyMemberEvent{LobbyID: lobbyID, Revision: 11, Member: wire.LobbyMember{ID: bob}})
	require.NoError(t, err)
	c.onDispatch(gwire.EventLobbyMemberAdd, event)
	assert.Nil(t, c.GetLobbyHandle(lobbyID), "a lobby is not listed before its snapshot")

	c.cacheLobby(&wire.Lobby{ID: lobbyID, Revision: 10, Members: []wire.LobbyMember{{ID: alice}}})
	h := c.GetLobbyHandle(lobbyID)
	require.NotNil(t, h)
	assert.Equal(t, []uint64{alice, bob}, h.LobbyMemberIds())

	// A snapshot older than the cached state changes nothing; a newer one replaces it.
	c.cacheLobby(&wire.Lobby{ID: lobbyID, Revision: 9, Members: []wire.LobbyMember{{ID: alice}}})
	assert.Equal(t, []uint64{alice, bob}, h.LobbyMemberIds())
	c.cacheLobby(&wire.Lobby{ID: lobbyID, Revision: 12, Members: []wire.LobbyMember{{ID: bob}}})
	assert.Equal(t, []uint64{bob}, h.LobbyMemberIds())
}

// The service stamps a join's answer and the member event it sends with one revision, above the
// revision of the lobby's creation.
func TestLobbyRevisionsFromService(t *testing.T) {
	env := servertest.Start(t)
	a, b := connected(t, env, "rev-a"), connected(t, env, "rev-b")
	join := func(c *sdkClient) uint64 {
		var res *ClientResult
		var id uint64
		c.CreateOrJoinLobby("rev-secret", Func(func(r *ClientResult, lid uint64) { res, id = r, lid }))
		await(t, "CreateOrJoinLobby", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
		return id
	}
	id := join(a)
	created, ok := a.lobby.cache.Get(id)
	require.True(t, ok)
	require.NotZero(t, created.Revision)
	join(b)
	joined, ok := b.lobby.cache.Get(id)
	require.True(t, ok)
	assert.Greater(t, joined.Revision, created.Revision)
	await(t, "a to see b", func() bool { h := a.GetLobbyHandle(id); return h != nil && len(h.LobbyMemberIds()) == 2 })
	seen, _ := a.lobby.cache.Get(id)
	assert.Equal(t, joined.Revision, seen.Revision, "the member event carries the join's revision")
}
