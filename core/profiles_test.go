package core

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"sdkpp/server/extauth"
	"sdkpp/server/servertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		require.Len(t, got, 1, "%s: %d profiles", name, len(got))
		p := got[0]
		require.Equal(t, ExternalIdentityProviderTypeDiscordBot, p.ProviderType(), "%s: profile %+v", name, *p.p)
		require.Equal(t, "profile-ext-7", p.ProviderIssuedUserId(), "%s: profile %+v", name, *p.p)
		require.Equal(t, "Guest profile-ext-7", p.Username(), "%s: profile %+v", name, *p.p)
		require.Equal(t, "", p.AvatarHash(), "%s: profile %+v", name, *p.p)
		_, ok := p.ProviderId()
		require.False(t, ok, "%s: a provider id out of nowhere", name)
	}
	got := c.GetUserApplicationProfiles(424242)
	require.Empty(t, got, "an unknown user has %d profiles", len(got))
	c.Close()
	assert.Empty(t, c.GetUserApplicationProfiles(me.Id()), "a closed client still answers")
}

// Two players befriend: each sees the other's provisional profile, already inside the
// RelationshipCreated callback and without the lock; a later session has it from READY.
func TestFriendApplicationProfiles(t *testing.T) {
	env := servertest.Start(t)
	alice, bob := connected(t, env, "prof-alice"), connected(t, env, "prof-bob")
	aliceID, bobID := alice.GetCurrentUserV2().Id(), bob.GetCurrentUserV2().Id()
	got := bob.GetUserApplicationProfiles(aliceID)
	require.Empty(t, got, "bob knows %d profiles of a stranger", len(got))
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
		require.NotNil(t, u, "%s: the friend is not cached", who)
		for name, got := range map[string][]*UserApplicationProfileHandle{
			"locked": c.GetUserApplicationProfiles(friend), "no lock": c.GetUserApplicationProfilesNoLock(friend),
			"user handle": u.UserApplicationProfiles(),
		} {
			require.Len(t, got, 1, "%s, %s: %d profiles %v", who, name, len(got), got)
			require.Equal(t, ExternalIdentityProviderTypeDiscordBot, got[0].ProviderType(), "%s, %s: %d profiles %v", who, name, len(got), got)
			require.Equal(t, ext, got[0].ProviderIssuedUserId(), "%s, %s: %d profiles %v", who, name, len(got), got)
			require.Equal(t, "Guest "+ext, got[0].Username(), "%s, %s: %d profiles %v", who, name, len(got), got)
		}
	}
	await(t, "the created callbacks", func() bool { return len(inCallback) == 2 })
	check("alice", alice, bobID, "prof-bob")
	check("bob", bob, aliceID, "prof-alice")
	require.EqualValues(t, 1, inCallback[aliceID], "profiles seen inside RelationshipCreated: %v", inCallback)
	require.EqualValues(t, 1, inCallback[bobID], "profiles seen inside RelationshipCreated: %v", inCallback)

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

// A player's game profiles follow a merge and an unmerge at once: the players who see the player
// (here a lobby co-member) and the player's own session get APPLICATION_PROFILES_UPDATE, without
// reconnecting.
func TestProfilesFollowMergeAndUnmerge(t *testing.T) {
	env := servertest.Start(t)
	appID := uint64(env.App.ID)
	alice, code, redirect, verifier := authorize(t, env) // a full account
	var tok *tokens
	alice.GetToken(appID, code, verifier, redirect, tokenCallback(&tok))
	await(t, "GetToken", func() bool { return tok != nil })
	mustSucceed(t, "GetToken", tok.result)
	var up *ClientResult
	alice.UpdateToken(AuthorizationTokenTypeBearer, tok.access, resultCallback(&up))
	alice.Connect()
	await(t, "alice Ready", func() bool { return alice.GetStatus() == ClientStatusReady && alice.GetCurrentUserV2() != nil })
	aliceID := alice.GetCurrentUserV2().Id()
	bob := connected(t, env, "merge-bob")
	var lobby uint64
	for _, c := range []*sdkClient{alice, bob} {
		var res *ClientResult
		c.CreateOrJoinLobby("merge-lobby", Func(func(r *ClientResult, id uint64) { res, lobby = r, id }))
		await(t, "CreateOrJoinLobby", func() bool { return res != nil })
		mustSucceed(t, "CreateOrJoinLobby", res)
	}
	await(t, "bob sees alice in the lobby", func() bool {
		return bob.GetLobbyHandle(lobby).GetLobbyMemberHandle(aliceID).User() != nil
	})
	got := bob.GetUserApplicationProfiles(aliceID)
	require.Empty(t, got, "a full account without an identity in the game has %d game profiles", len(got))

	// alice links a Steam identity to her account (the code exchange with external credentials).
	steam, err := extauth.DevToken(appID, env.App.ClientSecret, extauth.SteamSessionTicket, "steam-alice", env.Clock.Now(), time.Hour)
	require.NoError(t, err)
	code, redirect, verifier = authorizeCode(t, alice)
	var merged *tokens
	alice.GetTokenFromProvisionalMerge(appID, code, verifier, redirect, AuthenticationExternalAuthTypeSteamSessionTicket, steam, tokenCallback(&merged))
	await(t, "GetTokenFromProvisionalMerge", func() bool { return merged != nil })
	mustSucceed(t, "GetTokenFromProvisionalMerge", merged.result)
	hasSteam := func(c *sdkClient) bool {
		p := c.GetUserApplicationProfiles(aliceID)
		return len(p) == 1 && p[0].ProviderType() == ExternalIdentityProviderTypeSteam && p[0].ProviderIssuedUserId() == "steam-alice"
	}
	await(t, "bob sees alice's new game profile", func() bool { return hasSteam(bob) })
	await(t, "alice's session sees her new game profile", func() bool { return hasSteam(alice) })
	u := bob.GetLobbyHandle(lobby).GetLobbyMemberHandle(aliceID).User()
	require.NotNil(t, u, "the member's user does not carry the new profile")
	require.Len(t, u.UserApplicationProfiles(), 1, "the member's user does not carry the new profile")

	// The game's backend unmerges it (rule ST-2): it goes back to a provisional account.
	body, _ := json.Marshal(map[string]any{"client_id": env.App.ID.String(), "client_secret": env.App.ClientSecret,
		"external_auth_type": extauth.SteamSessionTicket, "external_auth_token": steam})
	resp, err := http.Post(env.APIURL+"/partner-sdk/provisional-accounts/unmerge", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "unmerge: HTTP %d", resp.StatusCode)
	await(t, "bob sees alice without the profile", func() bool { return len(bob.GetUserApplicationProfiles(aliceID)) == 0 })
}

// A provisional player's new display name reaches a friend at once: the friend's user handle
// and the player's game profile (whose username it is) read it without reconnecting.
func TestRenameReachesFriends(t *testing.T) {
	env := servertest.Start(t)
	alice, bob := connected(t, env, "rename-alice"), connected(t, env, "rename-bob")
	aliceID := alice.GetCurrentUserV2().Id()
	befriend(t, alice, bob)
	var res *ClientResult
	alice.UpdateProvisionalAccountDisplayName("Captain", Func(func(r *ClientResult) { res = r }))
	await(t, "UpdateProvisionalAccountDisplayName", func() bool { return res != nil })
	mustSucceed(t, "UpdateProvisionalAccountDisplayName", res)
	await(t, "bob sees the new name", func() bool {
		u, p := bob.GetUser(aliceID), bob.GetUserApplicationProfiles(aliceID)
		return u != nil && u.DisplayName() == "Captain" && len(p) == 1 && p[0].Username() == "Captain"
	})
}
