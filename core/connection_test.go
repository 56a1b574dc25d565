package core

import (
	"slices"
	"testing"

	"sdkpp/server/servertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.Nil(t, c.GetCurrentUserV2(), "a current user before Ready")
	tok := botProvisionalToken(t, env, "conn-player")
	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, tok, resultCallback(&up))
	c.Connect()
	await(t, "Ready", func() bool {
		return c.GetStatus() == ClientStatusReady && len(changes) > 0 && changes[len(changes)-1].s == ClientStatusReady
	})
	want := []ClientStatus{ClientStatusConnecting, ClientStatusConnected, ClientStatusReady}
	for i, w := range want {
		require.Less(t, i, len(changes), "status changes %v, want %v", changes, want)
		require.Equal(t, w, changes[i].s, "status changes %v, want %v", changes, want)
		require.Equal(t, ClientErrorNone, changes[i].e, "status changes %v, want %v", changes, want)
	}
	me := c.GetCurrentUserV2()
	require.NotNil(t, me, "current user %+v (%q)", me, me.DisplayName())
	require.NotZero(t, me.Id(), "current user %+v (%q)", me, me.DisplayName())
	require.True(t, me.IsProvisional(), "current user %+v (%q)", me, me.DisplayName())
	require.Equal(t, "Guest conn-player", me.DisplayName(), "current user %+v (%q)", me, me.DisplayName())
	got := c.GetUser(me.Id())
	require.NotNil(t, got, "GetUser of the current user")
	require.Equal(t, me.Username(), got.Username(), "GetUser of the current user")
	require.Nil(t, c.GetUser(12345), "GetUser of an unknown user")
	c.Disconnect()
	await(t, "Disconnected", func() bool { return c.GetStatus() == ClientStatusDisconnected })
	RunCallbacks()
	last := changes[len(changes)-1]
	require.Equal(t, ClientStatusDisconnected, last.s, "last change %+v", last)
	// The handle is a live view: once the Client is gone it reads defaults.
	c.Close()
	assert.Zero(t, me.Id(), "a handle of a closed Client still reads values")
	assert.Equal(t, "", me.Username(), "a handle of a closed Client still reads values")
}

func TestConnectWithoutTokenOrWithABadOne(t *testing.T) {
	env := servertest.Start(t)
	c := newSDKClient(t, env, nil)
	var changes []statusChange
	c.SetStatusChangedCallback(Func(func(s ClientStatus, e ClientError, d int32) { changes = append(changes, statusChange{s, e, d}) }))
	c.Connect()
	await(t, "the refusal", func() bool { return len(changes) == 1 })
	require.Equal(t, ClientStatusDisconnected, changes[0].s, "no token: %+v", changes)
	require.Equal(t, ClientErrorConnectionFailed, changes[0].e, "no token: %+v", changes)

	var up *ClientResult
	c.UpdateToken(AuthorizationTokenTypeBearer, "no-such-token-123", resultCallback(&up))
	c.Connect()
	await(t, "the final close", func() bool {
		n := len(changes)
		return n > 1 && changes[n-1].s == ClientStatusDisconnected
	})
	last := changes[len(changes)-1]
	require.Equal(t, ClientErrorConnectionFailed, last.e, "bad token: %+v", changes)
	require.EqualValues(t, 4004, last.detail, "bad token: %+v", changes)

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
	require.True(t, rev.Successful(), rev.ToString())
	last := changes[len(changes)-1]
	assert.Equal(t, ClientErrorConnectionFailed, last.e, "changes %+v", changes)
	assert.EqualValues(t, 4004, last.detail, "changes %+v", changes)
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
	require.NotContains(t, seen, ClientStatusDisconnected, "statuses %v", seen)
	var joined *ClientResult
	c.CreateOrJoinLobby("renewed", Func(func(r *ClientResult, _ uint64) { joined = r }))
	await(t, "a request with the new token", func() bool { return joined != nil })
	assert.True(t, joined.Successful(), joined.ToString())
}
