package core

import (
	"testing"

	"sdkpp/server/servertest"
)

// A provisional player's identity shows as a game profile of the signed-in user, through the
// locked and the lock-free call, also from inside a callback.
func TestUserApplicationProfiles(t *testing.T) {
	env := servertest.Start(t)
	c := newSDKClient(t, env, nil)
	var insideCallback []*UserApplicationProfileHandle
	c.SetStatusChangedCallback(Func(func(s ClientStatus, _ ClientError, _ int32) {
		if s == ClientStatusReady {
			if me := c.GetCurrentUserV2(); me != nil {
				insideCallback = c.GetUserApplicationProfilesNoLock(me.Id())
			}
		}
	}))
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, "profile-ext-7"), resultCallback(&up))
	c.Connect()
	await(t, "Ready", func() bool {
		return c.GetStatus() == ClientStatusReady && c.GetCurrentUserV2() != nil && insideCallback != nil
	})
	me := c.GetCurrentUserV2()
	for name, got := range map[string][]*UserApplicationProfileHandle{
		"locked": c.GetUserApplicationProfiles(me.Id()), "no lock": c.GetUserApplicationProfilesNoLock(me.Id()),
		"inside a callback": insideCallback, "from the user handle": me.UserApplicationProfiles(),
	} {
		if len(got) != 1 {
			t.Fatalf("%s: %d profiles", name, len(got))
		}
		p := got[0]
		if p.ProviderType() != ExternalIdentityProviderTypeDiscordBot || p.ProviderIssuedUserId() != "profile-ext-7" ||
			p.Username() != "Guest profile-ext-7" || p.AvatarHash() != "" {
			t.Fatalf("%s: profile %+v", name, *p.p)
		}
		if _, ok := p.ProviderId(); ok {
			t.Fatalf("%s: a provider id out of nowhere", name)
		}
	}
	if got := c.GetUserApplicationProfiles(424242); len(got) != 0 {
		t.Fatalf("an unknown user has %d profiles", len(got))
	}
	c.Close()
	if got := c.GetUserApplicationProfiles(me.Id()); len(got) != 0 {
		t.Fatal("a closed client still answers")
	}
}

// Two players befriend: each sees the other's provisional profile, already inside the
// RelationshipCreated callback and without the lock; a later session has it from READY.
func TestFriendApplicationProfiles(t *testing.T) {
	env := servertest.Start(t)
	alice, bob := connected(t, env, "prof-alice"), connected(t, env, "prof-bob")
	aliceID, bobID := alice.GetCurrentUserV2().Id(), bob.GetCurrentUserV2().Id()
	if got := bob.GetUserApplicationProfiles(aliceID); len(got) != 0 {
		t.Fatalf("bob knows %d profiles of a stranger", len(got))
	}
	inCallback := map[uint64]int{}
	for _, c := range []*sdkClient{alice, bob} {
		c := c
		c.SetRelationshipCreatedCallback(Func(func(id uint64, platform bool) {
			if platform {
				inCallback[id] = len(c.GetUserApplicationProfilesNoLock(id))
			}
		}))
	}
	befriend(t, alice, bob)

	check := func(who string, c *sdkClient, friend uint64, ext string) {
		t.Helper()
		u := c.GetUser(friend)
		if u == nil {
			t.Fatalf("%s: the friend is not cached", who)
		}
		for name, got := range map[string][]*UserApplicationProfileHandle{
			"locked": c.GetUserApplicationProfiles(friend), "no lock": c.GetUserApplicationProfilesNoLock(friend),
			"user handle": u.UserApplicationProfiles(),
		} {
			if len(got) != 1 || got[0].ProviderType() != ExternalIdentityProviderTypeDiscordBot ||
				got[0].ProviderIssuedUserId() != ext || got[0].Username() != "Guest "+ext {
				t.Fatalf("%s, %s: %d profiles %v", who, name, len(got), got)
			}
		}
	}
	await(t, "the created callbacks", func() bool { return len(inCallback) == 2 })
	check("alice", alice, bobID, "prof-bob")
	check("bob", bob, aliceID, "prof-alice")
	if inCallback[aliceID] != 1 || inCallback[bobID] != 1 {
		t.Fatalf("profiles seen inside RelationshipCreated: %v", inCallback)
	}

	// A new session of alice's learns bob's profile from READY's relationships.
	again := newSDKClient(t, env, nil)
	var up *ClientResult
	again.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, "prof-alice"), resultCallback(&up))
	again.Connect()
	await(t, "the second session", func() bool {
		return again.GetRelationshipHandle(bobID).DiscordRelationshipType() == RelationshipTypeFriend
	})
	check("alice's second session", again, bobID, "prof-bob")
}
