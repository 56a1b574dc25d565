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
