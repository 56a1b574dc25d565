package core

import (
	"slices"
	"testing"

	"sdkpp/server/servertest"
)

type statusChange struct {
	s      ClientStatus
	e      ClientError
	detail int32
}

func TestConnectReadyCurrentUserDisconnect(t *testing.T) {
	env := servertest.Start(t)
	c := newSDKClient(t, env, nil)
	var changes []statusChange
	c.SetStatusChangedCallback(Func(func(s ClientStatus, e ClientError, d int32) { changes = append(changes, statusChange{s, e, d}) }))
	if c.GetCurrentUserV2() != nil {
		t.Fatal("a current user before Ready")
	}
	tok := botProvisionalToken(t, env, "conn-player")
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, tok, resultCallback(&up))
	c.Connect()
	await(t, "Ready", func() bool {
		return c.GetStatus() == ClientStatusReady && len(changes) > 0 && changes[len(changes)-1].s == ClientStatusReady
	})
	want := []ClientStatus{ClientStatusConnecting, ClientStatusConnected, ClientStatusReady}
	for i, w := range want {
		if i >= len(changes) || changes[i].s != w || changes[i].e != ClientErrorNone {
			t.Fatalf("status changes %v, want %v", changes, want)
		}
	}
	me := c.GetCurrentUserV2()
	if me == nil || me.Id() == 0 || !me.IsProvisional() || me.DisplayName() != "Guest conn-player" {
		t.Fatalf("current user %+v (%q)", me, me.DisplayName())
	}
	if got := c.GetUser(me.Id()); got == nil || got.Username() != me.Username() {
		t.Fatal("GetUser of the current user")
	}
	if c.GetUser(12345) != nil {
		t.Fatal("GetUser of an unknown user")
	}
	c.Disconnect()
	await(t, "Disconnected", func() bool { return c.GetStatus() == ClientStatusDisconnected })
	RunCallbacks()
	if last := changes[len(changes)-1]; last.s != ClientStatusDisconnected {
		t.Fatalf("last change %+v", last)
	}
	// The handle is a live view: once the Client is gone it reads defaults.
	c.Close()
	if me.Id() != 0 || me.Username() != "" {
		t.Fatal("a handle of a closed Client still reads values")
	}
}

func TestConnectWithoutTokenOrWithABadOne(t *testing.T) {
	env := servertest.Start(t)
	c := newSDKClient(t, env, nil)
	var changes []statusChange
	c.SetStatusChangedCallback(Func(func(s ClientStatus, e ClientError, d int32) { changes = append(changes, statusChange{s, e, d}) }))
	c.Connect()
	await(t, "the refusal", func() bool { return len(changes) == 1 })
	if changes[0].s != ClientStatusDisconnected || changes[0].e != ClientErrorConnectionFailed {
		t.Fatalf("no token: %+v", changes)
	}

	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, "no-such-token-123", resultCallback(&up))
	c.Connect()
	await(t, "the final close", func() bool {
		n := len(changes)
		return n > 1 && changes[n-1].s == ClientStatusDisconnected
	})
	if last := changes[len(changes)-1]; last.e != ClientErrorConnectionFailed || last.detail != 4004 {
		t.Fatalf("bad token: %+v", changes)
	}

	// A good token afterwards connects.
	c.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, "retry-player"), resultCallback(&up))
	c.Connect()
	await(t, "Ready after the retry", func() bool { return c.GetStatus() == ClientStatusReady })
}

// rule AU-7: revoking the token ends the player's live connection at once, and the SDK does not
// reconnect with the dead token.
func TestRevocationEndsTheConnection(t *testing.T) {
	env := servertest.Start(t)
	c := newSDKClient(t, env, nil)
	var changes []statusChange
	c.SetStatusChangedCallback(Func(func(s ClientStatus, e ClientError, d int32) { changes = append(changes, statusChange{s, e, d}) }))
	tok := botProvisionalToken(t, env, "revoked-player")
	var up, rev *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, tok, resultCallback(&up))
	c.Connect()
	await(t, "Ready", func() bool { return c.GetStatus() == ClientStatusReady })
	c.RevokeToken(uint64(env.App.ID), tok, resultCallback(&rev))
	await(t, "the connection to end", func() bool {
		n := len(changes)
		return rev != nil && n > 0 && changes[n-1].s == ClientStatusDisconnected
	})
	if !rev.Successful() {
		t.Fatal(rev.ToString())
	}
	if last := changes[len(changes)-1]; last.e != ClientErrorConnectionFailed || last.detail != 4004 {
		t.Fatalf("changes %+v", changes)
	}
}

// UpdateToken with a new token while connected renews the connection with it: the status passes
// through Reconnecting back to Ready, never Disconnected, and the session still works.
func TestUpdateTokenRenewsTheConnection(t *testing.T) {
	env := servertest.Start(t)
	c := connected(t, env, "renew-me")
	var seen []ClientStatus
	c.SetStatusChangedCallback(Func(func(s ClientStatus, _ ClientError, _ int32) { seen = append(seen, s) }))
	var res *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, botProvisionalToken(t, env, "renew-me"), resultCallback(&res))
	await(t, "the renewal", func() bool {
		return res != nil && slices.Contains(seen, ClientStatusReconnecting) && c.GetStatus() == ClientStatusReady
	})
	if slices.Contains(seen, ClientStatusDisconnected) {
		t.Fatalf("statuses %v", seen)
	}
	var joined *ClientResult
	c.CreateOrJoinLobby("renewed", Func(func(r *ClientResult, _ uint64) { joined = r }))
	await(t, "a request with the new token", func() bool { return joined != nil })
	if !joined.Successful() {
		t.Fatal(joined.ToString())
	}
}
