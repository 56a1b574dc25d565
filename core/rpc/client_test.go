package rpc_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sdkpp/core/internal/testwait"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sdkpp/core/rpc"
	"sdkpp/core/rpc/peer"
	"sdkpp/internal/clock"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const appID = 1234567890123

var testGuild = rpc.Guild{ID: "555", Name: "Guild Five", IconURL: "http://127.0.0.1/icon.png"}

// socketDir returns a directory short enough for unix socket paths (about 108 bytes).
func socketDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		// Named pipes have no directory. (And under Wine 8, Go 1.26's os.RemoveAll cannot
		// delete what t.TempDir holds: "unlinkat ...: Invalid function".)
		return ""
	}
	d := t.TempDir()
	if len(rpc.Path(d, "", 9)) < 100 {
		return d
	}
	d, err := os.MkdirTemp("", "ipc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func startPeer(t *testing.T, dir string) *peer.Peer {
	t.Helper()
	p, err := peer.Listen(peer.Config{Dir: dir, Guilds: []rpc.Guild{testGuild}, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// events records what a Client's handlers saw.
type events struct {
	mu          sync.Mutex
	ready       int
	disconnects []error
	errs        []*rpc.Error
	changed     chan struct{}
}

func (e *events) note(f func()) {
	e.mu.Lock()
	f()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// wait returns once cond, checked under the lock, holds.
func (e *events) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		e.mu.Lock()
		ok, ch := cond(), e.changed
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			require.FailNow(t, "timed out waiting for "+what)
		}
	}
}

func newClient(t *testing.T, dir string, edit ...func(*rpc.Config)) (*rpc.Client, *events) {
	t.Helper()
	ev := &events{changed: make(chan struct{})}
	cfg := rpc.Config{
		ApplicationID: appID,
		Dir:           dir,
		Backoff:       rpc.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond, Jitter: 0.5},
		OnReady:       func(rpc.Ready) { ev.note(func() { ev.ready++ }) },
		OnDisconnect:  func(err error) { ev.note(func() { ev.disconnects = append(ev.disconnects, err) }) },
		OnError:       func(e *rpc.Error) { ev.note(func() { ev.errs = append(ev.errs, e) }) },
		Logf:          t.Logf,
	}
	for _, f := range edit {
		f(&cfg)
	}
	c, err := rpc.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, ev
}

// connected starts a peer and a client connected to it.
func connected(t *testing.T) (*peer.Peer, *rpc.Client, *events) {
	t.Helper()
	dir := socketDir(t)
	p := startPeer(t, dir)
	c, ev := newClient(t, dir)
	waitReady(t, c)
	return p, c, ev
}

func waitReady(t *testing.T, c *rpc.Client) rpc.Ready {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.WaitReady(ctx)
	require.NoError(t, err, "WaitReady")
	return r
}

func waitPeer(t *testing.T, p *peer.Peer, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, p.Wait(ctx, cond), "waiting for %s", what)
}

func ctx5s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// counter is a handler that counts its calls.
type counter struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func newCounter() *counter { return &counter{ch: make(chan struct{}, 100)} }

func (c *counter) fn() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.ch <- struct{}{}
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *counter) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.ch:
	case <-time.After(5 * time.Second):
		require.FailNow(t, "timed out waiting for "+what)
	}
}

// checkNoGoroutines fails if a goroutine of package rpc or peer is still running.
func checkNoGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		var left []string
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "sdkpp/core/rpc.") || strings.Contains(g, "sdkpp/core/rpc/peer.") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return
		}
		require.False(t, time.Now().After(deadline), "%d goroutines left:\n%s", len(left), strings.Join(left, "\n\n"))
		time.Sleep(10 * time.Millisecond)
	}
}

// Rule RPC-1: the handshake is answered with READY, which carries the desktop client's user.
func TestRPC1HandshakeReady(t *testing.T) {
	dir := socketDir(t)
	p := startPeer(t, dir)
	c, ev := newClient(t, dir)
	r := waitReady(t, c)
	require.EqualValues(t, 1, r.V, "READY = %+v", r)
	require.Equal(t, peer.DefaultUser, r.User, "READY = %+v", r)
	require.Equal(t, rpc.Connected, c.State(), "State = %v", c.State())
	ev.wait(t, "OnReady", func() bool { return ev.ready == 1 })
	assert.EqualValues(t, 1, p.Connections(), "peer sees %d connections", p.Connections())
}

func TestDialWaitsForTheDesktopClient(t *testing.T) {
	dir := socketDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := rpc.Dial(ctx, rpc.Config{ApplicationID: appID, Dir: dir})
	require.ErrorIs(t, err, context.DeadlineExceeded, "Dial without a peer: %v", err)
	// The desktop client starts after the game: the client's first attempt fails and it backs off.
	backingOff := make(chan struct{}, 1)
	c, _ := newClient(t, dir, func(cfg *rpc.Config) {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			select {
			case backingOff <- struct{}{}:
			default:
			}
			return clock.Sleep(ctx, clock.Real{}, d)
		}
	})
	<-backingOff
	require.NotEqual(t, rpc.Connected, c.State(), "connected to nothing")
	startPeer(t, dir)
	waitReady(t, c)
	_, err = rpc.New(rpc.Config{})
	assert.Error(t, err, "New accepted a Config without ApplicationID")
}

// The client takes the first index that answers, here 3.
func TestConnectsToAnyIndex(t *testing.T) {
	dir := socketDir(t)
	p, err := peer.Listen(peer.Config{Dir: dir, Index: 3})
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, rpc.DefaultPrefix+"3", filepath.Base(p.Path()), "peer path %q", p.Path())
	c, _ := newClient(t, dir)
	waitReady(t, c)
}

// Replies reach the command with the same nonce, even out of order.
func TestCommandRoundTripMatchesNonces(t *testing.T) {
	p, c, _ := connected(t)
	held := make(chan *rpc.Message, 2)
	p.Handle("HOLD", func(m *rpc.Message) (any, error) {
		held <- m
		return nil, peer.ErrNoReply
	})

	g, err := c.GetGuild(ctx5s(t), testGuild.ID)
	require.NoError(t, err, "GetGuild = %+v,", g)
	require.Equal(t, testGuild, g, "GetGuild = %+v, %v", g, err)

	type result struct {
		data string
		err  error
	}
	results := map[string]chan result{"a": make(chan result, 1), "b": make(chan result, 1)}
	nonces := map[string]string{}
	for _, name := range []string{"a", "b"} {
		go func() {
			data, err := c.Command(ctx5s(t), "HOLD", map[string]string{"name": name})
			results[name] <- result{string(data), err}
		}()
		m := <-held
		require.Len(t, m.Nonce, 36, "command %s arrived as %+v", name, m)
		require.Contains(t, string(m.Args), name, "command %s arrived as %+v", name, m)
		nonces[name] = m.Nonce
	}
	// Answer b first, then a.
	for _, name := range []string{"b", "a"} {
		b, _ := json.Marshal(rpc.Message{Cmd: "HOLD", Data: json.RawMessage(`"reply-` + name + `"`), Nonce: nonces[name]})
		p.WriteRaw(rpc.AppendFrame(nil, rpc.OpFrame, b))
		r := <-results[name]
		require.NoError(t, r.err, "command %s got %q,", name, r.data)
		require.Equal(t, `"reply-`+name+`"`, r.data, "command %s got %q, %v", name, r.data, r.err)
	}
}

// Rule RPC-1: ERROR, as a failed command's reply (a typed *rpc.Error) and as an event.
func TestRPC1ErrorReplyIsTypedError(t *testing.T) {
	p, c, ev := connected(t)

	p.Handle("FAIL", func(*rpc.Message) (any, error) { return nil, errors.New("it broke") })
	var unsub func()
	for _, tc := range []struct {
		name string
		call func() error
		code int
		cmd  string // "" when not checked
		msg  string // "" when not checked
	}{
		{"unknown command", func() error { _, err := c.Command(ctx5s(t), "NO_SUCH_COMMAND", nil); return err },
			rpc.CodeInvalidCommand, "NO_SUCH_COMMAND", ""},
		{"unknown guild", func() error { _, err := c.GetGuild(ctx5s(t), "404"); return err },
			rpc.CodeInvalidGuild, rpc.CmdGetGuild, ""},
		{"refused subscription", func() error {
			var err error
			unsub, err = c.Subscribe(ctx5s(t), "NO_SUCH_EVENT", nil, func(json.RawMessage) {})
			return err
		}, rpc.CodeInvalidEvent, "", ""},
		{"failing handler", func() error { _, err := c.Command(ctx5s(t), "FAIL", nil); return err },
			rpc.CodeUnknownError, "", "it broke"},
	} {
		var e *rpc.Error
		require.ErrorAs(t, tc.call(), &e, tc.name)
		require.Equal(t, tc.code, e.Code, tc.name)
		if tc.cmd != "" {
			require.Equal(t, tc.cmd, e.Cmd, tc.name)
		}
		if tc.msg != "" {
			require.Equal(t, tc.msg, e.Message, tc.name)
		}
	}
	require.Nil(t, unsub, "a refused subscription returned an unsubscribe function")

	n := p.SendError(4321, "something went wrong")
	require.EqualValues(t, 1, n, "ERROR event reached %d", n)
	ev.wait(t, "the ERROR event", func() bool { return len(ev.errs) == 1 })
	got := ev.errs[0]
	assert.EqualValues(t, 4321, got.Code, "OnError got %+v", got)
	assert.Equal(t, "something went wrong", got.Message, "OnError got %+v", got)
	assert.Equal(t, rpc.CmdDispatch, got.Cmd, "OnError got %+v", got)
	assert.Equal(t, rpc.Connected, c.State(), "an ERROR event dropped the connection")
}

// Rule RPC-1: GUILD_STATUS is a subscribable event delivered to its subscribers.
func TestRPC1GuildStatusSubscription(t *testing.T) {
	p, c, _ := connected(t)
	other := rpc.Guild{ID: "777", Name: "Other"}
	p.SetGuild(other)

	got := make(chan rpc.GuildStatus, 10)
	unsub, err := c.SubscribeGuildStatus(ctx5s(t), testGuild.ID, func(st rpc.GuildStatus) { got <- st })
	require.NoError(t, err)
	defer unsub()
	n, err := p.GuildStatus(other.ID, 1)
	require.Zero(t, n, "an unsubscribed guild's status reached %d (%v)", n, err)
	require.NoError(t, err, "an unsubscribed guild's status reached %d (%v)", n, err)
	n, err = p.GuildStatus(testGuild.ID, 42)
	require.EqualValues(t, 1, n, "GUILD_STATUS reached %d (%v)", n, err)
	require.NoError(t, err, "GUILD_STATUS reached %d (%v)", n, err)
	select {
	case st := <-got:
		require.Equal(t, testGuild, st.Guild, "GUILD_STATUS = %+v", st)
		require.EqualValues(t, 42, st.Online, "GUILD_STATUS = %+v", st)
	case <-time.After(5 * time.Second):
		require.FailNow(t, "no GUILD_STATUS")
	}
	_, err = c.SubscribeGuildStatus(ctx5s(t), "404", func(rpc.GuildStatus) {})
	assert.Error(t, err, "subscribed to an unknown guild")
}

// Rule RPC-2: AUTHORIZE_REQUEST reaches its subscriber, and the same subscription still receives
// it after the desktop client is stopped and started again on the same socket, with no
// re-registration: the client reconnects and re-subscribes by itself.
func TestRPC2AuthorizeRequestSurvivesPeerRestart(t *testing.T) {
	dir := socketDir(t)
	p1, err := peer.Listen(peer.Config{Dir: dir})
	require.NoError(t, err)
	c, ev := newClient(t, dir)
	waitReady(t, c)
	hits := newCounter()
	unsub, err := c.SubscribeAuthorizeRequest(ctx5s(t), hits.fn)
	require.NoError(t, err)
	defer unsub()
	n := p1.AuthorizeRequest()
	require.EqualValues(t, 1, n, "AUTHORIZE_REQUEST reached %d", n)
	hits.wait(t, "the first AUTHORIZE_REQUEST")

	// The desktop client quits...
	p1.Close()
	ev.wait(t, "the disconnect", func() bool { return len(ev.disconnects) == 1 })
	// ...and starts again on the same path.
	p2, err := peer.Listen(peer.Config{Dir: dir})
	require.NoError(t, err)
	defer p2.Close()
	require.Equal(t, p1.Path(), p2.Path(), "restarted on %q, was %q", p2.Path(), p1.Path())
	waitPeer(t, p2, "the re-subscription", func() bool { return p2.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
	waitReady(t, c)
	ev.wait(t, "the second READY", func() bool { return ev.ready == 2 })
	n = p2.AuthorizeRequest()
	require.EqualValues(t, 1, n, "AUTHORIZE_REQUEST after the restart reached %d", n)
	hits.wait(t, "AUTHORIZE_REQUEST after the restart")
	require.EqualValues(t, 2, hits.count(), "handler ran %d times", hits.count())

	// A dropped connection (the peer stays up) is survived the same way.
	p2.Kick()
	ev.wait(t, "the second disconnect", func() bool { return len(ev.disconnects) == 2 })
	waitPeer(t, p2, "the re-subscription", func() bool { return p2.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
	p2.AuthorizeRequest()
	hits.wait(t, "AUTHORIZE_REQUEST after the kick")
}

func TestUnsubscribeStopsDelivery(t *testing.T) {
	p, c, _ := connected(t)

	first, second := newCounter(), newCounter()
	unsub1, err := c.SubscribeAuthorizeRequest(ctx5s(t), first.fn)
	require.NoError(t, err)
	unsub2, err := c.SubscribeAuthorizeRequest(ctx5s(t), second.fn)
	require.NoError(t, err)
	// Two local subscribers share one subscription on the wire.
	unsub1()
	unsub1()
	p.AuthorizeRequest()
	second.wait(t, "the remaining subscriber")
	require.Zero(t, first.count(), "an unsubscribed handler ran")
	// The last one sends UNSUBSCRIBE.
	unsub2()
	waitPeer(t, p, "UNSUBSCRIBE", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 0 })
	n := p.AuthorizeRequest()
	require.Zero(t, n, "AUTHORIZE_REQUEST reached %d after UNSUBSCRIBE", n)
	// An unsubscribed subscription is not re-sent after a reconnect.
	p.Kick()
	waitPeer(t, p, "the reconnect", func() bool { return p.Connections() == 1 })
	waitReady(t, c)
	assert.Zero(t, p.Subscribers(rpc.EvtAuthorizeRequest), "an unsubscribed subscription came back")
	assert.Zero(t, first.count(), "handlers ran %d and %d times", first.count(), second.count())
	assert.EqualValues(t, 1, second.count(), "handlers ran %d and %d times", first.count(), second.count())
}

// A subscription made while disconnected is sent once connected.
func TestSubscribeWhileDisconnected(t *testing.T) {
	dir := socketDir(t)
	c, _ := newClient(t, dir)
	hits := newCounter()
	_, err := c.SubscribeAuthorizeRequest(ctx5s(t), hits.fn)
	require.NoError(t, err)
	p := startPeer(t, dir)
	waitPeer(t, p, "the subscription", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
	p.AuthorizeRequest()
	hits.wait(t, "AUTHORIZE_REQUEST")
}

// holdingPeer starts a peer that leaves the command HOLD unanswered, and a client connected to
// it; arrived receives a value for each HOLD the peer gets.
func holdingPeer(t *testing.T) (p *peer.Peer, c *rpc.Client, arrived chan struct{}) {
	p, c, _ = connected(t)
	arrived = make(chan struct{}, 10)
	p.Handle("HOLD", func(*rpc.Message) (any, error) {
		arrived <- struct{}{}
		return nil, peer.ErrNoReply
	})
	return p, c, arrived
}

// hold sends HOLD from another goroutine once the peer has it; the channel gets its error.
func hold(c *rpc.Client, arrived chan struct{}) chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Command(context.Background(), "HOLD", nil)
		errc <- err
	}()
	<-arrived
	return errc
}

func TestCommandsFailPromptly(t *testing.T) {
	p, c, arrived := holdingPeer(t)

	// The connection drops while a command waits for its reply.
	errc := hold(c, arrived)
	p.Kick()
	select {
	case err := <-errc:
		require.ErrorIs(t, err, rpc.ErrDisconnected, "in flight at a disconnect: %v", err)
		require.NotErrorIs(t, err, rpc.ErrClosed, "in flight at a disconnect: %v", err)
	case <-time.After(testwait.Timeout): // a hang: it fails at once
		require.FailNow(t, "a command in flight hung after the disconnect")
	}

	// The context ends first.
	waitReady(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Command(ctx, "HOLD", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "past its deadline: %v", err)
	<-arrived

	// Without a peer, commands fail at once.
	p.Close()
	testwait.Until(t, "the disconnect", func() bool { return c.State() != rpc.Connected })
	_, err = c.Command(context.Background(), "HOLD", nil)
	assert.ErrorIs(t, err, rpc.ErrNotConnected, "while disconnected: %v", err)
}

func TestCloseFailsCommandsInFlight(t *testing.T) {
	_, c, arrived := holdingPeer(t)
	errc := hold(c, arrived)
	c.Close()
	err := <-errc
	require.ErrorIs(t, err, rpc.ErrClosed, "in flight at Close: %v", err)
	_, err = c.Command(context.Background(), "HOLD", nil)
	require.ErrorIs(t, err, rpc.ErrClosed, "after Close: %v", err)
	_, err = c.Subscribe(context.Background(), rpc.EvtAuthorizeRequest, nil, func(json.RawMessage) {})
	assert.ErrorIs(t, err, rpc.ErrClosed, "Subscribe after Close: %v", err)
	assert.Equal(t, rpc.Closed, c.State(), "State = %v", c.State())
}

// Malformed JSON, an oversize frame, an unknown opcode and a HANDSHAKE from the peer each drop
// the connection (logged), and the client reconnects with its subscriptions.
func TestBadFramesAreSurvived(t *testing.T) {
	p, c, ev := connected(t)
	hits := newCounter()
	_, err := c.SubscribeAuthorizeRequest(ctx5s(t), hits.fn)
	require.NoError(t, err)
	oversize := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(rpc.OpFrame)), rpc.MaxPayload+1)
	bad := map[string][]byte{
		"malformed JSON":  rpc.AppendFrame(nil, rpc.OpFrame, []byte(`{"cmd":"DISPATCH","evt":`)),
		"no cmd":          rpc.AppendFrame(nil, rpc.OpFrame, []byte(`{"evt":"READY"}`)),
		"malformed READY": rpc.AppendFrame(nil, rpc.OpFrame, []byte(`{"cmd":"DISPATCH","evt":"READY","data":[1]}`)),
		"oversize frame":  append(oversize, make([]byte, 100)...),
		"unknown opcode":  rpc.AppendFrame(nil, 77, []byte(`{}`)),
		"peer HANDSHAKE":  rpc.AppendFrame(nil, rpc.OpHandshake, []byte(`{"v":1}`)),
	}
	drops := 0
	ev.wait(t, "the first READY", func() bool { return ev.ready == 1 })
	for name, b := range bad {
		p.WriteRaw(b)
		drops++
		ev.wait(t, "the drop after "+name, func() bool { return len(ev.disconnects) == drops })
		// OnReady runs once the subscriptions are re-sent and answered.
		ev.wait(t, "the reconnect after "+name, func() bool { return ev.ready == drops+1 })
		p.AuthorizeRequest()
		hits.wait(t, "AUTHORIZE_REQUEST after "+name)
	}
	// A READY after the handshake is ignored; a reply nobody waits for is dropped.
	p.WriteRaw(rpc.AppendFrame(nil, rpc.OpFrame, []byte(`{"cmd":"DISPATCH","evt":"READY","data":{"v":1}}`)))
	p.WriteRaw(rpc.AppendFrame(nil, rpc.OpFrame, []byte(`{"cmd":"GET_GUILD","data":{},"nonce":"nobody"}`)))
	p.AuthorizeRequest()
	hits.wait(t, "AUTHORIZE_REQUEST after harmless frames")
	assert.Len(t, ev.disconnects, drops, "a harmless frame dropped the connection")
}

func TestPingAndClose(t *testing.T) {
	p, c, ev := connected(t)
	p.Ping("are you there")
	waitPeer(t, p, "PONG", func() bool { return p.Pongs() == 1 })

	p.CloseAll(4000, "Invalid Client ID")
	ev.wait(t, "the CLOSE", func() bool { return len(ev.disconnects) == 1 })
	var ce *rpc.CloseError
	require.ErrorAs(t, ev.disconnects[0], &ce, "OnDisconnect got %v", ev.disconnects[0])
	require.EqualValues(t, 4000, ce.Code, "OnDisconnect got %v", ev.disconnects[0])
	require.Equal(t, "Invalid Client ID", ce.Message, "OnDisconnect got %v", ev.disconnects[0])
	waitReady(t, c)
}

// The supervisor retries with growing delays through the injected Sleep.
func TestReconnectBackoff(t *testing.T) {
	dir := socketDir(t)
	var mu sync.Mutex
	var delays []time.Duration
	enough := make(chan struct{})
	c, _ := newClient(t, dir, func(cfg *rpc.Config) {
		cfg.Backoff = rpc.Backoff{Initial: 100 * time.Millisecond, Max: 400 * time.Millisecond}
		cfg.Rand = func() float64 { return 0 }
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			delays = append(delays, d)
			n := len(delays)
			mu.Unlock()
			if n == 5 {
				close(enough)
			}
			if n >= 5 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
	})
	<-enough
	c.Close()
	want := []time.Duration{200, 400, 400, 400, 400}
	for i, w := range want {
		require.Equal(t, w*time.Millisecond, delays[i], "delays %v, want %v ms", delays, want)
	}
}

// Close stops every goroutine, whatever state the Client is in.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	dir := socketDir(t)
	p, err := peer.Listen(peer.Config{Dir: dir})
	require.NoError(t, err)
	var clients []*rpc.Client
	for range 3 {
		c, _ := newClient(t, dir)
		waitReady(t, c)
		_, err := c.SubscribeAuthorizeRequest(ctx5s(t), func() {})
		require.NoError(t, err)
		clients = append(clients, c)
	}
	// One client that has nothing to connect to, sleeping in its backoff.
	idle, _ := newClient(t, socketDir(t), func(cfg *rpc.Config) { cfg.Backoff = rpc.Backoff{Initial: time.Hour, Max: time.Hour} })
	clients = append(clients, idle)
	for _, c := range clients {
		require.NoError(t, c.Close())
		c.Close()
	}
	p.Close()
	checkNoGoroutines(t)
}

// The peer refuses a bad handshake with CLOSE.
func TestPeerRefusesBadHandshake(t *testing.T) {
	dir := socketDir(t)
	p := startPeer(t, dir)
	for _, tc := range []struct {
		hs   string
		code int
	}{
		{`{"v":2,"client_id":"1"}`, rpc.CloseInvalidVersion},
		{`{"v":1,"client_id":"abc"}`, rpc.CloseInvalidClientID},
		{`nonsense`, rpc.CloseInvalidEncoding},
	} {
		conn, err := rpc.DialIPC(ctx5s(t), p.Path())
		require.NoError(t, err)
		rpc.WriteFrame(conn, rpc.OpHandshake, []byte(tc.hs))
		op, payload, err := rpc.ReadFrame(conn)
		var cd rpc.CloseData
		json.Unmarshal(payload, &cd)
		assert.NoError(t, err, "handshake %s: %v %s", tc.hs, op, payload)
		assert.Equal(t, rpc.OpClose, op, "handshake %s: %v %s %v", tc.hs, op, payload, err)
		assert.Equal(t, tc.code, cd.Code, "handshake %s: %v %s %v", tc.hs, op, payload, err)
		conn.Close()
	}
}

func TestPeerExec(t *testing.T) {
	p, c, _ := connected(t)
	hits := newCounter()
	_, err := c.SubscribeAuthorizeRequest(ctx5s(t), hits.fn)
	require.NoError(t, err)
	statuses := make(chan rpc.GuildStatus, 1)

	for _, tc := range []struct{ line, want string }{
		{"guild 9 Nine", "guild 9 set"},
		{"authorize-request", "sent AUTHORIZE_REQUEST to 1"},
		{"error 1000 oops", "sent ERROR to 1"},
		{"ping hi", "sent PING to 1"},
		{"status", "connections=1 subscriptions=[AUTHORIZE_REQUEST=1]"},
	} {
		got, err := p.Exec(tc.line)
		assert.NoError(t, err, "Exec(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		assert.Equal(t, tc.want, got, "Exec(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
	}
	hits.wait(t, "AUTHORIZE_REQUEST")
	_, err = c.SubscribeGuildStatus(ctx5s(t), "9", func(st rpc.GuildStatus) { statuses <- st })
	require.NoError(t, err)
	got, err := p.Exec("guild-status 9 3")
	require.NoError(t, err, "guild-status: %q", got)
	require.Equal(t, "sent GUILD_STATUS to 1", got, "guild-status: %q %v", got, err)
	st := <-statuses
	require.EqualValues(t, 3, st.Online, "GUILD_STATUS %+v", st)
	require.Equal(t, "Nine", st.Guild.Name, "GUILD_STATUS %+v", st)
	for _, bad := range []string{"guild-status 404 1", "guild-status 9 x", "frobnicate", "error x y", "guild 1"} {
		_, err := p.Exec(bad)
		assert.Error(t, err, "Exec(%q) succeeded", bad)
	}
	_, err = p.Exec("quit")
	require.ErrorIs(t, err, peer.ErrQuit, "quit: %v", err)
	got, _ = p.Exec("kick")
	assert.Equal(t, "dropped 1", got, "kick: %q", got)
}

// Subscriptions, unsubscriptions and commands from many goroutines while the connection keeps
// dropping: nothing hangs or races, every error is one of the documented ones, and in the end
// the wire subscriptions are exactly the ones still registered.
func TestConcurrentUseAcrossDrops(t *testing.T) {
	p, c, _ := connected(t)
	stop := make(chan struct{})
	kicked := make(chan struct{})
	go func() {
		defer close(kicked)
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
				p.Kick()
			}
		}
	}()
	var wg sync.WaitGroup
	var succeeded atomic.Int32
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				// A deadline met would fail the test (no error but the two): it only guards
				// against a hang.
				ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
				unsub, err := c.SubscribeAuthorizeRequest(ctx, func() {})
				if err != nil {
					assert.ErrorIs(t, err, rpc.ErrNotConnected, "Subscribe: %v", err)
				}
				_, err = c.GetGuild(ctx, testGuild.ID)
				switch {
				case err == nil:
					succeeded.Add(1)
				case errors.Is(err, rpc.ErrNotConnected):
					c.WaitReady(ctx)
				default:
					assert.ErrorIs(t, err, rpc.ErrDisconnected, "GetGuild")
				}
				cancel()
				// Goroutine 0 keeps its last subscription.
				if unsub != nil && (g != 0 || i != 99) {
					unsub()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-kicked
	require.NotZero(t, succeeded.Load(), "no command succeeded")
	t.Logf("%d of %d commands succeeded", succeeded.Load(), 8*100)
	waitReady(t, c)
	waitPeer(t, p, "exactly the kept subscription", func() bool {
		return p.Connections() == 1 && p.Subscribers(rpc.EvtAuthorizeRequest) == 1
	})
}

// Settle reports the outcome of the connection attempt: Disconnected when no desktop client
// answers (without waiting for a retry), Connected when one does, Closed after Close.
func TestSettle(t *testing.T) {
	dir := socketDir(t)
	// A long backoff: Settle must not wait for the retry.
	c, _ := newClient(t, dir, func(cfg *rpc.Config) { cfg.Backoff = rpc.Backoff{Initial: time.Hour, Max: time.Hour} })
	st, err := c.Settle(ctx5s(t))
	require.NoError(t, err)
	assert.Equal(t, rpc.Disconnected, st, "no desktop client")
	c.Close()
	st, err = c.Settle(ctx5s(t))
	require.NoError(t, err)
	assert.Equal(t, rpc.Closed, st)

	p := startPeer(t, dir)
	c2, _ := newClient(t, dir)
	st, err = c2.Settle(ctx5s(t))
	require.NoError(t, err)
	assert.Equal(t, rpc.Connected, st, "a desktop client answers")
	vs, err := c2.GetVoiceSettings(ctx5s(t))
	require.NoError(t, err)
	assert.Equal(t, p.VoiceSettings(), vs)
}
