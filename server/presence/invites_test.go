package presence_test

import (
	"context"
	"encoding/json"
	"testing"

	gwire "sdkpp/wire/gateway"

	"github.com/stretchr/testify/require"

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
	require.NoError(t, json.Unmarshal(raw, &inv))
	got, apps := e.hub.inviteEvents(guest.id, gwire.EventActivityInviteCreate)
	want := map[uint64]bool{uint64(e.app.ID): true, uint64(e.child.ID): true}
	// rule INV-1
	require.Len(t, got, 2, "the invite went to the sessions of applications %v, want the game and its sibling only", apps)
	require.True(t, want[apps[0]], "the invite went to the sessions of applications %v, want the game and its sibling only", apps)
	require.True(t, want[apps[1]], "the invite went to the sessions of applications %v, want the game and its sibling only", apps)
	require.NotEqual(t, apps[1], apps[0], "the invite went to the sessions of applications %v, want the game and its sibling only", apps)
	// rule INV-1: which sibling it is for
	require.Equal(t, uint64(e.child.ID), uint64(got[0].ApplicationID), "application_id %d", got[0].ApplicationID)

	// The channel of the invite message: the players' DM channel, the same for every invite.
	dm, err := e.st.FindDMChannel(context.Background(), host.id, guest.id)
	require.NoError(t, err, "channel_id %d, DM channel %+v", inv.ChannelID, dm)
	require.NotEqual(t, wire.Snowflake(0), inv.ChannelID, "channel_id %d, DM channel %+v", inv.ChannelID, dm)
	require.Equal(t, dm.ID, uint64(inv.ChannelID), "channel_id %d, DM channel %+v", inv.ChannelID, dm)
	require.Equal(t, inv.ChannelID, got[0].ChannelID, "channel_id %d, DM channel %+v", inv.ChannelID, dm)
	raw = e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
	var second wire.ActivityInvite
	_ = json.Unmarshal(raw, &second)
	require.Equal(t, inv.ChannelID, second.ChannelID, "second invite %s", raw)
	require.NotEqual(t, inv.ID, second.ID, "second invite %s", raw)

	// Accepting tells every session of the guest (rule EVT-1).
	e.must(200, "POST", "/activity-invites/"+inv.ID.String()+"/accept", guest.auth, map[string]any{})
	_, apps = e.hub.inviteEvents(guest.id, gwire.EventActivityInviteUpdate)
	require.Len(t, apps, 1, "acceptance sent to the sessions of applications %v, want every session", apps)
	require.Equal(t, uint64(0), apps[0], "acceptance sent to the sessions of applications %v, want every session", apps)

	// The host leaves the party: the invites turn invalid on the sessions that got them.
	e.svc.OnPresence(host.id, uint64(e.child.ID), json.RawMessage(`{"activities":[{"type":0,"party":{"id":"p2","size":[1,4]},"secrets":{"join":"s2"}}]}`))
	upd, apps := e.hub.inviteEvents(guest.id, gwire.EventActivityInviteUpdate)
	var invalid []uint64
	for i, u := range upd {
		if !u.IsValid {
			require.True(t, want[apps[i]], "an invalidation went to the sessions of application %d", apps[i])
			invalid = append(invalid, apps[i])
		}
	}
	// two invites, each to the game and its sibling
	require.Len(t, invalid, 4, "invalidations to %v", invalid)

	// A recipient who plays none of the family's games gets nothing, and nothing fails.
	outsider := e.player("outsider", unrelated)
	e.friends(host, outsider, false)
	e.must(200, "POST", "/users/"+id(outsider)+"/activity-invites", host.auth, map[string]any{"type": 1})
	got, _ = e.hub.inviteEvents(outsider.id, gwire.EventActivityInviteCreate)
	require.Empty(t, got, "an unrelated game's session got %d invites", len(got))
}
