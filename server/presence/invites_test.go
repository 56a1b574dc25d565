package presence_test

import (
	"context"
	"encoding/json"
	"testing"

	gwire "sdkpp/wire/gateway"

	"sdkpp/server/devseed"
	"sdkpp/wire"
)

// inviteEvents returns the invite events userID got, with the application each was for (0: every
// session).
func (h *hub) inviteEvents(userID uint64, event string) (invites []wire.ActivityInvite, apps []uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sent {
		if s.user == userID && s.event == event {
			var inv wire.ActivityInvite
			_ = json.Unmarshal(s.data, &inv)
			invites = append(invites, inv)
			apps = append(apps, s.app)
		}
	}
	return invites, apps
}

// Rule INV-1: an invite reaches the recipient's sessions of the sender's game and of its sibling
// applications, never those of an unrelated game; its channel is the players' DM channel. Rule
// EVT-1: accepting still tells every session of the acceptor.
func TestInviteAudienceAndChannel(t *testing.T) {
	e := newEnv(t)
	unrelated := e.w.App(devseed.AppSpec{Name: "Other Studio's Game"})
	host, guest := e.player("host", e.child), e.player("guest", e.app)
	e.token(guest.id, e.child)   // the guest plays the sibling too
	e.token(guest.id, unrelated) // and an unrelated game
	e.friends(host, guest, false)
	e.setPresence(host, e.child, `{"activities":[{"type":0,"party":{"id":"p1","size":[1,4]},"secrets":{"join":"s1"}}]}`)

	raw := e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
	var inv wire.ActivityInvite
	if err := json.Unmarshal(raw, &inv); err != nil {
		t.Fatal(err)
	}
	got, apps := e.hub.inviteEvents(guest.id, gwire.EventActivityInviteCreate)
	want := map[uint64]bool{uint64(e.app.ID): true, uint64(e.child.ID): true}
	if len(got) != 2 || !want[apps[0]] || !want[apps[1]] || apps[0] == apps[1] { // rule INV-1
		t.Fatalf("the invite went to the sessions of applications %v, want the game and its sibling only", apps)
	}
	if uint64(got[0].ApplicationID) != uint64(e.child.ID) { // rule INV-1: which sibling it is for
		t.Fatalf("application_id %d", got[0].ApplicationID)
	}

	// The channel of the invite message: the players' DM channel, the same for every invite.
	dm, err := e.st.FindDMChannel(context.Background(), host.id, guest.id)
	if err != nil || inv.ChannelID == 0 || uint64(inv.ChannelID) != dm.ID || got[0].ChannelID != inv.ChannelID {
		t.Fatalf("channel_id %d, DM channel %+v (%v)", inv.ChannelID, dm, err)
	}
	raw = e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
	var second wire.ActivityInvite
	_ = json.Unmarshal(raw, &second)
	if second.ChannelID != inv.ChannelID || second.ID == inv.ID {
		t.Fatalf("second invite %s", raw)
	}

	// Accepting tells every session of the guest (rule EVT-1).
	e.must(200, "POST", "/activity-invites/"+inv.ID.String()+"/accept", guest.auth, map[string]any{})
	if _, apps := e.hub.inviteEvents(guest.id, gwire.EventActivityInviteUpdate); len(apps) != 1 || apps[0] != 0 {
		t.Fatalf("acceptance sent to the sessions of applications %v, want every session", apps)
	}

	// The host leaves the party: the invites turn invalid on the sessions that got them.
	e.svc.OnPresence(host.id, uint64(e.child.ID), json.RawMessage(`{"activities":[{"type":0,"party":{"id":"p2","size":[1,4]},"secrets":{"join":"s2"}}]}`))
	upd, apps := e.hub.inviteEvents(guest.id, gwire.EventActivityInviteUpdate)
	var invalid []uint64
	for i, u := range upd {
		if !u.IsValid {
			if !want[apps[i]] {
				t.Fatalf("an invalidation went to the sessions of application %d", apps[i])
			}
			invalid = append(invalid, apps[i])
		}
	}
	if len(invalid) != 4 { // two invites, each to the game and its sibling
		t.Fatalf("invalidations to %v", invalid)
	}

	// A recipient who plays none of the family's games gets nothing, and nothing fails.
	outsider := e.player("outsider", unrelated)
	e.friends(host, outsider, false)
	e.must(200, "POST", "/users/"+id(outsider)+"/activity-invites", host.auth, map[string]any{"type": 1})
	if got, _ := e.hub.inviteEvents(outsider.id, gwire.EventActivityInviteCreate); len(got) != 0 {
		t.Fatalf("an unrelated game's session got %d invites", len(got))
	}
}
