package presence_test

import (
	"context"
	"encoding/json"
	"testing"

	gwire "sdkpp/wire/gateway"

	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
	"sdkpp/wire"
)

// identity gives p an external identity in app, as the provisional-account endpoints do.
func (e *env) identity(p player, app wire.DevApplication, typ, externalID string) {
	e.t.Helper()
	err := e.st.PutIdentity(context.Background(), &store.Identity{AppID: uint64(app.ID), Type: typ, ExternalID: externalID,
		UserID: p.id, ProvisionalUserID: p.id, CreatedAt: e.clock.Now()})
	require.NoError(e.t, err)
}

// A friend's game profiles reach the other player in that game only: in the relationship list
// of a token of the game, in game relationship events, and in APPLICATION_PROFILES_UPDATE to the
// sessions of that game before a platform event, which every session gets.
func TestFriendApplicationProfiles(t *testing.T) {
	e := newEnv(t)
	n := e.hub
	e.rel.Notifier = n
	ann, ben := e.player("ann", e.app), e.player("ben", e.app)
	e.identity(ann, e.app, "BOT", "ext-ann")
	e.identity(ann, e.child, "STEAM_SESSION_TICKET", "steam-ann")

	e.friends(ann, ben, false)
	want := func(what string, got []wire.ApplicationProfile, app wire.DevApplication, typ, ext string) {
		t.Helper()
		require.Len(t, got, 1, "%s: profiles %+v", what, got)
		require.Equal(t, app.ID, got[0].ApplicationID, "%s: profiles %+v", what, got)
		require.Equal(t, typ, got[0].ProviderType, "%s: profiles %+v", what, got)
		require.Equal(t, ext, got[0].ProviderIssuedUserID, "%s: profiles %+v", what, got)
		require.Equal(t, "ann", got[0].Username, "%s: profiles %+v", what, got)
	}
	want("ben's platform list, token of the game", e.rels(ben, false)[ann.id].User.ApplicationProfiles, e.app, "BOT", "ext-ann")
	benChild := player{id: ben.id, auth: e.token(ben.id, e.child)}
	want("ben's list, token of the sibling game", e.rels(benChild, false)[ann.id].User.ApplicationProfiles, e.child,
		"STEAM_SESSION_TICKET", "steam-ann")
	got := e.rels(ann, false)[ben.id].User.ApplicationProfiles
	require.Empty(t, got, "ben has no identity, yet ann sees profiles %+v", got)

	// ben's side became a friend when ann accepted: before the platform RELATIONSHIP_ADD (every
	// session), each game ann has a profile in got hers, that game's only.
	var order []string
	profilesByApp := map[uint64][]wire.ApplicationProfile{}
	n.mu.Lock()
	for _, s := range n.sent {
		if s.user != ben.id {
			continue
		}
		order = append(order, s.event)
		switch s.event {
		case gwire.EventApplicationProfilesUpdate:
			var u wire.User
			require.NoError(t, json.Unmarshal(s.data, &u), "APPLICATION_PROFILES_UPDATE to app %d: %s", s.app, s.data)
			require.Equal(t, ann.id, uint64(u.ID), "APPLICATION_PROFILES_UPDATE to app %d: %s", s.app, s.data)
			require.NotEqual(t, uint64(0), s.app, "APPLICATION_PROFILES_UPDATE to app %d: %s", s.app, s.data)
			profilesByApp[s.app] = u.ApplicationProfiles
		case gwire.EventRelationshipAdd, gwire.EventRelationshipUpdate:
			var r wire.Relationship
			require.NoError(t, json.Unmarshal(s.data, &r), "a platform event to app %d carries profiles: %s", s.app, s.data)
			require.Equal(t, uint64(0), s.app, "a platform event to app %d carries profiles: %s", s.app, s.data)
			require.Empty(t, r.User.ApplicationProfiles, "a platform event to app %d carries profiles: %s", s.app, s.data)
		}
	}
	n.mu.Unlock()
	require.GreaterOrEqual(t, len(order), 3, "events to ben in order %v", order)
	require.Equal(t, gwire.EventApplicationProfilesUpdate, order[0], "events to ben in order %v", order)
	require.NotEqual(t, gwire.EventApplicationProfilesUpdate, order[len(order)-1], "events to ben in order %v", order)
	want("update to the game's sessions", profilesByApp[uint64(e.app.ID)], e.app, "BOT", "ext-ann")
	want("update to the sibling's sessions", profilesByApp[uint64(e.child.ID)], e.child, "STEAM_SESSION_TICKET", "steam-ann")
	require.Len(t, profilesByApp, 2, "updates to %d applications", len(profilesByApp))

	// A game relationship event is for one game: its user carries that game's profiles.
	n.mu.Lock()
	n.sent = nil
	n.mu.Unlock()
	e.friends(ann, ben, true)
	n.mu.Lock()
	defer n.mu.Unlock()
	found := false
	for _, s := range n.sent {
		if s.user == ben.id && s.event == gwire.EventGameRelationshipAdd {
			var r wire.Relationship
			require.NoError(t, json.Unmarshal(s.data, &r), "GAME_RELATIONSHIP_ADD to app %d: %s", s.app, s.data)
			require.Equal(t, uint64(e.app.ID), s.app, "GAME_RELATIONSHIP_ADD to app %d: %s", s.app, s.data)
			want("game relationship event", r.User.ApplicationProfiles, e.app, "BOT", "ext-ann")
			found = true
		}
		require.NotEqual(t, gwire.EventApplicationProfilesUpdate, s.event, "a game relationship change sent %s", s.event)
	}
	require.True(t, found, "no GAME_RELATIONSHIP_ADD reached ben")
}
