package core

import (
	"testing"
	"time"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
)

// A member's Connected flag follows the member's gateway session: true while connected, false
// after the member's client closes, delivered by LOBBY_MEMBER_UPDATE.
func TestLobbyMemberConnected(t *testing.T) {
	env := servertest.Start(t)
	p1, p2 := connected(t, env, "c1"), connected(t, env, "c2")
	var lobbyID uint64
	for _, p := range []*sdkClient{p1, p2} {
		var res *ClientResult
		p.CreateOrJoinLobby("conn", Func(func(r *ClientResult, id uint64) { res, lobbyID = r, id }))
		await(t, "join", func() bool { return res != nil })
		if !res.Successful() {
			t.Fatal(res.ToString())
		}
	}
	other := p2.GetCurrentUserV2().Id()
	var updates int
	p1.SetLobbyMemberUpdatedCallback(Func(func(_, member uint64) {
		if member == other {
			updates++
		}
	}))
	await(t, "p2 connected in p1's view", func() bool {
		h := p1.GetLobbyHandle(lobbyID)
		m := h.GetLobbyMemberHandle(other)
		return m != nil && m.Connected()
	})
	if h := p1.GetLobbyHandle(lobbyID); h.LinkedChannel() != nil {
		t.Fatal("a lobby without a link shows a linked channel")
	}
	p2.Close()
	await(t, "p2 disconnected in p1's view", func() bool {
		return !p1.GetLobbyHandle(lobbyID).GetLobbyMemberHandle(other).Connected() && updates > 0
	})
}

// A 429 fills ClientResult's Retryable and RetryAfter from the platform's rate-limit body.
func TestRateLimitedResultIsRetryable(t *testing.T) {
	env := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) {
			c.RateLimits = ratelimit.Config{Routes: map[string]ratelimit.Rule{"PATCH /lobbies/{lobby_id}/channel-linking": {Limit: 1, Window: 3 * time.Second}}}
		}))
	p := connected(t, env, "r1")
	var res *ClientResult
	p.CreateOrJoinLobby("rl", Func(func(r *ClientResult, _ uint64) { res = r }))
	await(t, "join", func() bool { return res != nil })
	id := p.GetLobbyIds()[0]
	var first, second *ClientResult
	p.UnlinkChannelFromLobby(id, resultCallback(&first))
	await(t, "first", func() bool { return first != nil })
	p.UnlinkChannelFromLobby(id, resultCallback(&second))
	await(t, "second", func() bool { return second != nil })
	if first.Status() == 429 || first.Retryable() {
		t.Fatalf("first: %s", first.ToString())
	}
	if second.Status() != 429 || !second.Retryable() || second.RetryAfter() != 3 {
		t.Fatalf("second: %s", second.ToString())
	}
}
