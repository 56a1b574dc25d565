package presence_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/presence"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/wire"
)

// Issue 23: a player sets a presence through node A and, answered, sends an invite over HTTP
// that the load balancer gives to node B, which has not read A's share yet; the guest, told of
// the invite through the bus, accepts it through B before B read the invite's share. B catches
// up with the bus (CatchUp) where its answer would otherwise be a refusal, and answers from what
// the cluster knows; where it already knows enough it does not wait.
func TestInvitesCatchUpWithTheCluster(t *testing.T) {
	const joinable = `{"activities":[{"type":0,"party":{"id":"p1","size":[1,4]},"secrets":{"join":"s1"}}]}`
	for _, c := range []struct {
		name    string
		catchUp func(b *clusterNode, invites *[]presence.SharedInvite) func(context.Context) error
		status  int // of the invite through B
	}{
		{"a node alone does not catch up", nil, http.StatusBadRequest},
		{"B catches up", func(b *clusterNode, invites *[]presence.SharedInvite) func(context.Context) error {
			return func(context.Context) error {
				b.deliver(t)
				for _, inv := range *invites {
					b.svc.ApplyInvite(inv)
				}
				*invites = nil
				return nil
			}
		}, http.StatusOK},
		{"B cannot reach the bus", func(*clusterNode, *[]presence.SharedInvite) func(context.Context) error {
			return func(context.Context) error { return errors.New("bus: disconnected") }
		}, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := newCluster(t, e)
			var invites []presence.SharedInvite // A's invites, on their way to B
			a.svc.ShareInvite = func(inv presence.SharedInvite) { invites = append(invites, inv) }
			calls := 0
			if c.catchUp != nil {
				catchUp := c.catchUp(b, &invites)
				b.svc.CatchUp = func(ctx context.Context) error { calls++; return catchUp(ctx) }
			}
			mux := http.NewServeMux()
			b.svc.Register(mux)
			onB := apicheck.Client{T: t, Handler: mux}
			host, guest := e.player("host", e.app), e.player("guest", e.app)
			e.friends(host, guest, false)
			e.hub.connect(host.id, uint64(e.app.ID), true)
			a.svc.OnSession(host.id, uint64(e.app.ID))
			a.svc.OnPresence(host.id, uint64(e.app.ID), []byte(joinable)) // B has not read it

			invite := func() apicheck.Resp {
				return onB.Do("POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
			}
			r := invite()
			require.Equal(t, c.status, r.Status, "invite through B: %s", r.Body)
			if c.catchUp == nil {
				require.Contains(t, string(r.Body), "ACTIVITY_NOT_JOINABLE")
				return
			}
			require.Equal(t, 1, calls, "one catch-up for the party B did not know")
			if r.Status != http.StatusOK {
				return
			}
			require.Equal(t, http.StatusOK, invite().Status)
			require.Equal(t, 1, calls, "no catch-up where B knows the party")

			// An invite A made, accepted through B before B read it.
			raw := e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
			var inv wire.ActivityInvite
			require.NoError(t, json.Unmarshal(raw, &inv))
			acc := onB.Do("POST", "/activity-invites/"+inv.ID.String()+"/accept", guest.auth, map[string]any{})
			require.Equal(t, http.StatusOK, acc.Status, "accept through B: %s", acc.Body)
			require.Equal(t, 2, calls, "one catch-up for the invite B did not know")
			unknown := onB.Do("POST", "/activity-invites/12345/accept", guest.auth, map[string]any{})
			require.Equal(t, http.StatusNotFound, unknown.Status, "an invite nobody made: %s", unknown.Body)
		})
	}
}
