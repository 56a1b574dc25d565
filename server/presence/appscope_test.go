package presence_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/devseed"
	"sdkpp/wire"
)

// Issue 12, class 2: an invite is acted on only from the game it was sent in or a sibling. The
// recipient's token of an unrelated game can neither accept it (and learn its join secret) nor
// answer a join request with it; the sibling's token can.
func TestInviteActionsCheckTheApplication(t *testing.T) {
	e := newEnv(t)
	unrelated := e.w.App(devseed.AppSpec{Name: "Unrelated Game"})
	host, guest := e.player("host", e.app), e.player("guest", e.app)
	guestElsewhere := e.token(guest.id, unrelated)
	guestSibling := e.token(guest.id, e.child)
	hostElsewhere := e.token(host.id, unrelated)
	e.friends(host, guest, false)
	e.setPresence(host, e.app, `{"activities":[{"type":0,"party":{"id":"p1","size":[1,4]},"secrets":{"join":"s1"}}]}`)

	invite := func() wire.ActivityInvite {
		raw := e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
		var inv wire.ActivityInvite
		require.NoError(t, json.Unmarshal(raw, &inv))
		return inv
	}
	inv := invite()
	status, body := e.do("POST", "/activity-invites/"+inv.ID.String()+"/accept", guestElsewhere, map[string]any{})
	assert.Equal(t, http.StatusNotFound, status, "another game's token: %s", body)
	assert.NotContains(t, string(body), "s1", "the join secret must not leak")
	raw := e.must(200, "POST", "/activity-invites/"+inv.ID.String()+"/accept", guestSibling, map[string]any{})
	var accepted wire.ActivityInviteAccepted
	require.NoError(t, json.Unmarshal(raw, &accepted))
	assert.Equal(t, "s1", accepted.JoinSecret, "a sibling game may accept (rule INV-1)")

	// A join request from the guest, answered by the host from an unrelated game: refused.
	e.setPresence(guest, e.app, `{"activities":[{"type":0,"party":{"id":"g1","size":[1,4]}}]}`)
	raw = e.must(200, "POST", "/users/"+id(host)+"/activity-invites", guest.auth, map[string]any{"type": 5})
	var req wire.ActivityInvite
	require.NoError(t, json.Unmarshal(raw, &req))
	e.setPresence(host, unrelated, `{"activities":[{"type":0,"party":{"id":"p9","size":[1,4]},"secrets":{"join":"s9"}}]}`)
	status, body = e.do("POST", "/users/"+id(guest)+"/activity-invites", hostElsewhere, map[string]any{"type": 1, "reply_to": req.ID})
	assert.Equal(t, http.StatusNotFound, status, "a reply from another game: %s", body)
}
