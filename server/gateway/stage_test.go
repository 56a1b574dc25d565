package gateway

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/internal/outbox"
	gwire "sdkpp/wire/gateway"
)

// failingOutbox is an outbox that cannot store: the change's transaction fails.
type failingOutbox struct{}

func (failingOutbox) AddOutbox(context.Context, string, []byte, time.Time) (uint64, error) {
	return 0, errors.New("the store is unreachable")
}

// change is the dispatches of one change n, as a direct message and a relationship change make
// them: to every session of user 7 (both of its games' sessions: rule MSG-1), to bot 9's
// sessions with DIRECT_MESSAGES, and to user 7's sessions of testApp2 alone.
func change(n int) []outbox.Dispatch {
	d := map[string]int{"n": n}
	return []outbox.Dispatch{
		{Users: []uint64{7}, Event: "MESSAGE_CREATE", Data: d},
		{Users: []uint64{9}, Intent: gwire.IntentDirectMessages, Event: "MESSAGE_CREATE", Data: d},
		{Users: []uint64{7}, App: testApp2, Event: "GAME_RELATIONSHIP_ADD", Data: d},
	}
}

// Stage keeps a change's dispatches, with their filters, in the outbox of its transaction: each
// session of another node gets those its filter keeps, once each and in commit order, whatever
// fails between the commit and the publish (injected here); and without a bus they are
// dispatched after the commit, storing nothing.
func TestStageSurvivesFailuresBetweenCommitAndPublish(t *testing.T) {
	tests := []struct {
		name string
		// fail stages change 1 on a node and lets it fail as the case says; it returns the
		// change's error (its transaction fails: nothing is delivered).
		fail func(t *testing.T, bus *memBus, box *memOutbox) error
	}{
		{"published by its node", func(t *testing.T, bus *memBus, box *memOutbox) error {
			a := bus.node(t, 1)
			publish, err := a.hub.Stage(context.Background(), box, "dms", change(1))
			require.NoError(t, err)
			publish()
			box.release(a.hub)
			assert.Empty(t, box.left("dms"), "deleted with the lock's release")
			return nil
		}},
		{"its node dies after the commit, before the publish", func(t *testing.T, bus *memBus, box *memOutbox) error {
			a := bus.node(t, 1)
			_, err := a.hub.Stage(context.Background(), box, "dms", change(1))
			require.NoError(t, err)
			return nil
		}},
		{"its node dies after the publish, before the delete", func(t *testing.T, bus *memBus, box *memOutbox) error {
			a := bus.node(t, 1)
			publish, err := a.hub.Stage(context.Background(), box, "dms", change(1))
			require.NoError(t, err)
			publish()
			a.hub.Published() // never deleted: the next holder publishes it again
			return nil
		}},
		{"the bus refuses the publish", func(t *testing.T, bus *memBus, box *memOutbox) error {
			a := newEnv(t, func(c *Config) { c.Bus, c.Node, c.Replay = refusingBus{bus}, 1, bus.Read })
			publish, err := a.hub.Stage(context.Background(), box, "dms", change(1))
			require.NoError(t, err)
			publish()
			box.release(a.hub)
			require.Len(t, box.left("dms"), 1, "the change's dispatches, one message of the bus, wait")
			return nil
		}},
		{"the outbox refuses", func(t *testing.T, bus *memBus, _ *memOutbox) error {
			a := bus.node(t, 1)
			_, err := a.hub.Stage(context.Background(), failingOutbox{}, "dms", change(1))
			require.Error(t, err)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus, box := newMemBus(t), &memOutbox{}
			c := bus.node(t, 3) // the players' node
			player, sibling, bot, deaf := c.dial(), c.dial(), c.dial(), c.dial()
			player.identifyOnBus("user-7")
			sibling.identifyOnBus("app2-7")
			bot.send(gwire.OpIdentify, botIdentify("bot-9", gwire.IntentDirectMessages))
			bot.expectOp(gwire.OpDispatch)                       // READY
			deaf.send(gwire.OpIdentify, botIdentify("bot-9", 0)) // without DIRECT_MESSAGES: nothing
			deaf.expectOp(gwire.OpDispatch)
			b := bus.node(t, 2)
			waitFor(t, "B to know the sessions", func() bool { return b.hub.Online(7) && b.hub.Online(9) })

			failed := tc.fail(t, bus, box)
			// B takes the order lock next: it relays what is left, then commits change 2.
			require.True(t, b.hub.Relay(box.left("dms")))
			publish, err := b.hub.Stage(context.Background(), box, "dms", change(2))
			require.NoError(t, err)
			publish()
			box.release(b.hub)
			assert.Empty(t, box.left("dms"))

			changes := []int{1, 2}
			if failed != nil {
				changes = []int{2}
			}
			for _, n := range changes {
				want := `{"n":` + strconv.Itoa(n) + `}`
				for _, x := range []struct {
					c      *client
					events []string
				}{
					{player, []string{"MESSAGE_CREATE"}},
					{sibling, []string{"MESSAGE_CREATE", "GAME_RELATIONSHIP_ADD"}},
					{bot, []string{"MESSAGE_CREATE"}},
				} {
					for _, event := range x.events {
						p := x.c.expectOp(gwire.OpDispatch)
						assert.Equal(t, event, deref(p.T))
						assert.JSONEq(t, want, string(p.D), "in commit order")
					}
				}
			}
			for _, x := range []*client{player, sibling, bot, deaf} {
				x.heartbeat() // nothing more: each once
			}
			assert.Equal(t, 2*len(changes), bus.dispatches(t, "MESSAGE_CREATE"), "the bus holds each once")
		})
	}
}

// A node alone: publish dispatches the change's dispatches after the commit, with their
// filters, and nothing is stored.
func TestStageWithoutABusDispatches(t *testing.T) {
	e := newEnv(t, nil)
	player, sibling, bot := e.dial(), e.dial(), e.dial()
	player.identify("user-7")
	sibling.identify("app2-7")
	bot.send(gwire.OpIdentify, botIdentify("bot-9", gwire.IntentDirectMessages))
	bot.expectOp(gwire.OpDispatch) // READY
	publish, err := e.hub.Stage(context.Background(), failingOutbox{}, "dms", change(1))
	require.NoError(t, err, "nothing is stored")
	publish()
	assert.Equal(t, "MESSAGE_CREATE", deref(player.expectOp(gwire.OpDispatch).T))
	assert.Equal(t, "MESSAGE_CREATE", deref(sibling.expectOp(gwire.OpDispatch).T))
	assert.Equal(t, "GAME_RELATIONSHIP_ADD", deref(sibling.expectOp(gwire.OpDispatch).T))
	assert.Equal(t, "MESSAGE_CREATE", deref(bot.expectOp(gwire.OpDispatch).T))
	for _, x := range []*client{player, sibling, bot} {
		x.heartbeat()
	}
}
