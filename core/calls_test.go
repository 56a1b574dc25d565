package core

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/internal/testwait"
	"sdkpp/core/voice"
	"sdkpp/core/voice/e2ee"
	"sdkpp/server"
	"sdkpp/server/servertest"
	wvoice "sdkpp/wire/voice"
)

// testEngine stands in for audio/engine: Emit hands the call a deterministic frame unless the
// engine's own gating (self mute, deafen, push-to-talk) holds it back, and it records what the
// call hands it.
type testEngine struct {
	cfg voice.EngineConfig

	mu        sync.Mutex
	received  map[uint64][]string
	selfMute  bool
	selfDeaf  bool
	mode      voice.Mode
	ptt       bool
	expLoss   int
	loss      float64
	seq       uint16
	ts        uint32
	removed   []uint64
	closed    bool
	startedAt int
	positions map[uint64]voice.Vec3
}

// The test engine records positional voice's placements.
func (e *testEngine) SetPositional(bool)                                 {}
func (e *testEngine) SetListener(voice.Listener)                         {}
func (e *testEngine) SetSpatialProperties(voice.SpatialProperties) error { return nil }
func (e *testEngine) SetSenderPositional(uint64, bool)                   {}
func (e *testEngine) SetSenderPosition(s uint64, p voice.Vec3) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.positions == nil {
		e.positions = map[uint64]voice.Vec3{}
	}
	e.positions[s] = p
}
func (e *testEngine) ClearSenderPosition(s uint64) {
	e.mu.Lock()
	delete(e.positions, s)
	e.mu.Unlock()
}
func (e *testEngine) position(s uint64) (voice.Vec3, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.positions[s]
	return p, ok
}

func (e *testEngine) Emit(payload string) bool {
	e.mu.Lock()
	gated := e.selfMute || e.selfDeaf || (e.mode == voice.ModePushToTalk && !e.ptt)
	e.seq++
	e.ts += 960
	p := voice.Packet{Seq: e.seq, Timestamp: e.ts, Payload: []byte(payload)}
	e.mu.Unlock()
	if !gated {
		e.cfg.OnPacket(p)
	}
	return !gated
}

func (e *testEngine) got(sender uint64) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.received[sender])
}

func (e *testEngine) Start() error { e.mu.Lock(); e.startedAt++; e.mu.Unlock(); return nil }
func (e *testEngine) Close() error { e.mu.Lock(); e.closed = true; e.mu.Unlock(); return nil }
func (e *testEngine) Receive(sender uint64, p voice.Packet) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.received[sender] = append(e.received[sender], string(p.Payload))
}
func (e *testEngine) RemoveSender(s uint64) {
	e.mu.Lock()
	e.removed = append(e.removed, s)
	e.mu.Unlock()
}
func (e *testEngine) SetMode(m voice.Mode)            { e.mu.Lock(); e.mode = m; e.mu.Unlock() }
func (e *testEngine) SetPTTActive(on bool)            { e.mu.Lock(); e.ptt = on; e.mu.Unlock() }
func (e *testEngine) SetPTTReleaseDelay(uint32)       {}
func (e *testEngine) SetVADThreshold(bool, float32)   {}
func (e *testEngine) SetSelfMute(m bool)              { e.mu.Lock(); e.selfMute = m; e.mu.Unlock() }
func (e *testEngine) SetSelfDeaf(d bool)              { e.mu.Lock(); e.selfDeaf = d; e.mu.Unlock() }
func (e *testEngine) SetInputVolume(float32)          {}
func (e *testEngine) SetOutputVolume(float32)         {}
func (e *testEngine) SetSenderVolume(uint64, float32) {}
func (e *testEngine) SetLocalMute(uint64, bool)       {}
func (e *testEngine) SetEchoCancellation(bool)        {}
func (e *testEngine) SetNoiseSuppression(bool)        {}
func (e *testEngine) SetNoiseCancellation(bool)       {}
func (e *testEngine) SetAutoGain(bool)                {}
func (e *testEngine) SetNoInputThreshold(float32)     {}
func (e *testEngine) SetExpectedLoss(p int)           { e.mu.Lock(); e.expLoss = p; e.mu.Unlock() }
func (e *testEngine) LossReport() float64             { e.mu.Lock(); defer e.mu.Unlock(); return e.loss }
func (e *testEngine) InputDevices() ([]voice.Device, error) {
	return []voice.Device{{ID: "in", Name: "Test input", IsDefault: true}}, nil
}
func (e *testEngine) OutputDevices() ([]voice.Device, error) {
	return []voice.Device{{ID: "out", Name: "Test output", IsDefault: true}}, nil
}
func (e *testEngine) SetInputDevice(string) error  { return nil }
func (e *testEngine) SetOutputDevice(string) error { return nil }
func (e *testEngine) CurrentInputDevice() voice.Device {
	return voice.Device{ID: "in", Name: "Test input", IsDefault: true}
}
func (e *testEngine) CurrentOutputDevice() voice.Device {
	return voice.Device{ID: "out", Name: "Test output", IsDefault: true}
}

// tap is a player's UDP flow as the test sees it: every datagram the relay forwarded to the
// player is recorded, and the test can write a datagram of its own or cut the flow.
type tap struct {
	net.Conn
	mu    sync.Mutex
	in    [][]byte
	out   [][]byte
	black atomic.Bool
}

func (t *tap) Read(b []byte) (int, error) {
	for {
		n, err := t.Conn.Read(b)
		if err != nil || !t.black.Load() {
			if err == nil {
				t.mu.Lock()
				t.in = append(t.in, slices.Clone(b[:n]))
				t.mu.Unlock()
			}
			return n, err
		}
	}
}

func (t *tap) Write(b []byte) (int, error) {
	if t.black.Load() {
		return len(b), nil
	}
	t.mu.Lock()
	t.out = append(t.out, slices.Clone(b))
	t.mu.Unlock()
	return t.Conn.Write(b)
}

func (t *tap) received() [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.in)
}

// caller is a player with an SDK Client whose calls use a testEngine and a tapped flow.
type caller struct {
	*sdkClient
	name   string
	engine *testEngine
	tap    *tap
	status []CallStatus
	errs   []CallError
	detail []int32
}

func newCaller(t *testing.T, env *servertest.Env, name string) *caller {
	cl := &caller{sdkClient: connected(t, env, name), name: name}
	cl.dumpLogs(t)
	cl.calls.reg.SetFactory(func(cfg voice.EngineConfig) (voice.Engine, error) {
		e := &testEngine{cfg: cfg, received: map[uint64][]string{}}
		cl.engine = e
		return e, nil
	}, func(cfg *voice.Config) {
		cfg.Tick = 50 * time.Millisecond
		cfg.RelayTimeout = 400 * time.Millisecond
		cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			cl.tap = &tap{Conn: c}
			return cl.tap, nil
		}
	})
	return cl
}

// dumpLogs shows a player's call log lines when the test fails.
func (cl *caller) dumpLogs(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		cl.mu.Lock()
		defer cl.mu.Unlock()
		for _, m := range cl.logs {
			if strings.Contains(m, "call") || strings.Contains(m, "status") {
				t.Logf("%s: %s", cl.name, m)
			}
		}
	})
}

func (cl *caller) id() uint64 { return cl.GetCurrentUserV2().Id() }

// start starts the call and records its statuses.
func (cl *caller) start(t *testing.T, lobby uint64) *Call {
	call := cl.StartCall(lobby)
	require.NotNil(t, call, "%s: StartCall", cl.name)
	cl.status, cl.errs, cl.detail = nil, nil, nil
	call.SetStatusChangedCallback(Func(func(s CallStatus, e CallError, d int32) {
		cl.status, cl.errs, cl.detail = append(cl.status, s), append(cl.errs, e), append(cl.detail, d)
	}))
	return call
}

func (cl *caller) voiceCall(lobby uint64) *voice.Call { return cl.calls.reg.Get(lobby).Call }

func lobbyOf(t *testing.T, secret string, cs ...*caller) uint64 {
	var id uint64
	for _, c := range cs {
		var res *ClientResult
		c.CreateOrJoinLobby(secret, Func(func(r *ClientResult, l uint64) { res, id = r, l }))
		await(t, c.name+" joins the lobby", func() bool { return res != nil })
		require.True(t, res.Successful(), res.ToString())
	}
	return id
}

// talk makes each speaker emit frames until every listener has heard one (keys rotate as
// players join, so the first frames may be sealed under a key not yet delivered), then n more
// that every listener must hear, each once, in order.
func talk(t *testing.T, tag string, n int, speakers []*caller, listeners []*caller) map[*caller][]string {
	sent := map[*caller][]string{}
	for _, s := range speakers {
		deadline := time.Now().Add(testwait.Timeout) // a key's delivery takes its time on a loaded machine
		for i := 0; ; i++ {
			s.engine.Emit(fmt.Sprintf("opus %s warmup %s %d", s.name, tag, i))
			RunCallbacks()
			heard := true
			for _, l := range listeners {
				warm := fmt.Sprintf("opus %s warmup %s ", s.name, tag)
				if l != s && !slices.ContainsFunc(l.engine.got(s.id()), func(g string) bool { return strings.HasPrefix(g, warm) }) {
					heard = false
				}
			}
			if heard {
				break
			}
			require.True(t, time.Now().Before(deadline), "%s: nobody heard %s in %d frames", tag, s.name, i+1)
			time.Sleep(5 * time.Millisecond)
		}
	}
	for i := range n {
		for _, s := range speakers {
			p := fmt.Sprintf("opus %s %s frame %03d", s.name, tag, i)
			require.True(t, s.engine.Emit(p))
			sent[s] = append(sent[s], p)
		}
		time.Sleep(time.Millisecond) // pace like 20 ms frames, faster
	}
	for _, l := range listeners {
		for _, s := range speakers {
			if l == s {
				continue
			}
			await(t, fmt.Sprintf("%s to hear %s's %s frames", l.name, s.name, tag), func() bool {
				return len(tagged(l.engine.got(s.id()), s, tag)) >= n
			})
			assert.Equal(t, sent[s], tagged(l.engine.got(s.id()), s, tag), "%s hears %s", l.name, s.name)
		}
	}
	return sent
}

// tagged returns the frames of a talk.
func tagged(got []string, s *caller, tag string) []string {
	var out []string
	for _, g := range got {
		if strings.HasPrefix(g, fmt.Sprintf("opus %s %s frame ", s.name, tag)) {
			out = append(out, g)
		}
	}
	return out
}

// mediaFrom returns the media packets of ssrc in a capture.
func mediaFrom(capture [][]byte, ssrc uint32) [][]byte {
	var out [][]byte
	for _, p := range capture {
		if h, _, err := wvoice.Parse(p); err == nil && h.Type == wvoice.TypeMedia && h.SSRC == ssrc {
			out = append(out, p)
		}
	}
	return out
}

// opens reports how many of the packets a session can open as sender from's frames.
func opens(s *e2ee.Session, from e2ee.PublicKeys, pkts [][]byte) int {
	n := 0
	for _, p := range pkts {
		if _, err := s.Open(from, nil, p[:wvoice.HeaderBytes], p[wvoice.HeaderBytes:], 0); err == nil {
			n++
		}
	}
	return n
}

func ssrcOf(t *testing.T, cl *caller, lobby uint64) uint32 {
	cl.tap.mu.Lock()
	first := cl.tap.out[0]
	cl.tap.mu.Unlock()
	h, _, err := wvoice.Parse(first)
	require.NoError(t, err)
	return h.SSRC
}

// Three players in one lobby's call: each one's frames reach the other two decrypted; mute,
// deafen and push-to-talk reach the engine and gate sending; loss reports reach the far
// engines; the relay forwards no plaintext; a replayed packet is dropped; a leaver cannot open
// what follows and a newcomer cannot open what came before; a non-member is refused (Forbidden),
// and so is a join without encryption (rule VER-2).
func TestCallThreePlayers(t *testing.T) {
	env := servertest.Start(t)
	p1, p2, p3 := newCaller(t, env, "call-p1"), newCaller(t, env, "call-p2"), newCaller(t, env, "call-p3")
	all := []*caller{p1, p2, p3}
	lobby := lobbyOf(t, "call-secret", all...)

	var changes []string
	p1.SetVoiceParticipantChangedCallback(Func(func(l, m uint64, added bool) {
		changes = append(changes, fmt.Sprint(l == lobby, m, added))
	}))
	calls := map[*caller]*Call{}
	for _, p := range all {
		calls[p] = p.start(t, lobby)
		assert.Nil(t, p.StartCall(lobby), "a second StartCall of the same call is refused")
	}
	for _, p := range all {
		await(t, p.name+" Connected with everyone", func() bool {
			return calls[p].GetStatus() == CallStatusConnected && len(calls[p].GetParticipants()) == 3
		})
		RunCallbacks()
		assert.Contains(t, p.status, CallStatusConnected)
		assert.Len(t, p.GetCalls(), 1)
	}
	code := calls[p1].GetVerificationCode()
	assert.Regexp(t, `^\d{5}( \d{5}){5}$`, code)
	for _, p := range all {
		assert.Equal(t, code, calls[p].GetVerificationCode(), "%s's verification code", p.name)
	}
	assert.Contains(t, changes, fmt.Sprint(true, p3.id(), true))

	// Each one's frames reach the other two, decrypted, once and in order.
	sent := talk(t, "first", 20, all, all)

	// Loss reports: p2's engine measured 25% loss; p1's and p3's encoders hear of it.
	p2.engine.mu.Lock()
	p2.engine.loss = 0.25
	p2.engine.mu.Unlock()
	await(t, "p2's loss report to reach p1's engine", func() bool {
		p1.engine.mu.Lock()
		defer p1.engine.mu.Unlock()
		return p1.engine.expLoss == 25
	})

	// Mute reaches the engine (which gates capture) and the others see the voice state; the call
	// does not send what a muted player's engine still hands it.
	calls[p1].SetSelfMute(true)
	assert.True(t, p1.engine.selfMute)
	await(t, "p2 to see p1 muted", func() bool {
		vs := calls[p2].GetVoiceStateHandle(p1.id())
		return vs != nil && vs.SelfMute() && !vs.SelfDeaf()
	})
	assert.False(t, p1.engine.Emit("opus p1 muted"), "the engine gates a muted player")
	p1.engine.cfg.OnPacket(voice.Packet{Seq: 999, Payload: []byte("opus p1 muted, past the engine")})
	calls[p1].SetSelfMute(false)
	p1.SetSelfDeafAll(true)
	assert.True(t, p1.engine.selfDeaf)
	assert.True(t, calls[p1].GetSelfDeaf())
	p1.SetSelfDeafAll(false)
	// Push-to-talk: the mode and the key reach the engine, which sends only while it is held.
	calls[p1].SetAudioMode(AudioModeTypeMODE_PTT)
	assert.Equal(t, AudioModeTypeMODE_PTT, calls[p1].GetAudioMode())
	assert.False(t, p1.engine.Emit("opus p1 ptt released"))
	calls[p1].SetPTTActive(true)
	assert.True(t, p1.engine.ptt)
	after := talk(t, "ptt", 5, []*caller{p1}, []*caller{p2, p3})
	assert.NotContains(t, p2.engine.got(p1.id()), "opus p1 muted, past the engine")
	calls[p1].SetPTTActive(false)
	calls[p1].SetAudioMode(AudioModeTypeMODE_VAD)
	assert.Len(t, after[p1], 5)

	// A replayed packet: p1's own earlier packet, sent again on its flow; the relay forwards it
	// and both listeners drop it.
	replayed := func() uint64 {
		return p2.voiceCall(lobby).Stats().Replayed + p3.voiceCall(lobby).Stats().Replayed
	}
	before := replayed()
	ssrc1 := ssrcOf(t, p1, lobby)
	old := mediaFrom(p2.tap.received(), ssrc1)
	require.NotEmpty(t, old)
	_, err := p1.tap.Conn.Write(old[len(old)-1])
	require.NoError(t, err)
	await(t, "both listeners to drop the replay", func() bool { return replayed() >= before+2 })

	// The relay forwarded no plaintext Opus payload.
	for _, p := range all {
		for _, pkt := range p.tap.received() {
			for _, frames := range sent {
				for _, f := range frames {
					require.False(t, bytes.Contains(pkt, []byte(f)), "%s received %q in clear", p.name, f)
				}
			}
			require.False(t, bytes.Contains(pkt, []byte("opus ")), "%s received plaintext", p.name)
		}
	}

	// p3 leaves; what p1 seals after it noticed cannot be opened with p3's keys.
	s3 := p3.voiceCall(lobby).Session()
	k1 := p1.voiceCall(lobby).PublicKeys()
	require.Positive(t, opens(s3, k1, nil)+1)
	var ended bool
	p3.EndCall(lobby, Func(func() { ended = true }))
	await(t, "p3's EndCall", func() bool { return ended })
	assert.Nil(t, p3.GetCall(lobby))
	assert.True(t, p3.engine.closed)
	for _, p := range []*caller{p1, p2} {
		await(t, p.name+" to see p3 leave", func() bool { return len(calls[p].GetParticipants()) == 2 })
	}
	await(t, "p1's participant callback", func() bool { return slices.Contains(changes, fmt.Sprint(true, p3.id(), false)) })
	mark := len(p2.tap.received())
	talk(t, "after p3 left", 10, []*caller{p1}, []*caller{p2})
	later := mediaFrom(p2.tap.received()[mark:], ssrc1)
	require.NotEmpty(t, later)
	assert.Zero(t, opens(s3, k1, later), "p3 opened frames sealed after it left")
	assert.Equal(t, calls[p1].GetVerificationCode(), calls[p2].GetVerificationCode())
	assert.NotEqual(t, code, calls[p1].GetVerificationCode(), "the code changes with the participants")

	// p3 comes back as a newcomer: it hears what follows, and cannot open what came before.
	calls[p3] = p3.start(t, lobby)
	for _, p := range all {
		await(t, p.name+" with p3 back", func() bool { return len(calls[p].GetParticipants()) == 3 })
	}
	talk(t, "p3 back", 5, []*caller{p1}, []*caller{p2, p3})
	s3 = p3.voiceCall(lobby).Session()
	assert.Zero(t, opens(s3, k1, old), "the newcomer opened frames from before it joined")
	assert.Zero(t, opens(s3, k1, later), "the newcomer opened frames from before it joined")

	// A player who is not in the lobby is refused: Forbidden, with the service's code.
	outsider := newCaller(t, env, "call-outsider")
	oc := outsider.start(t, lobby)
	await(t, "the outsider refused", func() bool { return slices.Contains(outsider.errs, CallErrorForbidden) })
	assert.Equal(t, CallStatusDisconnected, oc.GetStatus())
	assert.Contains(t, outsider.detail, int32(wvoice.CodeMissingAccess))

	// Rule VER-2: a member whose client joins without encryption (no public keys) is refused.
	plain := newCaller(t, env, "call-plain")
	lobbyOf(t, "call-secret", plain)
	newEngine, tune := plain.calls.reg.Factory()
	plain.calls.reg.SetFactory(newEngine, func(cfg *voice.Config) {
		tune(cfg)
		send := cfg.Send
		cfg.Send = func(ctx context.Context, op int, d any) error {
			if u, ok := d.(wvoice.StateUpdate); ok {
				u.E2EEPublicKeys = nil
				d = u
			}
			return send(ctx, op, d)
		}
	})
	plain.start(t, lobby)
	await(t, "the unencrypted join refused", func() bool { return slices.Contains(plain.errs, CallErrorForbidden) })
	assert.Contains(t, plain.detail, int32(wvoice.CodeE2EERequired))

	var done bool
	p1.EndCalls(Func(func() { done = true }))
	await(t, "EndCalls", func() bool { return done })
	assert.Empty(t, p1.GetCalls())
}

// The relay's flow goes silent: the call goes Reconnecting, binds again and is Connected.
// Then the gateway connection is cut: the service ends the call with it, so the call goes
// Disconnected (rule ST-4); the game ends it and starts it again, and it is Connected.
func TestCallNetworkLoss(t *testing.T) {
	addr := servertest.FreeAddr(t)
	proxy := servertest.NewProxy(t, addr)
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		c.Addr = addr
		c.PublicURL = "http://" + proxy.Addr() // GET /gateway names the proxy
	}))
	p1, p2 := newCaller(t, env, "loss-p1"), newCaller(t, env, "loss-p2")
	lobby := lobbyOf(t, "loss-secret", p1, p2)
	c1, c2 := p1.start(t, lobby), p2.start(t, lobby)
	for _, c := range []*Call{c1, c2} {
		await(t, "Connected", func() bool { return c.GetStatus() == CallStatusConnected && len(c.GetParticipants()) == 2 })
	}
	talk(t, "before", 3, []*caller{p1, p2}, []*caller{p1, p2})

	p1.tap.black.Store(true)
	await(t, "Reconnecting", func() bool { return slices.Contains(p1.status, CallStatusReconnecting) })
	p1.tap.black.Store(false)
	await(t, "Connected again", func() bool { return c1.GetStatus() == CallStatusConnected })
	talk(t, "after the flow came back", 3, []*caller{p1}, []*caller{p2})

	proxy.Cut() // both players' gateway connections
	for _, p := range []*caller{p1, p2} {
		c := p.GetCall(lobby)
		await(t, p.name+" Disconnected after the cut (ST-4)", func() bool { return c.GetStatus() == CallStatusDisconnected })
		RunCallbacks()
		assert.Contains(t, p.errs, CallErrorSignalingUnexpectedClose)
	}
	calls := map[*caller]*Call{}
	for _, p := range []*caller{p1, p2} {
		await(t, p.name+" Ready again", func() bool { return p.GetStatus() == ClientStatusReady })
		var ended bool
		p.EndCall(lobby, Func(func() { ended = true }))
		await(t, "EndCall", func() bool { return ended })
		calls[p] = p.start(t, lobby)
	}
	for _, c := range calls {
		await(t, "rejoined", func() bool { return c.GetStatus() == CallStatusConnected && len(c.GetParticipants()) == 2 })
	}
	talk(t, "after the rejoin", 3, []*caller{p1, p2}, []*caller{p1, p2})
}

// Positional voice: a player's position travels with its voice inside the end-to-end encrypted
// frames (VER-2: calls are end-to-end encrypted). The other player's engine places it there; a
// position the other player's game sets wins over it until cleared; and what the relay forwarded
// (the listener's capture) holds the position nowhere in the clear, only the flag that one is
// inside.
func TestCallPositionTravelsEncrypted(t *testing.T) {
	env := servertest.Start(t)
	p1, p2 := newCaller(t, env, "pos-p1"), newCaller(t, env, "pos-p2")
	lobby := lobbyOf(t, "pos-secret", p1, p2)
	c1, c2 := p1.start(t, lobby), p2.start(t, lobby)
	for _, c := range []*Call{c1, c2} {
		await(t, "Connected", func() bool { return c.GetStatus() == CallStatusConnected && len(c.GetParticipants()) == 2 })
	}
	v1, v2 := p1.voiceCall(lobby), p2.voiceCall(lobby)
	pos := voice.Vec3{X: 1234.5, Y: -67.25, Z: 0.125}
	v1.SetSelfPosition(pos)
	talk(t, "positioned", 12, []*caller{p1}, []*caller{p2})
	await(t, "p2's engine places p1", func() bool { p, ok := p2.engine.position(p1.id()); return ok && p == pos })
	got, ok := v2.ParticipantPosition(p1.id())
	assert.True(t, ok)
	assert.Equal(t, pos, got)

	media := mediaFrom(p2.tap.received(), ssrcOf(t, p1, lobby))
	require.NotEmpty(t, media)
	flagged := 0
	whole := wvoice.AppendPosition(nil, pos.X, pos.Y, pos.Z)
	for _, pkt := range media {
		assert.False(t, bytes.Contains(pkt, whole), "the position in the clear")
		for i := 0; i < wvoice.PositionBytes; i += 4 {
			assert.False(t, bytes.Contains(pkt, whole[i:i+4]), "a coordinate in the clear")
		}
		if h, _, err := wvoice.Parse(pkt); err == nil && h.Flags&wvoice.FlagPosition != 0 {
			flagged++
		}
	}
	assert.Positive(t, flagged, "frames carried the position, sealed")
	assert.Less(t, flagged, len(media), "not every frame: when it moves, at a spurt's start and every 200 ms")

	mine := voice.Vec3{X: 1}
	v2.SetParticipantPosition(p1.id(), mine)
	talk(t, "overridden", 12, []*caller{p1}, []*caller{p2})
	p, _ := p2.engine.position(p1.id())
	assert.Equal(t, mine, p, "the game's position wins over the one sent")
	v2.ClearParticipantPosition(p1.id())
	p, _ = p2.engine.position(p1.id())
	assert.Equal(t, pos, p, "cleared: back to the one sent")
}

// Rule VER-4: SetSpeakerMode still works and logs a deprecation warning once.
func TestSetSpeakerModeDeprecated(t *testing.T) {
	c := newSDKClient(t, servertest.Start(t), nil)
	assert.False(t, c.SetSpeakerMode(true))
	assert.False(t, c.SetSpeakerMode(false))
	await(t, "the warning", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return slices.ContainsFunc(c.logs, func(m string) bool { return strings.Contains(m, "SetSpeakerMode is deprecated") })
	})
	RunCallbacks()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.logs {
		if strings.Contains(m, "SetSpeakerMode is deprecated") {
			n++
		}
	}
	assert.Equal(t, 1, n)
}
