package social

import (
	"context"
	"slices"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/wire"
)

// TakenWait bounds Taken.Wait in the SDK: past it, a presence sent is taken as set (a new
// session sends it again), as it was before the SDK waited for the service's echo.
const TakenWait = 5 * time.Second

// Taken is a wait for the service to show the player the presence the player sent (AwaitOwn).
// The service sends a player's own presence back to the player's sessions once it has taken
// it (applied it, and on a cluster shared it with the other nodes): an invite sent after that,
// on any connection to any node, finds the party the presence carries.
type Taken struct {
	s    *State
	self uint64
	want wire.Presence
	done chan struct{}
}

// AwaitOwn starts a wait for a presence update of the player, user self, that shows the presence
// Own returns now. Call it before the presence is sent (its echo may come before the send
// returns); Done is closed once it has come, and Drop ends a wait that gave up.
func (s *State) AwaitOwn(self uint64) *Taken {
	want, _ := s.Own()
	t := &Taken{s: s, self: self, want: want, done: make(chan struct{})}
	s.mu.Lock()
	s.waits = append(s.waits, t)
	s.mu.Unlock()
	return t
}

// Done is closed once the service showed the player the presence.
func (t *Taken) Done() <-chan struct{} { return t.done }

// Wait returns true once the service showed the player the presence, false when d passed on
// clk or ctx ended first.
func (t *Taken) Wait(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	timer := clk.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.done:
		return true
	case <-timer.C():
	case <-ctx.Done():
	}
	return false
}

// Drop ends the wait.
func (t *Taken) Drop() {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	t.s.waits = slices.DeleteFunc(t.s.waits, func(w *Taken) bool { return w == t })
}

// tookLocked closes and drops the waits that p, a presence update, ends. Call with s.mu held.
func (s *State) tookLocked(p *wire.PresenceUpdate) {
	s.waits = slices.DeleteFunc(s.waits, func(w *Taken) bool {
		if uint64(p.User.ID) != w.self || !shows(p, &w.want, s.appID) {
			return false
		}
		close(w.done)
		return true
	})
}

// shows tells whether the player's own presence update p shows want, the presence op 3 sent
// in application app: its status, and its activity in app as the game set it (the service adds
// the application, a creation time and, when the game left it empty, the name; it strips the
// secrets), or none.
func shows(p *wire.PresenceUpdate, want *wire.Presence, app uint64) bool {
	if p.Status != want.Status {
		return false
	}
	var got *wire.Activity
	for i := range p.Activities {
		a := &p.Activities[i]
		if a.Type != wire.ActivityCustomStatus && a.ApplicationID != nil && uint64(*a.ApplicationID) == app {
			got = a
			break
		}
	}
	if len(want.Activities) == 0 {
		return got == nil
	}
	w := &want.Activities[0]
	return got != nil && got.Type == w.Type && str(got.State) == str(w.State) && str(got.Details) == str(w.Details) &&
		(w.Name == "" || got.Name == w.Name) && partyID(got) == partyID(w)
}

// str is *p, "" for nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// partyID is a's party id, "" without a party.
func partyID(a *wire.Activity) string {
	if a.Party == nil {
		return ""
	}
	return a.Party.ID
}
