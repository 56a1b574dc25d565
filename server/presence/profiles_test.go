package presence_test

import (
	"context"
	"encoding/json"
	"testing"

	gwire "sdkpp/wire/gateway"

	"sdkpp/server/store"
	"sdkpp/wire"
)

// identity gives p an external identity in app, as the provisional-account endpoints do.
func (e *env) identity(p player, app wire.DevApplication, typ, externalID string) {
	e.t.Helper()
	err := e.st.PutIdentity(context.Background(), &store.Identity{AppID: uint64(app.ID), Type: typ, ExternalID: externalID,
		UserID: p.id, ProvisionalUserID: p.id, CreatedAt: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
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
		if len(got) != 1 || got[0].ApplicationID != app.ID || got[0].ProviderType != typ ||
			got[0].ProviderIssuedUserID != ext || got[0].Username != "ann" {
			t.Fatalf("%s: profiles %+v", what, got)
		}
	}
	want("ben's platform list, token of the game", e.rels(ben, false)[ann.id].User.ApplicationProfiles, e.app, "BOT", "ext-ann")
	benChild := player{id: ben.id, auth: e.token(ben.id, e.child)}
	want("ben's list, token of the sibling game", e.rels(benChild, false)[ann.id].User.ApplicationProfiles, e.child,
		"STEAM_SESSION_TICKET", "steam-ann")
	if got := e.rels(ann, false)[ben.id].User.ApplicationProfiles; len(got) != 0 {
		t.Fatalf("ben has no identity, yet ann sees profiles %+v", got)
	}

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
			if err := json.Unmarshal(s.data, &u); err != nil || uint64(u.ID) != ann.id || s.app == 0 {
				t.Fatalf("APPLICATION_PROFILES_UPDATE to app %d: %s", s.app, s.data)
			}
			profilesByApp[s.app] = u.ApplicationProfiles
		case gwire.EventRelationshipAdd, gwire.EventRelationshipUpdate:
			var r wire.Relationship
			if err := json.Unmarshal(s.data, &r); err != nil || s.app != 0 || len(r.User.ApplicationProfiles) != 0 {
				t.Fatalf("a platform event to app %d carries profiles: %s", s.app, s.data)
			}
		}
	}
	n.mu.Unlock()
	if len(order) < 3 || order[0] != gwire.EventApplicationProfilesUpdate || order[len(order)-1] == gwire.EventApplicationProfilesUpdate {
		t.Fatalf("events to ben in order %v", order)
	}
	want("update to the game's sessions", profilesByApp[uint64(e.app.ID)], e.app, "BOT", "ext-ann")
	want("update to the sibling's sessions", profilesByApp[uint64(e.child.ID)], e.child, "STEAM_SESSION_TICKET", "steam-ann")
	if len(profilesByApp) != 2 {
		t.Fatalf("updates to %d applications", len(profilesByApp))
	}

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
			if err := json.Unmarshal(s.data, &r); err != nil || s.app != uint64(e.app.ID) {
				t.Fatalf("GAME_RELATIONSHIP_ADD to app %d: %s", s.app, s.data)
			}
			want("game relationship event", r.User.ApplicationProfiles, e.app, "BOT", "ext-ann")
			found = true
		}
		if s.event == gwire.EventApplicationProfilesUpdate {
			t.Fatalf("a game relationship change sent %s", s.event)
		}
	}
	if !found {
		t.Fatal("no GAME_RELATIONSHIP_ADD reached ben")
	}
}
