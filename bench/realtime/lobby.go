package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core"
	"sdkpp/core/gateway"
	"sdkpp/core/lobbies"
	"sdkpp/core/messages"
	"sdkpp/core/tunnel"
	"sdkpp/internal/jsonscan"
	"sdkpp/server"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// player is a provisional account of the dev application with its access token.
type player struct {
	id    uint64
	token string
}

// api is a client of one sdkpp service's HTTP API.
type api struct {
	base string // http://host:port/api/v10
	http *http.Client
}

func newAPI(addr string, conns int) *api {
	return &api{base: "http://" + addr + server.APIVersionPath,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 30 * time.Second}}
}

// call sends a JSON request and decodes a 2xx answer into out (when not nil).
func (a *api) call(method, path, auth string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// players makes n provisional accounts (the partner bot-token grant) with 8 requests at a time.
func (a *api) players(botToken, prefix string, n int) ([]player, error) {
	out := make([]player, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var tr wire.TokenResponse
			if err := a.call(http.MethodPost, "/partner-sdk/token/bot", "Bot "+botToken,
				wire.BotTokenRequest{ExternalUserID: prefix + strconv.Itoa(i)}, &tr); err != nil {
				errs <- err
				return
			}
			var me wire.User
			if err := a.call(http.MethodGet, "/users/@me", "Bearer "+tr.AccessToken, nil, &me); err != nil {
				errs <- err
				return
			}
			out[i] = player{id: uint64(me.ID), token: tr.AccessToken}
		}()
	}
	wg.Wait()
	close(errs)
	return out, <-errs
}

// lobby puts every player in the lobby of secret (PUT /lobbies, rule LOB-1) and returns its id.
func (a *api) lobby(secret string, ps []player) (string, error) {
	var id string
	for _, p := range ps {
		var l wire.Lobby
		if err := a.call(http.MethodPut, "/lobbies", "Bearer "+p.token,
			wire.CreateOrJoinLobbyRequest{Secret: secret, IdleTimeoutSeconds: ptr(3600)}, &l); err != nil {
			return "", err
		}
		id = l.ID.String()
	}
	return id, nil
}

func ptr[T any](v T) *T { return &v }

// send posts a lobby message as p (rule LOB-2).
func (a *api) send(p player, lobbyID, content string) error {
	return a.call(http.MethodPost, "/lobbies/"+lobbyID+"/messages", "Bearer "+p.token,
		wire.LobbyMessageRequest{Content: content}, nil)
}

// listener is a player's SDK gateway connection (core/gateway: the WebSocket client of the SDK,
// which decodes every payload) that reports each lobby message's content and arrival time.
type listener struct {
	gw    *gateway.Client
	watch *watch
}

// listen connects p and calls onMessage with the data of every LOBBY_MESSAGE_CREATE, as the SDK's
// gateway client decoded it from the frame (the envelope; the data is left as JSON, as Redis
// leaves a payload as bytes); it returns once the session is Ready.
func listen(addr string, p player, onMessage func(data json.RawMessage)) (*listener, error) {
	return listenWith(addr, p, func(event string, data json.RawMessage) {
		if event == wire.EventLobbyMessageCreate {
			onMessage(data)
		}
	})
}

// listenWith connects p with onDispatch as the gateway client's OnDispatch, and returns once the
// session is Ready.
func listenWith(addr string, p player, onDispatch func(event string, data json.RawMessage)) (*listener, error) {
	ready := make(chan struct{})
	var once sync.Once
	w := &watch{player: p.id}
	gw, err := gateway.New(gateway.Config{
		URL:   "ws://" + addr + server.GatewayPath,
		Token: func() string { return p.token },
		Logf: func(format string, args ...any) {
			clients.printf("player %d: "+format, append([]any{p.id}, args...)...)
		},
		OnStatus: func(s gateway.Status, err error) {
			w.status(s, err)
			if s == gateway.Ready {
				once.Do(func() { close(ready) })
			}
		},
		// As core's: the client leaves a message's data to messages.Decode, its one check. The
		// bench does not decode it (a Redis subscriber's payload is left as bytes) but checks it
		// as that decode does, so that its clients do the work of the SDK's check.
		OnDispatch: func(event string, data json.RawMessage) {
			if messages.Checks(event) && !jsonscan.Valid(data) {
				w.invalid.Add(1) // the SDK's decode drops it: counted, so that a shortfall names it
				return
			}
			onDispatch(event, data)
		},
		DataChecked: messages.Checks,
	})
	if err != nil {
		return nil, err
	}
	gw.Start()
	select {
	case <-ready:
		return &listener{gw: gw, watch: w}, nil
	case <-time.After(30 * time.Second):
		gw.Close()
		return nil, fmt.Errorf("player %d: gateway not Ready after 30 s", p.id)
	}
}

// probeSize sends one message over HTTP and returns the size of its dispatch data, for the
// anchor to publish payloads of the same size.
func probeSize(a *api, addr, lobbyID string, from, to player) (int, error) {
	var probed atomic.Int64 // written on the gateway client's goroutine
	probe, err := listen(addr, to, func(data json.RawMessage) { probed.Store(int64(len(data))) })
	if err != nil {
		return 0, err
	}
	defer probe.gw.Close()
	err = a.send(from, lobbyID, "probe")
	for deadline := time.Now().Add(10 * time.Second); err == nil && probed.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err != nil || probed.Load() == 0 {
		return 0, fmt.Errorf("the probe message did not arrive: %v", err)
	}
	return int(probed.Load()), nil
}

// sdkClient connects a player's SDK client (core.Client) and waits until it is Ready.
func sdkClient(addr string, p player) (*core.Client, error) {
	c := core.NewClientWithBases("http://"+addr+server.APIVersionPath, "http://"+addr)
	c.UpdateToken(core.AuthorizationTokenTypeBearer, p.token, core.Func(func(*core.ClientResult) {}))
	c.Connect()
	if !spin(func() bool { return c.GetStatus() == core.ClientStatusReady }) { // no callback tells
		c.Close()
		return nil, fmt.Errorf("player %d: the SDK client is not Ready", p.id)
	}
	return c, nil
}

// round measures one message, from its send until its receiver has it.
type round func(i int) (time.Duration, error)

// receiver is a player's SDK client (core.Client: gateway, message cache, callback queue) that
// notes when its MessageCreated callback runs for the message it waits for.
type receiver struct {
	c    *core.Client
	want string    // the content waited for
	at   time.Time // when its callback ran; zero before
}

func newReceiver(addr string, p player) (*receiver, error) {
	c, err := sdkClient(addr, p)
	if err != nil {
		return nil, err
	}
	r := &receiver{c: c}
	c.SetMessageCreatedCallback(core.Func(func(id uint64) {
		if h := c.GetMessageHandle(id); h != nil && h.Content() == r.want {
			r.at = time.Now()
		}
	}))
	return r, nil
}

// sdkppRound returns a round that sends one message from one player and times it from the send
// until the receiver's MessageCreated callback has run inside RunCallbacks, which loop calls as
// a game's thread would. With a sender client sc, it sends with SendLobbyMessage (over sc's
// gateway connection); with nil, each message is an HTTP POST /lobbies/{id}/messages, as a game's
// backend or a client without the SDK sends it. done checks, at the end, that every send
// succeeded.
func sdkppRound(a *api, lobbyID string, from player, sc *core.Client, to *receiver, loop gameLoop, name string) (r round, done func() error) {
	send := func(content string) error { return a.send(from, lobbyID, content) }
	var sent, failed atomic.Int64 // the sender's results, counted in its callbacks
	if sc != nil {
		id, _ := strconv.ParseUint(lobbyID, 10, 64)
		send = func(content string) error {
			sc.SendLobbyMessage(id, content, core.Func(func(r *core.ClientResult, _ uint64) {
				if !r.Successful() {
					failed.Add(1)
				}
				sent.Add(1)
			}))
			return nil
		}
	}
	rounds := 0
	r = func(i int) (time.Duration, error) {
		rounds++
		to.want, to.at = "latency "+name+" "+strconv.Itoa(i), time.Time{}
		start := time.Now()
		if err := send(to.want); err != nil {
			return 0, err
		}
		if !loop(func() bool { return !to.at.IsZero() }) {
			return 0, fmt.Errorf("%s message %d never reached the callback", name, i)
		}
		// Untimed: the sender's answer (after the commit), so that no work of this round
		// overlaps the next round, which may be the anchor's.
		if sc != nil && !loop(func() bool { return sent.Load() == int64(rounds) }) {
			return 0, fmt.Errorf("SendLobbyMessage %d: no answer", i)
		}
		return to.at.Sub(start), nil
	}
	done = func() error {
		if sc == nil {
			return nil
		}
		if !poll(func() bool { return sent.Load() == int64(rounds) }) || failed.Load() > 0 {
			return fmt.Errorf("SendLobbyMessage: %d answers to %d sends, %d failed", sent.Load(), rounds, failed.Load())
		}
		return nil
	}
	return r, done
}

// A gameLoop runs the SDK's callbacks until done reports true, and reports false if 10 seconds
// pass first: a game's thread serving the SDK. done is checked after each run, so it must turn
// true in a callback for poll to see it at once.
type gameLoop func(done func() bool) bool

// poll is a thread that serves the SDK's callbacks and has nothing else to do (a server, a tool,
// an engine's network thread): between runs it blocks in WaitCallbacks until a callback is
// queued. The clock of a round stops inside the run that follows the wake.
func poll(done func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		core.RunCallbacks()
		if done() {
			return true
		}
		core.WaitCallbacks(time.Until(deadline))
	}
	return false
}

// spin is a game loop that calls RunCallbacks as often as it can without holding a core: between
// runs it sleeps for the shortest time the runtime allows (on a machine with two cores, a loop
// that never sleeps would take one of them from the service and the SDK's own goroutines). Each
// of those sleeps costs the Go runtime a wake of another thread, so the loop keeps a core busy
// with itself; on two shared cores that shows in the figures.
func spin(done func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		core.RunCallbacks()
		if done() {
			return true
		}
		time.Sleep(time.Microsecond)
	}
	return false
}

// A fanout is one side of (b), connected: turn sends messages from one sender with window sends in
// flight and returns how long it took until every receiver had every message.
type fanout interface {
	turn(messages, window int) (time.Duration, error)
	Close()
}

// sdkppFanout is (b) on sdkpp: every player's SDK gateway client connected. One-node (b) sends as
// the SDK's SendLobbyMessage does when connected: the sender's own gateway connection carries
// the requests (op 100, core/tunnel), window of them in flight; (d) posts with HTTP POST
// /lobbies/{id}/messages (poster) to another node, as a game's backend would.
type sdkppFanout struct {
	a         *api
	lobbyID   string
	ps        []player
	listeners []*listener
	got       *deliveries
	sent      int
	tunnel    *tunnel.Tunnel // the sender's requests over its gateway connection; nil: posters
	posters   []*poster      // the sender's HTTP connections, one per send in flight
	viaHTTP   bool           // the turns send with the posters even with a tunnel (httpSender)
	// gatewayStats, when set, returns the service's gateway counters, for a turn that fell short.
	gatewayStats func() (string, error)
}

// httpSender is f sending with HTTP POST (poster) as a game's backend does, on f's connections: a
// side of (b) beside f's own, so that the two send paths take turns on the same sessions.
type httpSender struct{ f *sdkppFanout }

func (o httpSender) turn(messages, window int) (time.Duration, error) {
	o.f.viaHTTP = true
	defer func() { o.f.viaHTTP = false }()
	return o.f.turn(messages, window)
}

func (httpSender) Close() {} // f's owner closes it

// newSdkppFanout connects the players to the service at addr; the first sends over its gateway
// connection.
func newSdkppFanout(a *api, addr, lobbyID string, ps []player) (*sdkppFanout, error) {
	return connectFanout(a, []string{addr}, lobbyID, ps, true)
}

// newSpreadFanout is newSdkppFanout with the players' gateway connections spread over the nodes
// at addrs, round robin, and the first sending with HTTP POST to a's node.
func newSpreadFanout(a *api, addrs []string, lobbyID string, ps []player) (*sdkppFanout, error) {
	return connectFanout(a, addrs, lobbyID, ps, false)
}

func connectFanout(a *api, addrs []string, lobbyID string, ps []player, overGateway bool) (*sdkppFanout, error) {
	f := &sdkppFanout{a: a, lobbyID: lobbyID, ps: ps, got: newDeliveries(len(ps))}
	if overGateway {
		f.tunnel = new(tunnel.Tunnel)
	}
	for i, p := range ps {
		onMessage := func(json.RawMessage) { f.got.add(i) }
		var l *listener
		var err error
		if i == 0 && f.tunnel != nil {
			l, err = listenAndSend(addrs[0], p, f.tunnel, onMessage)
		} else {
			l, err = listen(addrs[i%len(addrs)], p, onMessage)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		f.listeners = append(f.listeners, l)
	}
	return f, nil
}

// listenAndSend is listen for a player who also sends requests over the connection with t, as
// the SDK does (core: the tunnel is enabled by READY's sdkpp_features and answered by
// SDKPP_REQUEST_RESULT dispatches).
func listenAndSend(addr string, p player, t *tunnel.Tunnel, onMessage func(data json.RawMessage)) (*listener, error) {
	return listenWith(addr, p, func(event string, data json.RawMessage) {
		switch event {
		case wire.EventLobbyMessageCreate:
			onMessage(data)
		case gwire.EventRequestResult:
			t.Answer(data) // its callback sends the next request (chainedTurn)
		case gwire.EventReady:
			var r gwire.Ready
			t.Enable(json.Unmarshal(data, &r) == nil && slices.Contains(r.SdkppFeatures, gwire.FeatureRequests))
		}
	})
}

func (f *sdkppFanout) Close() {
	for _, p := range f.posters {
		p.Close()
	}
	for _, l := range f.listeners {
		l.gw.Close()
	}
	if f.tunnel != nil {
		f.tunnel.Lost() // stops its deadlines' timer
	}
}

// turn sends over the sender's gateway connection (chainedTurn) or, with posters, from window
// goroutines, each posting its next message once its last one was answered.
func (f *sdkppFanout) turn(messages, window int) (time.Duration, error) {
	if f.tunnel != nil && !f.viaHTTP {
		return f.chainedTurn(messages, window)
	}
	wait := f.got.expect(int64(messages*len(f.ps)), nil)
	before := make([]int64, len(f.got.per))
	for i := range f.got.per {
		before[i] = f.got.per[i].Load()
	}
	first := f.sent
	f.sent += messages
	var next atomic.Int64
	errs := make(chan error, window)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < window; w++ {
		send, err := f.sender(w)
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(messages); i = next.Add(1) {
				if err := f.got.hold(int64(first) + i); err != nil {
					errs <- errHeld{err}
					return
				}
				if err := send("fanout " + strconv.FormatInt(int64(first)+i, 10)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		if held := (errHeld{}); errors.As(err, &held) {
			return 0, f.short(err, before, messages)
		}
		return 0, err
	}
	if err := wait(); err != nil {
		return 0, f.short(err, before, messages)
	}
	return time.Since(start), nil
}

// errHeld is a sender's error from deliveries.hold: its slowest receiver stopped.
type errHeld struct{ error }

func (e errHeld) Unwrap() error { return e.error }

// short is the error of a turn whose deliveries fell short (err): it names the members that
// lack some, with what their clients went through, and the service's gateway counters.
func (f *sdkppFanout) short(err error, before []int64, messages int) error {
	ms := make([]memberState, len(f.listeners))
	for i, l := range f.listeners {
		m := memberState{index: i, player: f.ps[i].id, got: int(f.got.per[i].Load() - before[i]), want: messages,
			status: l.gw.Status(), readies: int(l.watch.readies.Load()), drops: int(l.watch.drops.Load()),
			invalid: int(l.watch.invalid.Load())}
		if r := l.watch.last.Load(); r != nil {
			m.lastDrop = *r
		}
		ms[i] = m
	}
	msg := err.Error() + shortfall(ms)
	if f.gatewayStats != nil {
		st, serr := f.gatewayStats()
		if serr != nil {
			st = serr.Error()
		}
		msg += "; the service's gateway: " + st
	}
	clients.printf("%s", msg)
	return errors.New(msg)
}

// sender returns the send of the w-th send in flight with HTTP POST: over the w-th HTTP
// connection (chainedTurn sends over the gateway).
func (f *sdkppFanout) sender(w int) (func(content string) error, error) {
	if w == len(f.posters) {
		p, err := f.a.newPoster(f.ps[0], f.lobbyID)
		if err != nil {
			return nil, err
		}
		f.posters = append(f.posters, p)
	}
	return f.posters[w].send, nil
}

// redisRound returns a round that publishes one payload of size bytes and times it from the
// PUBLISH until the subscriber has read it; the publisher reads PUBLISH's reply after, untimed,
// as sdkppRound waits for the sender's answer after its clock stops (redis-server writes the
// message and the reply in the same turn of its loop, so that reading the reply first timed a
// read the subscriber does not wait for). done closes the connections.
func redisRound(r *redisServer, size int) (rd round, done func() error, err error) {
	pub, err := dialRedis(r.addr)
	if err != nil {
		return nil, nil, err
	}
	sub, err := dialRedis(r.addr)
	if err != nil {
		pub.Close()
		return nil, nil, err
	}
	done = func() error { pub.Close(); sub.Close(); return nil }
	if err := sub.subscribe("lobby"); err != nil {
		done()
		return nil, nil, err
	}
	rd = func(i int) (time.Duration, error) {
		payload := padded("latency "+strconv.Itoa(i), size)
		start := time.Now()
		pub.send("PUBLISH", "lobby", payload)
		if err := pub.flush(); err != nil {
			return 0, err
		}
		m, err := sub.message()
		took := time.Since(start)
		if err != nil {
			return 0, err
		}
		if string(m) != payload {
			return 0, fmt.Errorf("redis: received another payload")
		}
		if _, err := pub.reply(); err != nil {
			return 0, err
		}
		return took, nil
	}
	return rd, done, nil
}

// redisFanout is (b) on Redis: subscribers SUBSCRIBEd connections, each read by a goroutine, and
// one publisher that pipelines PUBLISH of payloads of size bytes.
type redisFanout struct {
	subs   []*redisConn
	pub    *redisConn
	size   int
	got    *deliveries
	errs   chan error
	cancel context.CancelFunc
	wg     sync.WaitGroup // the subscribers' readers
	sent   int
}

func newRedisFanout(r *redisServer, subscribers, size int) (*redisFanout, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &redisFanout{size: size, got: newDeliveries(subscribers), errs: make(chan error, subscribers), cancel: cancel}
	for i := 0; i < subscribers; i++ {
		s, err := dialRedis(r.addr)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.subs = append(f.subs, s)
		if err := s.subscribe("fanout"); err != nil {
			f.Close()
			return nil, err
		}
	}
	pub, err := dialRedis(r.addr)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.pub = pub
	for i, s := range f.subs {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				if _, err := s.message(); err != nil {
					if ctx.Err() == nil {
						f.errs <- err
					}
					return
				}
				f.got.add(i)
			}
		}()
	}
	return f, nil
}

func (f *redisFanout) Close() {
	f.cancel()
	for _, s := range f.subs {
		s.Close()
	}
	if f.pub != nil {
		f.pub.Close()
	}
	f.wg.Wait()
}

func (f *redisFanout) turn(messages, window int) (time.Duration, error) {
	wait := f.got.expect(int64(messages*len(f.subs)), f.errs)
	payload := func(i int) string { return padded("fanout "+strconv.Itoa(f.sent+i), f.size) }
	start := time.Now()
	sent, acked := 0, 0
	for ; sent < window && sent < messages; sent++ {
		if err := f.got.hold(int64(f.sent + sent + 1)); err != nil {
			return 0, fmt.Errorf("redis: %w", err)
		}
		f.pub.send("PUBLISH", "fanout", payload(sent))
	}
	if err := f.pub.flush(); err != nil {
		return 0, err
	}
	for acked < messages {
		if _, err := f.pub.reply(); err != nil {
			return 0, err
		}
		acked++
		if sent < messages {
			if err := f.got.hold(int64(f.sent + sent + 1)); err != nil {
				return 0, fmt.Errorf("redis: %w", err)
			}
			f.pub.send("PUBLISH", "fanout", payload(sent))
			sent++
			if err := f.pub.flush(); err != nil {
				return 0, err
			}
		}
	}
	f.sent += messages
	if err := wait(); err != nil {
		return 0, fmt.Errorf("redis: %w", err)
	}
	return time.Since(start), nil
}

// padded is s followed by spaces up to size bytes.
func padded(s string, size int) string {
	if len(s) >= size {
		return s
	}
	return s + string(bytes.Repeat([]byte{' '}, size-len(s)))
}

// chainedTurn is turn over the sender's gateway connection, as the SDK's SendLobbyMessage sends
// (tunnel.SendThen; the nonce enforced, the answer decoded): each answer's callback sends the
// next message, on the gateway client's goroutine that read the answer, where core would queue
// it for the game's thread; requests sent while the reader dispatches a read's answers go out
// together when it reads on (SendRawLater). The Redis side's publisher pipelines the same way,
// from the loop that reads its replies. Eight goroutines waiting in tunnel.Do, woken one by one
// by the answers, cost these clients about 6 µs more per message, in a shape the SDK never has.
func (f *sdkppFanout) chainedTurn(messages, window int) (time.Duration, error) {
	id, err := strconv.ParseUint(f.lobbyID, 10, 64)
	if err != nil {
		return 0, err
	}
	gw := f.listeners[0].gw
	errs := make(chan error, 1)
	wait := f.got.expect(int64(messages*len(f.ps)), errs)
	before := make([]int64, len(f.got.per))
	for i := range f.got.per {
		before[i] = f.got.per[i].Load()
	}
	first := int64(f.sent)
	f.sent += messages
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	handOff := func(fn func()) { go fn() }
	var next, answered atomic.Int64
	all := make(chan struct{})
	var send func(i int64)
	send = func(i int64) {
		if !f.got.room(first + i) { // the slowest receiver is far behind: wait on another goroutine
			go func() {
				if err := f.got.hold(first + i); err != nil {
					fail(errHeld{err})
					return
				}
				send(i)
			}()
			return
		}
		m := new(wire.LobbyMessage)
		f.tunnel.SendThen(handOff, context.Background(), gw, lobbies.SendMessage("", id, "fanout "+strconv.FormatInt(first+i, 10), nil), m, func(err error) {
			if err != nil {
				fail(err)
				return
			}
			if i := next.Add(1); i <= int64(messages) {
				send(i)
			}
			if answered.Add(1) == int64(messages) {
				close(all)
			}
		})
	}
	start := time.Now()
	for range min(window, messages) {
		send(next.Add(1))
	}
	if err := wait(); err != nil {
		if held := (errHeld{}); errors.As(err, &held) {
			return 0, f.short(err, before, messages)
		}
		return 0, err
	}
	select { // the answers follow the sender's own deliveries
	case <-all:
	case err := <-errs:
		return 0, err
	}
	return time.Since(start), nil
}
