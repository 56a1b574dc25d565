package core

import (
	"fmt"
	"sync"
	"testing"

	"sdkpp/server/servertest"
)

// The demo's flow with both players at once: each sends the other a game friend request, waits
// to be friends, sets a rich presence, and must see the other's. The crossing requests commit as
// pending then friends; the service sends their events in that order (before the fix, the
// friends event could arrive first and the pending one undo it: 4 of 5 runs timed out here).
func TestCrossingFriendRequestsEndAsFriends(t *testing.T) {
	env := servertest.Start(t)
	for round := range 5 {
		a, b := connected(t, env, fmt.Sprint("cross-a", round)), connected(t, env, fmt.Sprint("cross-b", round))
		names := map[*sdkClient]string{a: a.GetCurrentUserV2().Username(), b: b.GetCurrentUserV2().Username()}
		var wg sync.WaitGroup
		for _, pair := range [][2]*sdkClient{{a, b}, {b, a}} {
			me, other := pair[0], pair[1]
			wg.Add(1)
			go func() {
				defer wg.Done()
				me.SendGameFriendRequest(names[other], Func(func(*ClientResult) {}))
			}()
		}
		wg.Wait()
		friend := func(c *sdkClient) bool {
			for _, r := range c.GetRelationships() {
				if r.GameRelationshipType() == RelationshipTypeFriend {
					return true
				}
			}
			return false
		}
		await(t, fmt.Sprint("round ", round, ": friends on both sides"), func() bool { return friend(a) && friend(b) })
		for _, c := range []*sdkClient{a, b} {
			act := NewActivity()
			d := "playing"
			act.SetDetails(&d)
			c.UpdateRichPresence(act, Func(func(*ClientResult) {}))
		}
		await(t, fmt.Sprint("round ", round, ": each sees the other playing"), func() bool {
			return len(a.GetRelationshipsByGroup(RelationshipGroupTypeOnlinePlayingGame)) == 1 &&
				len(b.GetRelationshipsByGroup(RelationshipGroupTypeOnlinePlayingGame)) == 1
		})
	}
}
