package presence_test

// The test env serves the relationship routes too (package relationships), since presence
// depends on them; their service-side tests live here.

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/relationships"
	"sdkpp/wire"
)

func (e *env) rels(p player, game bool) map[uint64]wire.Relationship {
	e.t.Helper()
	path := "/users/@me/relationships"
	if game {
		path = "/users/@me/game-relationships"
	}
	var list []wire.Relationship
	require.NoError(e.t, json.Unmarshal(e.must(200, "GET", path, p.auth, nil), &list))
	out := map[uint64]wire.Relationship{}
	for _, r := range list {
		out[uint64(r.ID)] = r
	}
	return out
}

// rule REL-1: requests are spam when their sender made SpamBurst others within SpamWindow; the
// window is read from the service's clock.
func TestSpamHeuristic(t *testing.T) {
	e := newEnv(t)
	spammer := e.player("spammer", e.app)
	var targets []player
	for i := 0; i <= relationships.SpamBurst+1; i++ {
		targets = append(targets, e.player("target"+string(rune('a'+i)), e.app))
	}
	for i, target := range targets[:relationships.SpamBurst+1] {
		e.must(204, "POST", "/users/@me/relationships", spammer.auth, map[string]any{"username": "target" + string(rune('a'+i))})
		r := e.rels(target, false)[spammer.id]
		// rule REL-1
		require.Equal(t, 3, r.Type, "request %d: %+v", i, r)
		require.Equal(t, i >= relationships.SpamBurst, r.IsSpamRequest, "request %d: %+v", i, r)
	}
	e.clock.Advance(relationships.SpamWindow)
	last := targets[len(targets)-1]
	e.must(204, "PUT", "/users/@me/relationships/"+id(last), spammer.auth, map[string]any{})
	// rule REL-1: the burst is over
	require.False(t, e.rels(last, false)[spammer.id].IsSpamRequest, "a request after the window is still spam")
	out := e.rels(spammer, false)[last.id]
	require.Equal(t, 4, out.Type, "sender side %+v", out)
	require.False(t, out.IsSpamRequest, "sender side %+v", out)
}

// Friend requests, acceptance, blocks and bad input on the relationship routes.
func TestRelationshipRoutes(t *testing.T) {
	e := newEnv(t)
	a, b := e.player("ann", e.app), e.player("ben", e.app)
	other := e.player("oth", e.child)

	e.must(204, "PUT", "/users/@me/game-relationships/"+id(b), a.auth, nil)
	e.must(204, "POST", "/users/@me/game-relationships", b.auth, map[string]any{"username": "ann"}) // accepts
	r := e.rels(a, true)[b.id]
	require.Equal(t, 1, r.Type, "game relationship %+v", r)
	require.NotNil(t, r.ApplicationID, "game relationship %+v", r)
	require.Equal(t, uint64(e.app.ID), uint64(*r.ApplicationID), "game relationship %+v", r)
	require.Empty(t, e.rels(a, false), "a game friendship shows as a platform one")
	// Game relationships belong to one application.
	e.must(204, "PUT", "/users/@me/relationships/"+id(other), a.auth, nil)
	require.Empty(t, e.rels(other, true), "relationships leaked between applications")
	require.Equal(t, 3, e.rels(other, false)[a.id].Type, "relationships leaked between applications")
	e.fails(400, wire.CodeAlreadyFriends, "", "PUT", "/users/@me/game-relationships/"+id(b), a.auth, nil)

	// Block: everything between them goes but the block; the blocked cannot ask again.
	e.must(204, "PUT", "/users/@me/relationships/"+id(a), b.auth, map[string]any{"type": 2})
	_, left := e.rels(a, false)[b.id]
	require.False(t, left, "after block: a %v %v, b %v", e.rels(a, true), e.rels(a, false), e.rels(b, false))
	require.Empty(t, e.rels(a, true), "after block: a %v %v, b %v", e.rels(a, true), e.rels(a, false), e.rels(b, false))
	require.Equal(t, 2, e.rels(b, false)[a.id].Type, "after block: a %v %v, b %v", e.rels(a, true), e.rels(a, false), e.rels(b, false))
	e.fails(400, wire.CodeFriendRequestBlocked, "", "PUT", "/users/@me/relationships/"+id(b), a.auth, nil)
	e.fails(400, wire.CodeCannotSendToUser, "", "PUT", "/users/@me/relationships/"+id(a), b.auth, nil)
	e.must(204, "DELETE", "/users/@me/relationships/"+id(a), b.auth, nil)
	require.Empty(t, e.rels(b, false), "unblock left a row")

	// Bad input: never a 5xx.
	e.fails(400, wire.CodeInvalidFormBody, "user_id", "PUT", "/users/@me/relationships/"+id(a), a.auth, nil)
	e.fails(400, wire.CodeInvalidFormBody, "user_id", "PUT", "/users/@me/relationships/x1", a.auth, nil)
	e.fails(404, wire.CodeUnknownUser, "", "PUT", "/users/@me/relationships/4242", a.auth, nil)
	e.fails(404, wire.CodeUnknownUser, "", "POST", "/users/@me/relationships", a.auth, map[string]any{"username": "nobody"})
	e.fails(400, wire.CodeInvalidFormBody, "username", "POST", "/users/@me/relationships", a.auth, map[string]any{"username": " "})
	e.fails(400, wire.CodeInvalidFormBody, "username", "POST", "/users/@me/relationships", a.auth, map[string]any{"username": 5})
	e.fails(400, wire.CodeInvalidJSON, "", "POST", "/users/@me/relationships", a.auth, "{")
	e.fails(400, wire.CodeInvalidFormBody, "type", "PUT", "/users/@me/relationships/"+id(b), a.auth, map[string]any{"type": 3})
	e.fails(400, wire.CodeInvalidFormBody, "type", "PUT", "/users/@me/game-relationships/"+id(b), a.auth, map[string]any{"type": 2})
	e.fails(401, 0, "", "GET", "/users/@me/relationships", "", nil)
	e.fails(401, 0, "", "GET", "/users/@me/relationships", "Bearer nope", nil)
}
