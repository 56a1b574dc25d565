// Package peer is a stand-in for the platform's desktop client on the IPC side of the desktop
// RPC: it listens on an endpoint named as package rpc names them, accepts handshakes, answers
// READY, SUBSCRIBE, UNSUBSCRIBE, GET_GUILD and GET_VOICE_SETTINGS (refusing SET_VOICE_SETTINGS),
// and sends GUILD_STATUS, AUTHORIZE_REQUEST, VOICE_SETTINGS_UPDATE, ERROR, PING and CLOSE when told
// to, through its methods or through Exec's line commands. Tests start
// it in-process; cmd/sdkpp-desktop wraps it in a program.
package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"sdkpp/core/rpc"
)

// Config configures a Peer. The zero value listens on index 0 of the default endpoints.
type Config struct {
	Dir    string // socket directory (Unix); "" is rpc.DefaultDir()
	Prefix string // endpoint name before its index; "" is rpc.DefaultPrefix
	Index  int    // endpoint index 0..9, or -1 for the first one nobody listens on

	User         rpc.User         // announced in READY; zero is a default user
	ServerConfig rpc.ServerConfig // announced in READY
	Guilds       []rpc.Guild      // known to GET_GUILD and GUILD_STATUS
	// VoiceSettings are the user's voice settings (GET_VOICE_SETTINGS); nil is
	// rpc.DefaultVoiceSettings.
	VoiceSettings *rpc.VoiceSettings

	HandshakeTimeout time.Duration // 0 is 5 s
	Logf             func(format string, args ...any)
}

// DefaultUser is the user of READY when Config.User is zero.
var DefaultUser = rpc.User{ID: "100000000000000001", Username: "desktop-user", Discriminator: "0", GlobalName: "Desktop User"}

// Handler answers a command m: its data, or an error (an *rpc.Error is sent as is, another
// error as code 1000), or ErrNoReply to send nothing. It runs on the connection's goroutine.
type Handler func(m *rpc.Message) (data any, err error)

// ErrNoReply, returned by a Handler, leaves the command unanswered.
var ErrNoReply = errors.New("peer: no reply")

// Peer is a running stand-in. Its methods are safe for concurrent use.
type Peer struct {
	cfg  Config
	ln   rpc.Listener
	path string
	wg   sync.WaitGroup

	mu       sync.Mutex
	conns    map[*pconn]struct{}
	guilds   map[string]rpc.Guild
	voice    rpc.VoiceSettings
	handlers map[string]Handler
	pongs    int
	closed   bool
	changed  chan struct{}
}

// pconn is one client connection.
type pconn struct {
	rwc   io.ReadWriteCloser
	wmu   sync.Mutex
	ready bool            // handshake done; guarded by Peer.mu
	subs  map[subKey]bool // guarded by Peer.mu
}

type subKey struct{ evt, guildID string }

// Listen starts a Peer on its endpoint.
func Listen(cfg Config) (*Peer, error) {
	if cfg.User == (rpc.User{}) {
		cfg.User = DefaultUser
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 5 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	p := &Peer{cfg: cfg, conns: map[*pconn]struct{}{}, guilds: map[string]rpc.Guild{},
		handlers: map[string]Handler{}, changed: make(chan struct{})}
	for _, g := range cfg.Guilds {
		p.guilds[g.ID] = g
	}
	p.voice = rpc.DefaultVoiceSettings
	if cfg.VoiceSettings != nil {
		p.voice = *cfg.VoiceSettings
	}
	var err error
	if cfg.Index >= 0 {
		p.path = rpc.Path(cfg.Dir, cfg.Prefix, cfg.Index)
		p.ln, err = rpc.ListenIPC(p.path)
	} else {
		err = errors.New("no endpoint index")
		for n := 0; n < rpc.Slots && p.ln == nil; n++ {
			p.path = rpc.Path(cfg.Dir, cfg.Prefix, n)
			p.ln, err = rpc.ListenIPC(p.path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("peer: listen: %w", err)
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Path is the endpoint the Peer listens on.
func (p *Peer) Path() string { return p.path }

// Close stops listening, drops every connection and returns once every goroutine has exited.
func (p *Peer) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Kick()
	p.wg.Wait()
	return err
}

// Handle makes the Peer answer cmd with h (replacing a built-in command of that name).
func (p *Peer) Handle(cmd string, h Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handlers[cmd] = h
}

// SetGuild adds or replaces a guild known to GET_GUILD and GUILD_STATUS.
func (p *Peer) SetGuild(g rpc.Guild) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.guilds[g.ID] = g
}

// VoiceSettings returns the user's voice settings.
func (p *Peer) VoiceSettings() rpc.VoiceSettings {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.voice
}

// UpdateVoiceSettings changes the user's voice settings with edit, as the user would in the
// desktop client, sends VOICE_SETTINGS_UPDATE to every subscribed connection and returns how
// many it reached.
func (p *Peer) UpdateVoiceSettings(edit func(*rpc.VoiceSettings)) int {
	p.mu.Lock()
	edit(&p.voice)
	vs := p.voice
	p.mu.Unlock()
	return p.event(subKey{evt: rpc.EvtVoiceSettingsUpdate}, vs)
}

// AuthorizeRequest sends AUTHORIZE_REQUEST to every connection subscribed to it and returns how
// many it reached.
func (p *Peer) AuthorizeRequest() int {
	return p.event(subKey{evt: rpc.EvtAuthorizeRequest}, struct{}{})
}

// ActivityJoin sends ACTIVITY_JOIN (the user joined a party from the desktop client) to every
// subscribed connection and returns how many it reached; appID 0 leaves the application out.
func (p *Peer) ActivityJoin(secret string, appID uint64) int {
	d := rpc.ActivityJoin{Secret: secret}
	if appID != 0 {
		d.ApplicationID = strconv.FormatUint(appID, 10)
	}
	return p.event(subKey{evt: rpc.EvtActivityJoin}, d)
}

// GuildStatus sends GUILD_STATUS of a known guild to every connection subscribed to that
// guild's status, and returns how many it reached.
func (p *Peer) GuildStatus(guildID string, online int) (int, error) {
	p.mu.Lock()
	g, ok := p.guilds[guildID]
	p.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("peer: unknown guild %q", guildID)
	}
	return p.event(subKey{rpc.EvtGuildStatus, guildID}, rpc.GuildStatus{Guild: g, Online: online}), nil
}

// SendError sends an ERROR event to every connection and returns how many it reached.
func (p *Peer) SendError(code int, message string) int {
	return p.broadcast(nil, rpc.OpFrame, dispatch(rpc.EvtError, rpc.Error{Code: code, Message: message}))
}

// Ping sends PING with payload to every connection.
func (p *Peer) Ping(payload string) int {
	b, _ := json.Marshal(payload)
	return p.broadcast(nil, rpc.OpPing, b)
}

// CloseAll sends CLOSE with code and message to every connection, then drops them.
func (p *Peer) CloseAll(code int, message string) int {
	b, _ := json.Marshal(rpc.CloseData{Code: code, Message: message})
	n := p.broadcast(nil, rpc.OpClose, b)
	p.Kick()
	return n
}

// Kick drops every connection without a word and returns how many had completed the handshake.
func (p *Peer) Kick() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.conns {
		c.rwc.Close()
		if c.ready {
			n++
		}
		delete(p.conns, c)
	}
	p.notify()
	return n
}

// WriteRaw writes b as it is to every connection (tests of malformed or oversized frames).
func (p *Peer) WriteRaw(b []byte) int {
	return p.each(nil, func(c *pconn) error {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		_, err := c.rwc.Write(b)
		return err
	})
}

// Connections is how many clients have completed the handshake and are still connected.
func (p *Peer) Connections() int {
	return p.each(nil, func(*pconn) error { return nil })
}

// Subscribers is how many connections are subscribed to evt (for any guild).
func (p *Peer) Subscribers(evt string) int {
	subscribed := func(c *pconn) bool {
		for k := range c.subs {
			if k.evt == evt {
				return true
			}
		}
		return false
	}
	return p.each(subscribed, func(*pconn) error { return nil })
}

// Pongs is how many PONGs the Peer has received.
func (p *Peer) Pongs() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pongs
}

// Wait returns when cond is true, checking it after every change of connections,
// subscriptions or pongs, or returns ctx's error. cond may call the Peer's methods.
func (p *Peer) Wait(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// notify wakes Wait; p.mu is held.
func (p *Peer) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Peer) accept() {
	defer p.wg.Done()
	for {
		rwc, err := p.ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if !closed {
				p.cfg.Logf("peer: accept: %v", err)
			}
			return
		}
		c := &pconn{rwc: rwc, subs: map[subKey]bool{}}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			rwc.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve runs one connection: handshake, READY, then commands until it ends.
func (p *Peer) serve(c *pconn) {
	defer func() {
		c.rwc.Close()
		p.mu.Lock()
		delete(p.conns, c)
		p.notify()
		p.mu.Unlock()
	}()
	if !p.handshake(c) {
		return
	}
	p.mu.Lock()
	c.ready = true
	p.notify()
	p.mu.Unlock()
	ready := rpc.Ready{V: rpc.Version, Config: p.cfg.ServerConfig, User: p.cfg.User}
	if c.write(rpc.OpFrame, dispatch(rpc.EvtReady, ready)) != nil {
		return
	}
	for {
		op, payload, err := rpc.ReadFrame(c.rwc)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrClosed) {
				p.cfg.Logf("peer: connection dropped: %v", err)
			}
			return
		}
		switch op {
		case rpc.OpFrame:
			m, err := rpc.ParseMessage(payload)
			if err != nil {
				p.cfg.Logf("peer: %v", err)
				c.close(rpc.CloseInvalidEncoding, "Invalid encoding")
				return
			}
			if reply := p.command(c, m); reply != nil && c.write(rpc.OpFrame, reply) != nil {
				return
			}
		case rpc.OpPing:
			if c.write(rpc.OpPong, payload) != nil {
				return
			}
		case rpc.OpPong:
			p.mu.Lock()
			p.pongs++
			p.notify()
			p.mu.Unlock()
		case rpc.OpClose:
			return
		default:
			c.close(rpc.CloseInvalidEncoding, "unexpected "+op.String())
			return
		}
	}
}

// handshake reads and checks HANDSHAKE, answering CLOSE when it is wrong.
func (p *Peer) handshake(c *pconn) bool {
	d, _ := c.rwc.(interface{ SetReadDeadline(time.Time) error })
	if d != nil {
		d.SetReadDeadline(time.Now().Add(p.cfg.HandshakeTimeout))
		defer d.SetReadDeadline(time.Time{})
	}
	op, payload, err := rpc.ReadFrame(c.rwc)
	if err != nil {
		p.cfg.Logf("peer: handshake: %v", err)
		return false
	}
	var hs rpc.Handshake
	switch {
	case op != rpc.OpHandshake || json.Unmarshal(payload, &hs) != nil:
		c.close(rpc.CloseInvalidEncoding, "expected a handshake")
	case hs.V != rpc.Version:
		c.close(rpc.CloseInvalidVersion, "Invalid version: "+strconv.Itoa(hs.V))
	case !validID(hs.ClientID):
		c.close(rpc.CloseInvalidClientID, "Invalid Client ID")
	default:
		p.cfg.Logf("peer: handshake from application %s", hs.ClientID)
		return true
	}
	return false
}

func validID(s string) bool {
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && n != 0
}

// command answers one command; nil sends nothing.
func (p *Peer) command(c *pconn, m *rpc.Message) *rpc.Message {
	p.mu.Lock()
	h := p.handlers[m.Cmd]
	p.mu.Unlock()
	var data any
	var err error
	switch {
	case h != nil:
		data, err = h(m)
	case m.Cmd == rpc.CmdSubscribe || m.Cmd == rpc.CmdUnsubscribe:
		data, err = p.subscribe(c, m)
	case m.Cmd == rpc.CmdGetGuild:
		data, err = p.getGuild(m.Args)
	case m.Cmd == rpc.CmdGetVoiceSettings:
		data = p.VoiceSettings()
	case m.Cmd == rpc.CmdSetVoiceSettings: // VS-1: a game only reads them
		err = &rpc.Error{Code: rpc.CodeReadOnly, Message: "Voice settings are read-only"}
	default:
		err = &rpc.Error{Code: rpc.CodeInvalidCommand, Message: "Invalid command: " + m.Cmd}
	}
	if errors.Is(err, ErrNoReply) {
		return nil
	}
	r := &rpc.Message{Cmd: m.Cmd, Nonce: m.Nonce}
	if err != nil {
		var e *rpc.Error
		if !errors.As(err, &e) {
			e = &rpc.Error{Code: rpc.CodeUnknownError, Message: err.Error()}
		}
		r.Evt = rpc.EvtError
		r.Data, _ = json.Marshal(e)
		return r
	}
	r.Data, err = json.Marshal(data)
	if err != nil {
		r.Evt, r.Data = rpc.EvtError, []byte(`{"code":1000,"message":"unencodable reply"}`)
	}
	return r
}

func (p *Peer) subscribe(c *pconn, m *rpc.Message) (any, error) {
	key := subKey{evt: m.Evt}
	switch m.Evt {
	case rpc.EvtAuthorizeRequest, rpc.EvtActivityJoin, rpc.EvtVoiceSettingsUpdate:
	case rpc.EvtGuildStatus:
		g, err := p.getGuild(m.Args)
		if err != nil {
			return nil, err
		}
		key.guildID = g.ID
	default:
		return nil, &rpc.Error{Code: rpc.CodeInvalidEvent, Message: "Invalid event: " + m.Evt}
	}
	p.mu.Lock()
	if m.Cmd == rpc.CmdSubscribe {
		c.subs[key] = true
	} else {
		delete(c.subs, key)
	}
	p.notify()
	p.mu.Unlock()
	return map[string]string{"evt": m.Evt}, nil
}

func (p *Peer) getGuild(args json.RawMessage) (rpc.Guild, error) {
	var a rpc.GuildArgs
	if len(args) > 0 && json.Unmarshal(args, &a) != nil {
		return rpc.Guild{}, &rpc.Error{Code: rpc.CodeInvalidPayload, Message: "Invalid args"}
	}
	p.mu.Lock()
	g, ok := p.guilds[a.GuildID]
	p.mu.Unlock()
	if !ok {
		return rpc.Guild{}, &rpc.Error{Code: rpc.CodeInvalidGuild, Message: "Invalid guild: " + a.GuildID}
	}
	return g, nil
}

// event sends an event to the connections subscribed to key.
func (p *Peer) event(key subKey, data any) int {
	return p.broadcast(func(c *pconn) bool { return c.subs[key] }, rpc.OpFrame, dispatch(key.evt, data))
}

// broadcast writes one frame to the connections that match (all if match is nil).
func (p *Peer) broadcast(match func(*pconn) bool, op rpc.Opcode, m any) int {
	return p.each(match, func(c *pconn) error { return c.write(op, m) })
}

// each calls f for every connection that has completed the handshake and matches (match runs
// under p.mu, f outside it), and counts those f succeeded on.
func (p *Peer) each(match func(*pconn) bool, f func(*pconn) error) int {
	p.mu.Lock()
	var cs []*pconn
	for c := range p.conns {
		if c.ready && (match == nil || match(c)) {
			cs = append(cs, c)
		}
	}
	p.mu.Unlock()
	n := 0
	for _, c := range cs {
		if err := f(c); err != nil {
			p.cfg.Logf("peer: write: %v", err)
			continue
		}
		n++
	}
	return n
}

func dispatch(evt string, data any) *rpc.Message {
	b, _ := json.Marshal(data)
	return &rpc.Message{Cmd: rpc.CmdDispatch, Evt: evt, Data: b}
}

// write sends one frame: m is a []byte payload or a value to encode.
func (c *pconn) write(op rpc.Opcode, m any) error {
	b, ok := m.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(m); err != nil {
			return err
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if d, ok := c.rwc.(interface{ SetWriteDeadline(time.Time) error }); ok {
		d.SetWriteDeadline(time.Now().Add(5 * time.Second))
	}
	return rpc.WriteFrame(c.rwc, op, b)
}

// close sends CLOSE and hangs up.
func (c *pconn) close(code int, message string) {
	c.write(rpc.OpClose, rpc.CloseData{Code: code, Message: message})
	c.rwc.Close()
}
