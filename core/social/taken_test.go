package social

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/wire"
)

const self, app = 7, 100

// echo is the player's own presence update as the service sends it back for a in app.
func echo(status string, a *wire.Activity) wire.PresenceUpdate {
	p := wire.PresenceUpdate{User: wire.PresenceUser{ID: self}, Status: status, Activities: []wire.Activity{}}
	if a != nil {
		got := *a
		id := wire.Snowflake(app)
		got.ApplicationID, got.Secrets, got.CreatedAt = &id, nil, 1234
		if got.Name == "" {
			got.Name = "The Game"
		}
		p.Activities = append(p.Activities, got)
	}
	return p
}

func ptr(s string) *string { return &s }

func TestShows(t *testing.T) {
	party := &wire.Activity{Type: 0, State: ptr("In a match"), Details: ptr("Map 3"),
		Party: &wire.ActivityParty{ID: "p1"}, Secrets: &wire.ActivitySecrets{Join: "s1"}}
	other := wire.Snowflake(app + 1)
	custom := wire.Activity{Type: wire.ActivityCustomStatus, Name: "Custom Status", State: ptr("afk")}
	for _, c := range []struct {
		name   string
		sent   *wire.Activity
		status string
		got    wire.PresenceUpdate
		shows  bool
	}{
		{"the activity sent, as the service completes it", party, "", echo("online", party), true},
		{"another status", party, "", echo("idle", party), false},
		{"another party", party, "", echo("online", &wire.Activity{State: party.State, Details: party.Details, Party: &wire.ActivityParty{ID: "p2"}}), false},
		{"no activity yet", party, "", echo("online", nil), false},
		{"a cleared activity", nil, "dnd", echo("dnd", nil), true},
		{"a cleared activity still shown", nil, "dnd", echo("dnd", party), false},
		{"only another game's activity and a custom status", nil, "", func() wire.PresenceUpdate {
			p := echo("online", nil)
			p.Activities = append(p.Activities, wire.Activity{Type: 0, ApplicationID: &other}, custom)
			return p
		}(), true},
		{"a name the game set", &wire.Activity{Name: "Arena"}, "", echo("online", &wire.Activity{Name: "Arena"}), true},
		{"a name the game set, not shown", &wire.Activity{Name: "Arena"}, "", echo("online", &wire.Activity{}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s State
			s.ApplyReady(app, nil, nil, nil)
			s.SetActivity(c.sent)
			s.SetStatus(c.status)
			want, _ := s.Own()
			assert.Equal(t, c.shows, shows(&c.got, &want, app))
		})
	}
}

func TestAwaitOwnEndsWithTheEcho(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s State
		s.ApplyReady(app, nil, nil, nil)
		a := &wire.Activity{Party: &wire.ActivityParty{ID: "p1"}}
		s.SetActivity(a)
		taken := s.AwaitOwn(self)
		defer taken.Drop()
		got := make(chan bool, 1)
		go func() { got <- taken.Wait(context.Background(), clock.Real{}, time.Minute) }()

		s.ApplyPresence(echo("online", nil)) // an earlier echo: not this presence
		friend := echo("online", a)
		friend.User.ID = self + 1
		s.ApplyPresence(friend) // someone else's
		synctest.Wait()
		require.Empty(t, got, "the wait ended before the echo")

		s.ApplyPresence(echo("online", a))
		synctest.Wait()
		require.True(t, <-got)
		require.Empty(t, s.waits, "the wait is dropped once ended")
	})
}

func TestAwaitOwnGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s State
		s.ApplyReady(app, nil, nil, nil)
		taken := s.AwaitOwn(self)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.False(t, taken.Wait(ctx, clock.Real{}, time.Minute), "its context ended")
		start := time.Now()
		require.False(t, taken.Wait(context.Background(), clock.Real{}, time.Second), "no echo")
		require.Equal(t, time.Second, time.Since(start), "it waits exactly its bound")
		taken.Drop()
		require.Empty(t, s.waits)
		s.ApplyPresence(echo("online", nil)) // nobody waits: nothing to close
	})
}
