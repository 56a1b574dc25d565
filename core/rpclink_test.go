package core

import (
	"os"
	"strings"
	"testing"
	"time"

	"sdkpp/core/rpc"
	"sdkpp/core/rpc/peer"
)

// waitFor runs callbacks until cond holds or the test times out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		RunCallbacks()
		time.Sleep(5 * time.Millisecond)
	}
}

// rule RPC-2: AUTHORIZE_REQUEST reaches the registered callback, and still does after the
// desktop client restarts, with no new registration.
func TestAuthorizeRequestAcrossReconnect(t *testing.T) {
	dir, err := os.MkdirTemp("", "ipc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	startPeer := func() *peer.Peer {
		p, err := peer.Listen(peer.Config{Dir: dir, Index: 0})
		if err != nil {
			t.Fatal(err)
		}
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
	if released != 1 {
		t.Fatalf("released %d times", released)
	}
	waitFor(t, "the unsubscription", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 0 })
	// Unsubscribed, the client is sent nothing more: what has been sent has run.
	if n := p.AuthorizeRequest(); n != 0 {
		t.Fatalf("AUTHORIZE_REQUEST reached %d subscribers after the removal", n)
	}
	RunCallbacks()
	if calls != 2 {
		t.Fatalf("a removed callback ran: %d calls", calls)
	}
}

// A registration replaces the previous one, whose callback is released; Close releases the last.
func TestAuthorizeRequestReplaceAndClose(t *testing.T) {
	dir, err := os.MkdirTemp("", "ipc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	t.Setenv("XDG_RUNTIME_DIR", dir) // no desktop client listening: registrations wait for one
	c := NewClient()
	released := 0
	logs := captureLogs(c, LoggingSeverityError)
	c.RegisterAuthorizeRequestCallback(Callback[ClientAuthorizeRequestCallback]{Fn: func() {}, Release: func() { released++ }})
	if l := logs(); released != 1 || len(l) != 1 || !strings.Contains(l[0], "SetApplicationId") {
		t.Fatalf("without an application id: released=%d logs=%q", released, l)
	}
	released = 0
	c.SetApplicationId(7)
	for i := 0; i < 3; i++ {
		c.RegisterAuthorizeRequestCallback(Callback[ClientAuthorizeRequestCallback]{Fn: func() {}, Release: func() { released++ }})
	}
	if released != 2 {
		t.Fatalf("released %d after replacing twice", released)
	}
	c.Close()
	if released != 3 {
		t.Fatalf("released %d after Close", released)
	}
}

// A join from the desktop client (ACTIVITY_JOIN) reaches both join handlers with the secret and
// the party's application: the game's own, or the sibling application the event names.
func TestActivityJoinFromTheDesktopClient(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	p, err := peer.Listen(peer.Config{Dir: dir, Index: 0})
	if err != nil {
		t.Fatal(err)
	}
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
	if secrets[0] != "party-secret-1" || secrets[1] != "party-secret-2" || apps[0] != 42 || apps[1] != 77 {
		t.Fatalf("secrets %v, applications %v", secrets, apps)
	}
}
