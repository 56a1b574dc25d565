package core

import (
	"os"
	"sdkpp/core/internal/testwait"
	"testing"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/rpc"
	"sdkpp/core/rpc/peer"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor runs callbacks until cond holds or the test times out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, what, func() bool {
		if cond() {
			return true
		}
		RunCallbacks()
		return false
	})
}

// rule RPC-2: AUTHORIZE_REQUEST reaches the registered callback, and still does after the
// desktop client restarts, with no new registration.
func TestAuthorizeRequestAcrossReconnect(t *testing.T) {
	dir, err := os.MkdirTemp("", "ipc")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	startPeer := func() *peer.Peer {
		p, err := peer.Listen(peer.Config{Dir: dir, Index: 0})
		require.NoError(t, err)
		return p
	}
	p := startPeer()
	c := NewClient()
	defer c.Close()
	c.SetApplicationId(42)
	calls, released := 0, 0
	c.RegisterAuthorizeRequestCallback(Callback[ClientAuthorizeRequestCallback]{Fn: func() { calls++ }, Release: func() { released++ }})
	waitFor(t, "the subscription", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
	p.AuthorizeRequest()
	waitFor(t, "the first AUTHORIZE_REQUEST", func() bool { return calls == 1 })

	p.Close() // the desktop client restarts
	p = startPeer()
	defer func() { p.Close() }()
	waitFor(t, "the subscription after the restart", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
	p.AuthorizeRequest()
	waitFor(t, "AUTHORIZE_REQUEST after the restart", func() bool { return calls == 2 })

	c.RemoveAuthorizeRequestCallback()
	require.EqualValues(t, 1, released, "released %d times", released)
	waitFor(t, "the unsubscription", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 0 })
	// Unsubscribed, the client is sent nothing more: what has been sent has run.
	n := p.AuthorizeRequest()
	require.Zero(t, n, "AUTHORIZE_REQUEST reached %d subscribers after the removal", n)
	RunCallbacks()
	assert.EqualValues(t, 2, calls, "a removed callback ran: %d calls", calls)
}

// A registration replaces the previous one, whose callback is released; Close releases the last.
func TestAuthorizeRequestReplaceAndClose(t *testing.T) {
	dir, err := os.MkdirTemp("", "ipc")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	t.Setenv("XDG_RUNTIME_DIR", dir) // no desktop client listening: registrations wait for one
	c := NewClient()
	released := 0
	logs := captureLogs(c, LoggingSeverityError)
	c.RegisterAuthorizeRequestCallback(Callback[ClientAuthorizeRequestCallback]{Fn: func() {}, Release: func() { released++ }})
	l := logs()
	require.EqualValues(t, 1, released, "without an application id: released=%d logs=%q", released, l)
	require.Len(t, l, 1, "without an application id: released=%d logs=%q", released, l)
	require.Contains(t, l[0], "SetApplicationId", "without an application id: released=%d logs=%q", released, l)
	released = 0
	c.SetApplicationId(7)
	for i := 0; i < 3; i++ {
		c.RegisterAuthorizeRequestCallback(Callback[ClientAuthorizeRequestCallback]{Fn: func() {}, Release: func() { released++ }})
	}
	require.EqualValues(t, 2, released, "released %d after replacing twice", released)
	c.Close()
	assert.EqualValues(t, 3, released, "released %d after Close", released)
}

// A join from the desktop client (ACTIVITY_JOIN) reaches both join handlers with the secret and
// the party's application: the game's own, or the sibling application the event names.
func TestActivityJoinFromTheDesktopClient(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	p, err := peer.Listen(peer.Config{Dir: dir, Index: 0})
	require.NoError(t, err)
	defer p.Close()
	c := NewClient()
	defer c.Close()
	c.SetApplicationId(42)
	var secrets []string
	var apps []uint64
	c.SetActivityJoinCallback(Func(func(secret string) { secrets = append(secrets, secret) }))
	c.SetActivityJoinWithApplicationCallback(Func(func(app uint64, secret string) { apps = append(apps, app) }))
	waitFor(t, "one subscription for both handlers", func() bool { return p.Subscribers(rpc.EvtActivityJoin) == 1 })
	p.ActivityJoin("party-secret-1", 0)
	p.ActivityJoin("party-secret-2", 77) // a sibling application's party
	waitFor(t, "both joins", func() bool { return len(secrets) == 2 && len(apps) == 2 })
	assert.Equal(t, "party-secret-1", secrets[0], "secrets %v, applications %v", secrets, apps)
	assert.Equal(t, "party-secret-2", secrets[1], "secrets %v, applications %v", secrets, apps)
	assert.EqualValues(t, 42, apps[0], "secrets %v, applications %v", secrets, apps)
	assert.EqualValues(t, 77, apps[1], "secrets %v, applications %v", secrets, apps)
}

// A subscription asked for after Close makes no desktop-client connection (which nothing would
// close) and releases its callback.
func TestDesktopLinkNotMadeAfterClose(t *testing.T) {
	c := NewClient()
	c.SetApplicationId(1)
	c.Close()
	released := false
	c.RegisterAuthorizeRequestCallback(Callback[ClientAuthorizeRequestCallback]{Fn: func() {}, Release: func() { released = true }})
	waitFor(t, "the release", func() bool { return released })
	_, err := c.rpc.Client()
	assert.ErrorIs(t, err, sdkerr.ErrClosed, "a connection was made after Close")
}
