package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/bus"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/clustertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// An activity invite sent through node A is accepted through node B, where its recipient is
// connected, and gives the join secret; the sender's presence, changed by the sender's second
// device on node C, makes it invalid: the recipient hears it once, and a later accept through B
// is refused.
func TestInviteCrossesNodes(t *testing.T) {
	c := clustertest.Start(t, 3)
	host := connect(t, c.Nodes[0], "inv-host")
	guest := connect(t, c.Nodes[1], "inv-guest")
	result(t, "friend request", func(done func(*core.ClientResult)) {
		host.SendGameFriendRequestById(guest.id, core.Func(done))
	})
	waitFor(t, "the request on B", func() bool {
		return guest.GetRelationshipHandle(host.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "accept the request", func(done func(*core.ClientResult)) { guest.AcceptGameFriendRequest(host.id, core.Func(done)) })
	waitFor(t, "the friendship on A", func() bool {
		return host.GetRelationshipHandle(guest.id).GameRelationshipType() == core.RelationshipTypeFriend
	})

	a := core.NewActivity()
	p := core.NewActivityParty()
	p.SetId("party-x")
	p.SetCurrentSize(1)
	p.SetMaxSize(4)
	a.SetParty(p)
	s := core.NewActivitySecrets()
	s.SetJoin("cross-node-secret")
	a.SetSecrets(s)
	result(t, "rich presence", func(done func(*core.ClientResult)) { host.UpdateRichPresence(a, core.Func(done)) })

	var created, updated []*core.ActivityInvite
	guest.SetActivityInviteCreatedCallback(core.Func(func(i *core.ActivityInvite) { created = append(created, i) }))
	guest.SetActivityInviteUpdatedCallback(core.Func(func(i *core.ActivityInvite) { updated = append(updated, i) }))
	result(t, "invite through A", func(done func(*core.ClientResult)) {
		host.SendActivityInvite(guest.id, "join us", core.Func(done))
	})
	waitFor(t, "the invite on B", func() bool { return len(created) == 1 })

	var secret string
	result(t, "accept through B", func(done func(*core.ClientResult)) {
		guest.AcceptActivityInvite(created[0], core.Func(func(r *core.ClientResult, s string) { secret = s; done(r) }))
	})
	assert.Equal(t, "cross-node-secret", secret, "node B knows the invite node A sent")

	// The host's second device, on C, clears the game's rich presence: C knows the invite and
	// tells the guest it is no longer valid, once.
	second := connect(t, c.Nodes[2], "inv-host")
	require.Equal(t, host.id, second.id, "one host on two devices")
	result(t, "clear through C", func(done func(*core.ClientResult)) {
		second.UpdateRichPresence(core.NewActivity(), core.Func(done))
	})
	waitFor(t, "the invalidation on B", func() bool {
		for _, u := range updated {
			if !u.IsValid() {
				return true
			}
		}
		return false
	})
	var res *core.ClientResult
	guest.AcceptActivityInvite(created[0], core.Func(func(r *core.ClientResult, _ string) { res = r }))
	waitFor(t, "the stale accept", func() bool { return res != nil })
	assert.EqualValues(t, 400, res.Status(), "a stale invite is refused on B: %s", res.ToString())
	invalid := 0
	for _, u := range updated {
		if !u.IsValid() {
			invalid++
		}
	}
	assert.Equal(t, 1, invalid, "the guest hears of the invalidation once")
}

// A member whose gateway session is on node A joins a guild voice channel: a bot that connects
// to node C sees the voice state in GUILD_CREATE, and the member's second session, on C, the
// channel's voice_start_time as A set it (rule GW-3); when the member's connection on A ends, a
// bot that connects to node B sees nobody in the channel, and C reports no voice session.
func TestGuildVoiceStatesCrossNodes(t *testing.T) {
	c := clustertest.Start(t, 3)
	a := c.Nodes[0]
	g, err := a.Server.CreateGuild(wire.GuildSpec{Name: "Voice", OwnerID: a.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: a.App.BotUserID}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}, {Name: "voice", Type: wire.ChannelGuildVoice, Position: 1}}})
	require.NoError(t, err)
	voice := g.Channels[1].ID
	token := a.Token(t, "alice", "openid sdk.social_layer").AccessToken

	alice := guildtest.Dial(t, a, "?v=10&encoding=json")
	alice.Identify(token, 0)
	alice.Send(gwire.OpVoiceStateUpdate, map[string]any{"guild_id": g.ID.String(), "channel_id": voice.String(), "self_mute": true})
	untilAck(alice) // A took the op 4 before this

	// states identifies the bot on node n and returns the guild's voice states in GUILD_CREATE.
	states := func(n int) []wire.VoiceState {
		bot := guildtest.Dial(t, c.Nodes[n], "?v=10&encoding=json")
		bot.Identify(a.App.BotToken, gwire.IntentGuilds|gwire.IntentGuildVoiceStates)
		var d struct {
			VoiceStates []wire.VoiceState `json:"voice_states"`
		}
		bot.Until(gwire.EventGuildCreate, &d)
		return d.VoiceStates
	}
	second := guildtest.Dial(t, c.Nodes[2], "?v=10&encoding=json")
	second.Identify(token, 0)
	// started asks through alice's session on C when the voice channel's voice session started.
	started := func() *int64 {
		second.Send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": g.ID, "fields": []string{"voice_start_time"}})
		var info gwire.ChannelInfo
		second.Until(gwire.EventChannelInfo, &info)
		require.Len(t, info.Channels, 1, "GW-3")
		return info.Channels[0].VoiceStartTime
	}

	var got []wire.VoiceState
	waitFor(t, "alice's state on C", func() bool { got = states(2); return len(got) == 1 })
	assert.Equal(t, a.User("alice").ID, got[0].UserID)
	require.NotNil(t, got[0].ChannelID)
	assert.Equal(t, voice, *got[0].ChannelID)
	assert.Equal(t, 1, a.Server.Hub().Sessions(uint64(got[0].UserID)), "the state's session is A's")
	assert.NotEmpty(t, got[0].SessionID)
	assert.True(t, got[0].SelfMute)
	start := started()
	require.NotNil(t, start, "GW-3: C reports the channel's voice session")
	assert.InDelta(t, time.Now().Unix(), *start, 60, "GW-3: A's start time")

	require.NoError(t, alice.WS.CloseNow())
	waitFor(t, "nobody in the channel on B", func() bool { return len(states(1)) == 0 })
	waitFor(t, "no voice session on C", func() bool { return started() == nil })
}

// A node that starts after the stream has let go of what the others shared (here: purged, as
// its retention would) still learns it: the running nodes tell it again of their sessions, their
// players' presences and invites, and their guild voice states.
func TestStartedNodeLearnsWhatTheStreamNoLongerHolds(t *testing.T) {
	c := clustertest.Start(t, 2)
	a := c.Nodes[0]
	host := connect(t, a, "old-host")
	guest := connect(t, c.Nodes[1], "old-guest")
	result(t, "friend request", func(done func(*core.ClientResult)) { host.SendGameFriendRequestById(guest.id, core.Func(done)) })
	waitFor(t, "the request on B", func() bool {
		return guest.GetRelationshipHandle(host.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "accept the request", func(done func(*core.ClientResult)) { guest.AcceptGameFriendRequest(host.id, core.Func(done)) })
	act := core.NewActivity()
	party := core.NewActivityParty()
	party.SetId("party-old")
	act.SetParty(party)
	secrets := core.NewActivitySecrets()
	secrets.SetJoin("old-secret")
	act.SetSecrets(secrets)
	result(t, "rich presence", func(done func(*core.ClientResult)) { host.UpdateRichPresence(act, core.Func(done)) })
	var created []*core.ActivityInvite
	guest.SetActivityInviteCreatedCallback(core.Func(func(i *core.ActivityInvite) { created = append(created, i) }))
	result(t, "invite", func(done func(*core.ClientResult)) { host.SendActivityInvite(guest.id, "come", core.Func(done)) })
	waitFor(t, "the invite on B", func() bool { return len(created) == 1 })

	g, err := a.Server.CreateGuild(wire.GuildSpec{Name: "Old", OwnerID: a.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: a.App.BotUserID}},
		Channel: []wire.GuildChannelSpec{{Name: "voice", Type: wire.ChannelGuildVoice}}})
	require.NoError(t, err)
	alice := guildtest.Dial(t, a, "?v=10&encoding=json")
	alice.Identify(a.Token(t, "alice", "openid sdk.social_layer").AccessToken, 0)
	alice.Send(gwire.OpVoiceStateUpdate, map[string]any{"guild_id": g.ID.String(), "channel_id": g.Channels[0].ID.String()})
	untilAck(alice) // A took the op 4 before this
	waitFor(t, "B to know it all", func() bool {
		return c.Nodes[1].Server.Hub().Online(host.id) && c.Nodes[1].Server.Hub().Online(uint64(a.User("alice").ID))
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := nats.Connect(c.NATS.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	stream, err := js.Stream(ctx, bus.Stream)
	require.NoError(t, err)
	require.NoError(t, stream.Purge(ctx))

	n3 := servertest.Start(t, servertest.WithConfig(func(cfg *server.Config) { cfg.Store, cfg.NodeID, cfg.Bus = c.Store, 3, c.NATS.URL() }))
	waitFor(t, "node 3 to know the players online", func() bool {
		return n3.Server.Hub().Online(host.id) && n3.Server.Hub().Online(guest.id)
	})
	late := connect(t, n3, "old-guest") // the guest's second device, on node 3
	waitFor(t, "the host's presence on node 3", func() bool {
		return late.GetRelationshipHandle(host.id).User() != nil && late.GetRelationshipHandle(host.id).User().GameActivity() != nil
	})
	var secret string
	result(t, "accept through node 3", func(done func(*core.ClientResult)) {
		late.AcceptActivityInvite(created[0], core.Func(func(r *core.ClientResult, s string) { secret = s; done(r) }))
	})
	assert.Equal(t, "old-secret", secret)

	bot := guildtest.Dial(t, n3, "?v=10&encoding=json")
	bot.Identify(a.App.BotToken, gwire.IntentGuilds|gwire.IntentGuildVoiceStates)
	var d struct {
		VoiceStates []wire.VoiceState `json:"voice_states"`
	}
	bot.Until(gwire.EventGuildCreate, &d)
	require.Len(t, d.VoiceStates, 1, "node 3 knows alice's voice state")
	assert.Equal(t, a.User("alice").ID, d.VoiceStates[0].UserID)
}

// untilAck sends a heartbeat and reads up to its ACK, past the dispatches before it: the node
// has taken every payload sent before.
func untilAck(g *guildtest.Gateway) {
	g.T.Helper()
	g.Send(gwire.OpHeartbeat, nil)
	for g.Next().Op != gwire.OpHeartbeatACK {
	}
}

// A player sets a party and, once UpdateRichPresence answers, invites a friend over HTTP through
// another node (as a load balancer may send it) that may not have read the presence from the bus
// yet: the invite finds the party every time. The SDK answers once the service has shown the
// player the presence (it is applied on the player's node and on the bus); the other node
// catches up with the bus before it refuses an invite for a party it does not know.
func TestInviteThroughAnotherNodeFindsTheParty(t *testing.T) {
	c := clustertest.Start(t, 3)
	host := connect(t, c.Nodes[0], "via-host")
	hostToken := c.Nodes[0].ProvisionalToken(t, "via-host", "via-host")
	guest := connect(t, c.Nodes[1], "via-guest")
	result(t, "friend request", func(done func(*core.ClientResult)) { host.SendGameFriendRequestById(guest.id, core.Func(done)) })
	waitFor(t, "the request on B", func() bool {
		return guest.GetRelationshipHandle(host.id).GameRelationshipType() == core.RelationshipTypePendingIncoming
	})
	result(t, "accept the request", func(done func(*core.ClientResult)) { guest.AcceptGameFriendRequest(host.id, core.Func(done)) })
	for i := range 10 {
		act := core.NewActivity()
		party := core.NewActivityParty()
		party.SetId(fmt.Sprintf("party-%d", i))
		act.SetParty(party)
		secrets := core.NewActivitySecrets()
		secrets.SetJoin(fmt.Sprintf("secret-%d", i))
		act.SetSecrets(secrets)
		result(t, "rich presence", func(done func(*core.ClientResult)) { host.UpdateRichPresence(act, core.Func(done)) })
		var inv wire.ActivityInvite
		api(t, http.MethodPost, c.Nodes[2].APIURL, "/users/"+strconv.FormatUint(guest.id, 10)+"/activity-invites", hostToken,
			map[string]any{"type": 1}, &inv)
		require.Equal(t, fmt.Sprintf("party-%d", i), inv.PartyID, "invite %d through C", i)
	}
}
