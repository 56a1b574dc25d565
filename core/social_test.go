package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sdkpp/core/records"
	"sdkpp/server/servertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

// call runs an operation with a result callback and waits for it.
func call(t *testing.T, what string, op func(cb Callback[func(*ClientResult)])) *ClientResult {
	t.Helper()
	var r *ClientResult
	op(resultCallback(&r))
	await(t, what, func() bool { return r != nil })
	return r
}

func mustSucceed(t *testing.T, what string, r *ClientResult) {
	t.Helper()
	require.True(t, r.Successful(), "%s: %s %s", what, r.ToString(), r.ResponseBody())
}

// befriend makes a and b platform friends through the SDK.
func befriend(t *testing.T, a, b *sdkClient) {
	t.Helper()
	bID := b.GetCurrentUserV2().Id()
	aID := a.GetCurrentUserV2().Id()
	mustSucceed(t, "send", call(t, "SendDiscordFriendRequest", func(cb Callback[func(*ClientResult)]) {
		a.SendDiscordFriendRequest(b.GetCurrentUserV2().Username(), Callback[ClientSendFriendRequestCallback](cb))
	}))
	await(t, "the request to arrive", func() bool {
		return b.GetRelationshipHandle(aID).DiscordRelationshipType() == RelationshipTypePendingIncoming
	})
	mustSucceed(t, "accept", call(t, "AcceptDiscordFriendRequest", func(cb Callback[func(*ClientResult)]) {
		b.AcceptDiscordFriendRequest(aID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "friendship on both sides", func() bool {
		return a.GetRelationshipHandle(bID).DiscordRelationshipType() == RelationshipTypeFriend &&
			b.GetRelationshipHandle(aID).DiscordRelationshipType() == RelationshipTypeFriend
	})
}

// Two players befriend, set rich presence with every Activity field, and see each other's; the
// friends list groups follow (rules ACT-1, ACT-2, ACT-4, ACT-5).
func TestFriendsSeeEachOthersRichPresence(t *testing.T) {
	env := servertest.Start(t)
	alice, bob := connected(t, env, "rp-alice"), connected(t, env, "rp-bob")
	aliceID, bobID := alice.GetCurrentUserV2().Id(), bob.GetCurrentUserV2().Id()
	var created []uint64
	var groups int
	bob.SetRelationshipCreatedCallback(Func(func(id uint64, platform bool) {
		if platform {
			created = append(created, id)
		}
	}))
	bob.SetRelationshipGroupsUpdatedCallback(Func(func(uint64) { groups++ }))
	befriend(t, alice, bob)
	require.Contains(t, created, aliceID, "bob's RelationshipCreated callback did not fire for alice: %v", created)
	await(t, "alice online in bob's list", func() bool {
		return len(bob.GetRelationshipsByGroup(RelationshipGroupTypeOnlineElsewhere)) == 1
	})

	a := NewActivity()
	a.SetType(ActivityTypesPlaying)
	a.SetName("Harbor Siege") // rule ACT-4
	a.SetState(strp("In a match"))
	a.SetStateUrl(strp("https://game.example/state")) // rule ACT-2
	a.SetDetails(strp("Capture the flag"))
	a.SetDetailsUrl(strp("https://game.example/details")) // rule ACT-2
	as := NewActivityAssets()
	as.SetLargeImage(strp("map_harbor"))
	as.SetLargeUrl(strp("https://game.example/large")) // rule ACT-2
	as.SetSmallImage(strp("class_medic"))
	as.SetSmallUrl(strp("https://game.example/small")) // rule ACT-2
	as.SetInviteCoverImage(strp("https://game.example/cover.png"))
	a.SetAssets(as)
	p := NewActivityParty()
	p.SetId("party-1")
	p.SetCurrentSize(1)
	p.SetMaxSize(4)
	a.SetParty(p)
	s := NewActivitySecrets()
	s.SetJoin("join-secret-1")
	a.SetSecrets(s)
	btn := NewActivityButton()
	btn.SetLabel("Watch")
	btn.SetUrl("https://game.example/watch")
	a.AddButton(btn) // rule ACT-5
	mustSucceed(t, "UpdateRichPresence", call(t, "UpdateRichPresence", func(cb Callback[func(*ClientResult)]) {
		alice.UpdateRichPresence(a, Callback[ClientUpdateRichPresenceCallback](cb))
	}))

	u := bob.GetUser(aliceID)
	await(t, "bob to see alice's activity", func() bool { return u.GameActivity() != nil })
	got := u.GameActivity()
	st, _ := got.State()
	su, _ := got.StateUrl()
	du, _ := got.DetailsUrl()
	lu, _ := got.Assets().LargeUrl()
	smu, _ := got.Assets().SmallUrl()
	app, _ := got.ApplicationId()
	require.Equal(t, "Harbor Siege", got.Name(), "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, "In a match", st, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, "https://game.example/state", su, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, "https://game.example/details", du, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, "https://game.example/large", lu, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, "https://game.example/small", smu, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, uint64(env.App.ID), app, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Len(t, got.GetButtons(), 1, "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Equal(t, "Watch", got.GetButtons()[0].Label(), "activity as bob sees it: %+v", records.ActivityToWire(got))
	require.Nil(t, got.Secrets(), "the join secret reached a friend's presence")
	// Two snapshots of one presence are equal; the friend's lacks the secret the game set.
	require.True(t, got.Equals(u.GameActivity()), "Activity.Equals: snapshots of one presence differ, or the friend's equals the sender's")
	require.False(t, got.Equals(a), "Activity.Equals: snapshots of one presence differ, or the friend's equals the sender's")
	require.Equal(t, StatusTypeOnline, u.Status(), "status %s", u.Status())
	playing := bob.GetRelationshipsByGroup(RelationshipGroupTypeOnlinePlayingGame)
	require.Len(t, playing, 1, "playing group %v (groups updated %d times)", playing, groups)
	require.Equal(t, aliceID, playing[0].Id(), "playing group %v (groups updated %d times)", playing, groups)
	require.NotZero(t, groups, "playing group %v (groups updated %d times)", playing, groups)
	// The handle is live: a new value shows without a new handle.
	mustSucceed(t, "SetOnlineStatus", call(t, "SetOnlineStatus", func(cb Callback[func(*ClientResult)]) {
		alice.SetOnlineStatus(StatusTypeDnd, Callback[ClientUpdateStatusCallback](cb))
	}))
	await(t, "bob to see alice dnd", func() bool { return u.Status() == StatusTypeDnd })

	// rule ACT-4: without a name the application's name shows.
	b := NewActivity()
	b.SetDetails(strp("In the menu"))
	mustSucceed(t, "UpdateRichPresence", call(t, "UpdateRichPresence", func(cb Callback[func(*ClientResult)]) {
		bob.UpdateRichPresence(b, Callback[ClientUpdateRichPresenceCallback](cb))
	}))
	ab := alice.GetUser(bobID)
	await(t, "alice to see bob's activity", func() bool { return ab.GameActivity() != nil })
	require.Equal(t, env.App.Name, ab.GameActivity().Name(), "name %q, want the application's %q", ab.GameActivity().Name(), env.App.Name)

	// Bad input is refused before anything is sent: three buttons, a non-http URL, a short state.
	for name, bad := range map[string]func(*Activity){
		"three buttons": func(x *Activity) { x.AddButton(btn); x.AddButton(btn); x.AddButton(btn) },
		"state url":     func(x *Activity) { x.SetStateUrl(strp("javascript:alert(1)")) },
		"short state":   func(x *Activity) { x.SetState(strp("x")) },
	} {
		x := NewActivity()
		bad(x)
		r := call(t, name, func(cb Callback[func(*ClientResult)]) {
			bob.UpdateRichPresence(x, Callback[ClientUpdateRichPresenceCallback](cb))
		})
		assert.Equal(t, ErrorTypeValidationError, r.Type(), "%s: %s", name, r.ToString())
	}

	alice.ClearRichPresence()
	await(t, "alice's activity to clear", func() bool { return u.GameActivity() == nil })
	// Presence clears when the last session ends.
	alice.Close()
	await(t, "alice offline", func() bool {
		return u.Status() == StatusTypeOffline && len(bob.GetRelationshipsByGroup(RelationshipGroupTypeOffline)) == 1
	})
	assert.Equal(t, RelationshipTypeNone, alice.GetRelationshipHandle(bobID).DiscordRelationshipType(), "a relationship handle of a dropped Client still reads values")
}

// Relationship operations: game friends, reject, cancel, block, and clear refusals.
func TestRelationshipOperations(t *testing.T) {
	env := servertest.Start(t)
	a, b := connected(t, env, "rel-a"), connected(t, env, "rel-b")
	aID, bID := a.GetCurrentUserV2().Id(), b.GetCurrentUserV2().Id()

	// Game friends, by id.
	mustSucceed(t, "game request", call(t, "SendGameFriendRequestById", func(cb Callback[func(*ClientResult)]) {
		a.SendGameFriendRequestById(bID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "pending game request", func() bool {
		return b.GetRelationshipHandle(aID).GameRelationshipType() == RelationshipTypePendingIncoming &&
			a.GetRelationshipHandle(bID).GameRelationshipType() == RelationshipTypePendingOutgoing
	})
	// Accepting what is not pending is a validation error, nothing is sent.
	r := call(t, "accept wrong side", func(cb Callback[func(*ClientResult)]) {
		a.AcceptGameFriendRequest(bID, Callback[ClientUpdateRelationshipCallback](cb))
	})
	require.Equal(t, ErrorTypeValidationError, r.Type(), r.ToString())
	mustSucceed(t, "accept", call(t, "AcceptGameFriendRequest", func(cb Callback[func(*ClientResult)]) {
		b.AcceptGameFriendRequest(aID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "game friends", func() bool {
		rh := a.GetRelationshipHandle(bID)
		return rh.GameRelationshipType() == RelationshipTypeFriend && rh.DiscordRelationshipType() == RelationshipTypeNone
	})
	got := a.SearchFriendsByUsername(strings.ToUpper(b.GetCurrentUserV2().Username()[:5]))
	require.Len(t, got, 1, "search: %v", got)
	require.Equal(t, bID, got[0].Id(), "search: %v", got)

	// A platform request, cancelled; another, rejected.
	mustSucceed(t, "send", call(t, "send", func(cb Callback[func(*ClientResult)]) {
		a.SendDiscordFriendRequestById(bID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "outgoing", func() bool {
		return a.GetRelationshipHandle(bID).DiscordRelationshipType() == RelationshipTypePendingOutgoing
	})
	mustSucceed(t, "cancel", call(t, "cancel", func(cb Callback[func(*ClientResult)]) {
		a.CancelDiscordFriendRequest(bID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "cancelled", func() bool { return b.GetRelationshipHandle(aID).DiscordRelationshipType() == RelationshipTypeNone })
	mustSucceed(t, "send", call(t, "send", func(cb Callback[func(*ClientResult)]) {
		a.SendDiscordFriendRequestById(bID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "incoming", func() bool {
		return b.GetRelationshipHandle(aID).DiscordRelationshipType() == RelationshipTypePendingIncoming
	})
	require.False(t, b.GetRelationshipHandle(aID).IsSpamRequest(), "a single request is not spam (rule REL-1)")
	mustSucceed(t, "reject", call(t, "reject", func(cb Callback[func(*ClientResult)]) {
		b.RejectDiscordFriendRequest(aID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "rejected", func() bool { return a.GetRelationshipHandle(bID).DiscordRelationshipType() == RelationshipTypeNone })

	// Block removes the game friendship too; the blocked player's request fails with 80000.
	mustSucceed(t, "block", call(t, "block", func(cb Callback[func(*ClientResult)]) {
		b.BlockUser(aID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "blocked", func() bool {
		return b.GetRelationshipHandle(aID).DiscordRelationshipType() == RelationshipTypeBlocked &&
			a.GetRelationshipHandle(bID).GameRelationshipType() == RelationshipTypeNone
	})
	r = call(t, "request while blocked", func(cb Callback[func(*ClientResult)]) {
		a.SendDiscordFriendRequestById(bID, Callback[ClientUpdateRelationshipCallback](cb))
	})
	require.False(t, r.Successful(), r.ToString())
	require.EqualValues(t, 80000, r.ErrorCode(), r.ToString())
	require.EqualValues(t, 400, r.Status(), r.ToString())
	mustSucceed(t, "unblock", call(t, "unblock", func(cb Callback[func(*ClientResult)]) {
		b.UnblockUser(aID, Callback[ClientUpdateRelationshipCallback](cb))
	}))
	await(t, "unblocked", func() bool { return len(b.GetRelationships()) == 0 })

	// Unknown users and empty names.
	r = call(t, "unknown", func(cb Callback[func(*ClientResult)]) {
		a.SendDiscordFriendRequest("no-such-user-anywhere", Callback[ClientSendFriendRequestCallback](cb))
	})
	require.EqualValues(t, 10013, r.ErrorCode(), r.ToString())
	require.EqualValues(t, 404, r.Status(), r.ToString())
	r = call(t, "empty", func(cb Callback[func(*ClientResult)]) {
		a.SendGameFriendRequest(" ", Callback[ClientSendFriendRequestCallback](cb))
	})
	assert.Equal(t, ErrorTypeValidationError, r.Type(), r.ToString())
}

// rule REL-1: a burst of friend requests marks the later ones as spam for their recipients.
func TestSpamRequestFlag(t *testing.T) {
	env := servertest.Start(t)
	spammer := connected(t, env, "spammer")
	var last *sdkClient
	for i := 0; i < 6; i++ {
		target := connected(t, env, "target-"+string(rune('a'+i)))
		mustSucceed(t, "send", call(t, "send", func(cb Callback[func(*ClientResult)]) {
			spammer.SendDiscordFriendRequestById(target.GetCurrentUserV2().Id(), Callback[ClientUpdateRelationshipCallback](cb))
		}))
		sid := spammer.GetCurrentUserV2().Id()
		await(t, "incoming", func() bool {
			return target.GetRelationshipHandle(sid).DiscordRelationshipType() == RelationshipTypePendingIncoming
		})
		spam := target.GetRelationshipHandle(sid).IsSpamRequest()
		require.Equal(t, (i >= 5), spam, "request %d: IsSpamRequest %v", i, spam) // rule REL-1
		last = target
	}
	_ = last
}

// rule EVT-1: an invite accepted on one of a player's devices fires the invite callback on both
// of that player's sessions; rules INV-1 and ACT-3: the invite names its application and carries
// the activity's cover image.
func TestInviteAcceptedOnOneDeviceFiresOnBoth(t *testing.T) {
	env := servertest.Start(t)
	host := connected(t, env, "inv-host")
	guest1 := connected(t, env, "inv-guest")
	guest2 := connected(t, env, "inv-guest") // the same player on a second device
	require.Equal(t, guest2.GetCurrentUserV2().Id(), guest1.GetCurrentUserV2().Id(), "the two devices are not one player")
	befriend(t, host, guest1)
	hostID := host.GetCurrentUserV2().Id()

	// Not joinable yet: a clear 400.
	r := call(t, "invite without party", func(cb Callback[func(*ClientResult)]) {
		host.SendActivityInvite(guest1.GetCurrentUserV2().Id(), "come", Callback[ClientSendActivityInviteCallback](cb))
	})
	require.EqualValues(t, 400, r.Status(), r.ToString())
	require.EqualValues(t, 50035, r.ErrorCode(), r.ToString())

	a := NewActivity()
	p := NewActivityParty()
	p.SetId("party-7")
	p.SetCurrentSize(1)
	p.SetMaxSize(4)
	a.SetParty(p)
	s := NewActivitySecrets()
	s.SetJoin("the-join-secret")
	a.SetSecrets(s)
	mustSucceed(t, "presence", call(t, "UpdateRichPresence", func(cb Callback[func(*ClientResult)]) {
		host.UpdateRichPresence(a, Callback[ClientUpdateRichPresenceCallback](cb))
	}))

	var got1, got2 []*ActivityInvite
	guest1.SetActivityInviteCreatedCallback(Func(func(i *ActivityInvite) { got1 = append(got1, i) }))
	guest2.SetActivityInviteCreatedCallback(Func(func(i *ActivityInvite) { got2 = append(got2, i) }))
	mustSucceed(t, "invite", call(t, "SendActivityInvite", func(cb Callback[func(*ClientResult)]) {
		host.SendActivityInvite(guest1.GetCurrentUserV2().Id(), "join us", Callback[ClientSendActivityInviteCallback](cb))
	}))
	await(t, "the invite on both devices", func() bool { return len(got1) == 1 && len(got2) == 1 })
	inv := got1[0]
	// rule INV-1
	require.Equal(t, hostID, inv.SenderId(), "invite %+v", inv)
	require.Equal(t, ActivityActionTypesJoin, inv.Type(), "invite %+v", inv)
	require.Equal(t, uint64(env.App.ID), inv.ApplicationId(), "invite %+v", inv)
	require.Equal(t, "party-7", inv.PartyId(), "invite %+v", inv)
	require.True(t, inv.IsValid(), "invite %+v", inv)
	require.NotZero(t, inv.MessageId(), "invite %+v", inv)
	// The invite's channel is the players' DM channel: a direct message between them lands there.
	var sent *ClientResult
	var dm uint64
	guest1.SendUserMessage(hostID, "on my way", Func(func(r *ClientResult, id uint64) { sent, dm = r, id }))
	await(t, "a direct message", func() bool { return sent != nil })
	mustSucceed(t, "SendUserMessage", sent)
	m := guest1.GetMessageHandle(dm)
	require.NotZero(t, inv.ChannelId(), "invite channel %d, DM channel %v", inv.ChannelId(), m)
	require.NotNil(t, m, "invite channel %d, DM channel %v", inv.ChannelId(), m)
	require.Equal(t, inv.ChannelId(), m.ChannelId(), "invite channel %d, DM channel %v", inv.ChannelId(), m)
	require.Equal(t, inv.ChannelId(), got2[0].ChannelId(), "invite channel %d, DM channel %v", inv.ChannelId(), m)

	var secret string
	var res *ClientResult
	guest2.AcceptActivityInvite(got2[0], Func(func(r *ClientResult, s string) { res, secret = r, s }))
	await(t, "accept", func() bool { return res != nil })
	mustSucceed(t, "accept", res)
	require.Equal(t, "the-join-secret", secret, "join secret %q", secret)
	// rule EVT-1: accepted on device 2, the callback fires on device 1 (and on 2).
	await(t, "the acceptance on both devices", func() bool { return len(got1) == 2 && len(got2) == 2 })

	// The host leaves the party: the invite stops being valid.
	var upd []*ActivityInvite
	guest1.SetActivityInviteUpdatedCallback(Func(func(i *ActivityInvite) { upd = append(upd, i) }))
	host.ClearRichPresence()
	await(t, "invite invalidated", func() bool { return len(upd) == 1 && !upd[0].IsValid() })
	res = nil
	guest1.AcceptActivityInvite(inv, Func(func(r *ClientResult, s string) { res = r }))
	await(t, "accept stale", func() bool { return res != nil })
	assert.False(t, res.Successful(), res.ToString())
	assert.EqualValues(t, 400, res.Status(), res.ToString())
}

// Join request and reply: the guest asks, the host answers with an invite.
func TestJoinRequestAndReply(t *testing.T) {
	env := servertest.Start(t)
	host, guest := connected(t, env, "jr-host"), connected(t, env, "jr-guest")
	befriend(t, host, guest)
	a := NewActivity()
	p := NewActivityParty()
	p.SetId("party-9")
	a.SetParty(p)
	s := NewActivitySecrets()
	s.SetJoin("secret-9")
	a.SetSecrets(s)
	mustSucceed(t, "presence", call(t, "UpdateRichPresence", func(cb Callback[func(*ClientResult)]) {
		host.UpdateRichPresence(a, Callback[ClientUpdateRichPresenceCallback](cb))
	}))
	var requests, invites []*ActivityInvite
	host.SetActivityInviteCreatedCallback(Func(func(i *ActivityInvite) { requests = append(requests, i) }))
	guest.SetActivityInviteCreatedCallback(Func(func(i *ActivityInvite) { invites = append(invites, i) }))
	mustSucceed(t, "request", call(t, "SendActivityJoinRequest", func(cb Callback[func(*ClientResult)]) {
		guest.SendActivityJoinRequest(host.GetCurrentUserV2().Id(), Callback[ClientSendActivityInviteCallback](cb))
	}))
	await(t, "the request", func() bool { return len(requests) == 1 })
	require.Equal(t, ActivityActionTypesJoinRequest, requests[0].Type(), requests[0].Type())
	mustSucceed(t, "reply", call(t, "SendActivityJoinRequestReply", func(cb Callback[func(*ClientResult)]) {
		host.SendActivityJoinRequestReply(requests[0], Callback[ClientSendActivityInviteCallback](cb))
	}))
	await(t, "the invite", func() bool { return len(invites) == 1 && invites[0].Type() == ActivityActionTypesJoin })
}

// RegisterLaunchCommand and RegisterLaunchStoreApplication write where the desktop client reads.
func TestRegisterLaunch(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(LaunchDirEnv, dir)
	c := NewClient()
	defer c.Close()
	require.False(t, c.RegisterLaunchCommand(0, "/games/harbor --join"), "no application id, yet registered")
	require.True(t, c.RegisterLaunchCommand(42, "/games/harbor --join"), "registration failed")
	require.True(t, c.RegisterLaunchStoreApplication(43, 1234), "registration failed")
	raw, err := os.ReadFile(filepath.Join(dir, "42.json"))
	require.NoError(t, err, "%s", raw)
	require.Contains(t, string(raw), `"command": "/games/harbor --join"`, "%s %v", raw, err)
	raw, err = os.ReadFile(filepath.Join(dir, "43.json"))
	assert.NoError(t, err, "%s", raw)
	assert.Contains(t, string(raw), `"store_app_id": 1234`, "%s %v", raw, err)
	assert.False(t, c.RegisterLaunchStoreApplication(43, 0), "store app id 0 accepted")
}
