package core

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// READY is applied in one step: a reader that sees the session's user also sees its
// relationships and presences, never the user alone.
func TestReadyAppliedInOneStep(t *testing.T) {
	c := NewClient()
	t.Cleanup(c.Close)
	const me, friend = 10, 20
	ready, err := json.Marshal(map[string]any{
		"user":               wire.User{ID: me, Username: "me"},
		"application":        map[string]any{"id": "1"},
		"relationships":      []wire.Relationship{{ID: friend, Type: 1, User: wire.User{ID: friend, Username: "friend"}}},
		"game_relationships": []wire.Relationship{},
		"presences":          []wire.PresenceUpdate{{User: wire.PresenceUser{ID: friend}, Status: "online"}},
	})
	require.NoError(t, err)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // observes while READY is applied: the user never comes without the friend
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c.GetCurrentUserV2() != nil {
				if !assert.Len(t, c.GetRelationships(), 1, "the user without its relationships") {
					return
				}
			}
		}
	}()
	c.onDispatch("READY", ready)
	close(stop)
	wg.Wait()

	u := c.GetCurrentUserV2()
	require.NotNil(t, u)
	assert.Equal(t, uint64(me), u.Id())
	rels := c.GetRelationships()
	require.Len(t, rels, 1)
	assert.Equal(t, uint64(friend), rels[0].Id())
	f := c.GetUser(friend)
	require.NotNil(t, f)
	assert.Equal(t, "friend", f.Username())
}

// Events are routed by name; an unknown one is ignored.
func TestDispatchRegistry(t *testing.T) {
	for _, e := range []string{"READY", "SDKPP_REQUEST_RESULT", "LOBBY_CREATE", "LOBBY_MEMBER_ADD", "LOBBY_MESSAGE_CREATE",
		"MESSAGE_CREATE", "MESSAGE_DELETE", "RELATIONSHIP_ADD", "GAME_RELATIONSHIP_REMOVE", "PRESENCE_UPDATE",
		"ACTIVITY_INVITE_CREATE", "APPLICATION_PROFILES_UPDATE"} {
		assert.NotNil(t, dispatchers[e], e)
	}
	c := NewClient()
	t.Cleanup(c.Close)
	c.onDispatch("NOT_AN_EVENT", json.RawMessage(`{}`)) // no handler, no effect
	assert.Nil(t, c.GetCurrentUserV2())
}

// A one-shot whose Client is dropped first fires once with ClientDestroyed and zero values, and
// its release runs after it (resultOnce, resultOnce1: the one place for that plumbing).
func TestOneShotOnDestroy(t *testing.T) {
	c := NewClient()
	var got []*ClientResult
	var id uint64 = 99
	released := 0
	one := resultOnce(c, Callback[ClientLeaveLobbyCallback]{Fn: func(r *ClientResult) { got = append(got, r) }, Release: func() { released++ }})
	two := resultOnce1(c, Callback[ClientCreateOrJoinLobbyCallback]{Fn: func(r *ClientResult, v uint64) { got, id = append(got, r), v },
		Release: func() { released++ }})
	require.NotNil(t, one)
	require.NotNil(t, two)
	c.Close()
	RunCallbacks()
	require.Len(t, got, 2)
	for _, r := range got {
		assert.Equal(t, ErrorTypeClientDestroyed, r.Type())
	}
	assert.Zero(t, id)
	assert.Equal(t, 2, released)
}
