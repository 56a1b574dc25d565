package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"

	"sdkpp/internal/clock"
	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/gateway/internal/oprequest"
	"sdkpp/server/gateway/internal/pace"
	"sdkpp/server/gateway/internal/payload"
	"sdkpp/server/gateway/internal/replay"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	"sdkpp/wire/voice"
)

// inbound is what the reader hands to the connection's loop: one payload, or why reading stopped.
type inbound struct {
	data    []byte
	stopped bool // reading stopped: the connection ends with stop
	stop    wsframe.Close
}

// conn is one WebSocket connection. Its loop (run, on ServeHTTP's goroutine) owns the reader
// goroutine and does every write that may wait for the client; dispatchers may write what the
// socket takes at once (flushNow), under flushMu.
type conn struct {
	h         *Hub
	tcp       *wsframe.Conn   // the upgraded connection: every frame the server sends
	fr        *wsframe.Reader // the client's frames; used by the reader goroutine only
	resumeURL string

	wake chan struct{}      // dispatches wait in the session (cap 1)
	kick chan wsframe.Close // the hub asks the loop to close (cap 1)
	in   chan inbound       // reader → loop
	done chan struct{}      // closed when the loop stops receiving from in (and has sent its close frame)

	// flushMu is held while dispatches are taken from the session and written, so that they
	// leave in order: by the loop (flush), or by a dispatcher writing them itself (flushNow).
	// It is taken before Hub.mu.
	flushMu   sync.Mutex
	lastWrite time.Time          // when dispatches were last written; guarded by flushMu
	backlog   bool               // the last write carried several dispatches: paced as if busy (pace); flushMu
	taken     []wsframe.Dispatch // what take returned last, its array used again; flushMu

	// Guarded by Hub.mu; sent is written only with flushMu held too.
	sess *session
	sent int64 // the last sequence number taken for writing

	// Loop-only state.
	authed    bool
	who       Identity
	deadline  time.Time // heartbeat deadline by the hub's clock
	hbC       <-chan time.Time
	hbStop    func()
	rate      []time.Time // ring of the last RateLimit payload times
	rateNext  int
	readerRan chan struct{} // closed when the reader goroutine has returned
	online    chan struct{} // closed when the hook of the user's first session has returned (goOnline)
	token     string        // the identified session's credential with its scheme ("Bearer x", "Bot x"), for gwire.OpRequest; never logged

	remoteAddr string                    // the client's address, for gwire.OpRequest
	requester  atomic.Pointer[requester] // set by the loop once identified; read by the reader
	// serving: one of the connection's own requests is being served. Dispatches pushed
	// meanwhile are written with its answer (Hub.answer), in one write.
	serving atomic.Bool
	queued  *oprequest.Queue // requests the reader accepted whose answers wait (serveAndAnswer); reader-only

	// Write pacing (package pace), loop-only.
	paceC <-chan time.Time // the paced write's timer; nil when none is due
	// paced is set while a paced write is due: it will take everything pushed meanwhile, so
	// signal need not wake the loop (under load, a wake-up per dispatch was a large part of the
	// service's work).
	paced atomic.Bool
	// answerDue: an answer waits (flushNow), or the hub's pushes paused (FlushPaced); the loop
	// writes at once, paced or not.
	answerDue atomic.Bool
}

// pace says how long to wait before writing: 0 unless the hub is busy or the connection has a
// backlog, and it wrote less than the pace (Config.busyPace) ago.
func (c *conn) pace() time.Duration {
	busy := c.h.rate.Busy()
	c.flushMu.Lock()
	last, backlog := c.lastWrite, c.backlog
	c.flushMu.Unlock()
	return pace.Wait(busy, backlog, last, time.Now(), c.h.cfg.busyPace)
}

func newConn(h *Hub, tcp *wsframe.Conn, fr *wsframe.Reader, resumeURL string) *conn {
	return &conn{h: h, tcp: tcp, fr: fr, resumeURL: resumeURL,
		wake: make(chan struct{}, 1), kick: make(chan wsframe.Close, 1), in: make(chan inbound), done: make(chan struct{}),
		readerRan: make(chan struct{})}
}

// signal tells the loop that dispatches wait (never blocks).
func (c *conn) signal() {
	if c.paced.Load() && !c.answerDue.Load() {
		return // the paced write takes them
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// FlushPaced has the loop make its paced write now (pace.Quiet: the hub's pushes paused).
func (c *conn) FlushPaced() { c.signalFor(true) }

// kickWith asks the loop to close with r (never blocks; the first request wins).
func (c *conn) kickWith(r wsframe.Close) {
	select {
	case c.kick <- r:
	default:
	}
}

// cut closes the TCP connection under the WebSocket.
func (c *conn) cut() {
	if c.tcp != nil {
		_ = c.tcp.Close()
	}
}

// run serves the connection until it ends; the reader goroutine has been started (read).
func (c *conn) run() {
	c.finish(c.loop())
}

// read hands each message to the loop until reading fails or a message is refused. Once the
// loop stops receiving (it is closing the connection), it reads on until the client answers the
// close frame, dropping what comes before. It is started by ServeHTTP, and waited for by finish.
func (c *conn) read() {
	defer close(c.readerRan)
	max := c.readMax()
	for {
		data, stop, stopped := c.fr.ReadMessage(max)
		if !stopped && c.serveInline(data) {
			continue
		}
		if c.queued != nil { // answered before what the client sent next
			c.queued.Close()
			c.queued = nil
		}
		if stopped {
			// The client's close code 1000 or 1001 ends its session, as on the platform; any
			// other end of the connection leaves the session resumable.
			c.hand(inbound{stopped: true, stop: stop})
			if stop.Code != 0 { // the server closes: wait for the answer
				c.fr.Drain()
			}
			return
		}
		if !c.hand(inbound{data: data}) {
			c.fr.Drain()
			return
		}
	}
}

// hand gives the loop what was read; false when the loop no longer receives.
func (c *conn) hand(in inbound) bool {
	select {
	case c.in <- in:
		return true
	case <-c.done:
		return false
	}
}

// readMax is the largest payload the reader takes: gwire.OpRequest and gwire.OpVoiceKeys payloads
// may be longer than others, which handle checks against MaxPayloadBytes.
func (c *conn) readMax() int {
	n := c.h.cfg.MaxPayloadBytes
	if c.h.cfg.Requests != nil {
		n = max(n, c.h.cfg.MaxRequestBytes)
	}
	if c.h.cfg.Voice != nil {
		n = max(n, voice.MaxKeysPayloadBytes)
	}
	return n
}

// finish ends the connection: it detaches (or ends) the session first, so that a client that
// reconnects at once can resume, then closes the WebSocket and waits for the reader.
func (c *conn) finish(r wsframe.Close) {
	if gwire.IsFinal(r.Code) {
		r.End = true
	}
	if c.online != nil { // the user's going offline is reported after its coming online
		<-c.online
	}
	h := c.h
	h.quiet.Done(c) // a paced write it had due is no longer
	h.mu.Lock()
	wentOffline := false
	var left Session // the session this connection lets go: it leaves its call
	var note *busmsg.SessionNote
	if s := c.sess; s != nil && s.conn == c && s.moved {
		// Another node took the session over (it was resumed there): it leaves its call here,
		// and the other nodes hear nothing more of it from this one.
		left = Session{Identity: s.who, ID: s.id}
		s.conn = nil
	} else if s != nil && s.conn == c {
		left = Session{Identity: s.who, ID: s.id}
		s.conn = nil
		s.expires = h.cfg.Clock.Now().Add(h.cfg.ResumeWindow)
		st := busmsg.NoteDetached
		if r.End {
			h.removeLocked(s)
			st = busmsg.NoteEnded
		}
		n := noteOf(s, st)
		note = &n
		wentOffline = h.liveLocked(s.who.AppID, s.who.UserID) == 0
	}
	c.sess = nil
	h.sweepLocked(h.cfg.Clock.Now())
	h.mu.Unlock()
	if note != nil {
		h.note(*note)
	}
	h.voiceGone(left)
	if wentOffline {
		h.connection(c.who, false)
	}

	c.closeWith(r.Code, r.Reason)
	h.stats.Closed(r.Code)
	if c.hbStop != nil {
		c.hbStop()
	}
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	if c.authed && h.cfg.OnSession != nil {
		h.cfg.OnSession(c.who)
	}
	h.log.Debug("gateway: connection closed", "code", r.Code, "reason", r.Reason, "user_id", c.who.UserID,
		"app_id", c.who.AppID)
}

// goOnline reports who's first live session (Hub.connection) on a goroutine of the connection's,
// which finish waits for. The hook may wait for the store (the lobbies' order lock and commits),
// and the session, attached, gets dispatches meanwhile: a loop that waited for it wrote none of
// them, and a busy lobby pushed more than ReplayLimit in that time, so that the connection was
// closed "too far behind" and its session lost with them (make bench's fan-out on PostgreSQL).
func (c *conn) goOnline(who Identity) {
	done := make(chan struct{})
	c.online = done
	go func() {
		defer close(done)
		c.h.connection(who, true)
	}()
}

// closeWith ends the connection and waits for the reader goroutine. With a code, it performs
// the close handshake (RFC 6455 7.1.2): it sends the close frame and waits until the client
// answers, cutting the TCP connection when the client does not within closeTimeout. Code 0
// (the peer is gone, or its close frame was answered) cuts the connection at once. The server
// closes the TCP connection last either way (RFC 6455 7.1.1).
func (c *conn) closeWith(code int, reason string) {
	if code == 0 {
		c.cut()
		close(c.done)
		<-c.readerRan
		return
	}
	fired := make(chan struct{})
	t := time.AfterFunc(closeTimeout, func() {
		defer close(fired)
		c.cut()
	})
	if c.tcp.WriteFrame(ws.OpClose, ws.NewCloseFrameBody(ws.StatusCode(code), reason), closeTimeout) != nil {
		c.cut() // the client cannot answer what it did not get (or it closed first: its frame was answered)
	}
	close(c.done) // the reader reads on only for the client's close frame
	<-c.readerRan
	if !t.Stop() {
		<-fired
	}
	c.cut()
}

// write sends one payload within the write timeout.
func (c *conn) write(frame []byte) error {
	return c.tcp.WriteFrame(ws.OpText, frame, c.h.cfg.WriteTimeout)
}

// loop sends gwire.Hello and then serves payloads, dispatches, the heartbeat deadline and the hub's
// requests until the connection must end.
func (c *conn) loop() wsframe.Close {
	h := c.h
	c.armHeartbeat()
	if c.write(wsframe.Control(gwire.OpHello, gwire.Hello{HeartbeatInterval: h.cfg.HeartbeatInterval.Milliseconds()})) != nil {
		return wsframe.Gone
	}
	for {
		select {
		case in := <-c.in:
			if in.stopped {
				return in.stop
			}
			if r, stop := c.handle(in.data); stop {
				return r
			}
		case <-c.wake:
			if c.answerDue.Swap(false) { // written now, with what the paced write was to take
				c.paceC = nil
				c.paced.Store(false)
				h.quiet.Done(c)
			} else if c.paceC != nil {
				continue // a paced write is due: this wake-up joins it
			} else if wait := c.pace(); wait > 0 {
				c.paceC = time.After(wait)
				c.paced.Store(true)
				h.quiet.Due(c)
				continue
			}
			if r, stop := c.flush(); stop {
				return r
			}
		case <-c.paceC:
			c.paceC = nil
			c.paced.Store(false) // before the flush: what is pushed after it wakes the loop again
			h.quiet.Done(c)
			if r, stop := c.flush(); stop {
				return r
			}
		case <-c.hbC:
			if !h.cfg.Clock.Now().Before(c.deadline) {
				return wsframe.Close{Code: gwire.CloseSessionTimedOut, Reason: "session timed out"}
			}
			c.hbStop()
			c.hbC, c.hbStop = clock.At(h.cfg.Clock, c.deadline)
		case r := <-c.kick:
			return r
		case <-h.closing:
			_ = c.write(wsframe.Control(gwire.OpReconnect, nil))
			return wsframe.Close{Code: gwire.CloseServiceRestart, Reason: "service restart"}
		}
	}
}

// armHeartbeat moves the heartbeat deadline to 1.5 intervals from now.
func (c *conn) armHeartbeat() {
	if c.hbStop != nil {
		c.hbStop()
	}
	c.deadline = c.h.cfg.Clock.Now().Add(c.h.timeout)
	c.hbC, c.hbStop = clock.At(c.h.cfg.Clock, c.deadline)
}

// allow counts a payload against the rate limit and tells whether it is within it.
func (c *conn) allow(now time.Time) bool {
	limit := c.h.cfg.RateLimit
	if len(c.rate) < limit {
		c.rate = append(c.rate, now)
		return true
	}
	if now.Sub(c.rate[c.rateNext]) < c.h.cfg.RateWindow {
		return false
	}
	c.rate[c.rateNext] = now
	c.rateNext = (c.rateNext + 1) % limit
	return true
}

func decodeError(what string) (wsframe.Close, bool) {
	return wsframe.Close{Code: gwire.CloseDecodeError, Reason: what}, true
}

// handle serves one client payload; stop says the connection must close with the result.
func (c *conn) handle(data []byte) (wsframe.Close, bool) {
	var p struct {
		Op *int            `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if !payload.DecodeObject(data, &p) || p.Op == nil {
		if !c.allow(c.h.cfg.Clock.Now()) {
			return wsframe.Close{Code: gwire.CloseRateLimited, Reason: "rate limited"}, true
		}
		return decodeError("decode error")
	}
	if *p.Op == gwire.OpRequest && c.h.cfg.Requests != nil { // the API's rate limits apply instead
		return c.request(p.D)
	}
	if !c.allow(c.h.cfg.Clock.Now()) {
		return wsframe.Close{Code: gwire.CloseRateLimited, Reason: "rate limited"}, true
	}
	limit := c.h.cfg.MaxPayloadBytes
	if *p.Op == gwire.OpVoiceKeys && c.h.cfg.Voice != nil {
		limit = voice.MaxKeysPayloadBytes
	}
	if len(data) > limit {
		return wsframe.Close{Code: gwire.CloseDecodeError, Reason: "payload too large"}, true
	}
	switch *p.Op {
	case gwire.OpRequestChannelInfo:
		if c.h.cfg.ChannelInfo != nil {
			return c.channelInfo(p.D)
		}
	case gwire.OpHeartbeat:
		var seq *int64
		if json.Unmarshal(payload.NullIfAbsent(p.D), &seq) != nil {
			return decodeError("heartbeat d must be a sequence number or null")
		}
		c.armHeartbeat()
		if c.write(wsframe.Control(gwire.OpHeartbeatACK, nil)) != nil {
			return wsframe.Gone, true
		}
		return wsframe.Close{}, false
	case gwire.OpIdentify:
		if c.authed {
			return wsframe.Close{Code: gwire.CloseAlreadyAuthenticated, Reason: "already authenticated"}, true
		}
		return c.identify(p.D)
	case gwire.OpResume:
		if c.authed {
			return wsframe.Close{Code: gwire.CloseAlreadyAuthenticated, Reason: "already authenticated"}, true
		}
		return c.resume(p.D)
	case gwire.OpPresenceUpdate:
		if !c.authed {
			return wsframe.Close{Code: gwire.CloseNotAuthenticated, Reason: "not authenticated"}, true
		}
		if !payload.IsObject(p.D) { // p.D is valid JSON: the whole payload decoded
			return decodeError("presence must be an object")
		}
		if f := c.h.cfg.OnPresence; f != nil {
			f(c.who, json.RawMessage(bytes.Clone(p.D)))
		}
		return wsframe.Close{}, false
	case gwire.OpVoiceStateUpdate, gwire.OpVoiceKeys:
		if c.h.cfg.Voice != nil {
			return c.voiceOp(*p.Op, p.D)
		}
	case gwire.OpRequestGuildMembers:
		if c.h.cfg.Members != nil {
			return c.requestMembers(p.D)
		}
	}
	return wsframe.Close{Code: gwire.CloseUnknownOpcode, Reason: "unknown opcode"}, true
}

// authenticate resolves a token from gwire.Identify or gwire.Resume; a zero code means success, and then
// the connection keeps the token for gwire.OpRequest.
// A token is a user's access token ("Bearer " optional) or a bot token ("Bot " optional: a bare
// token that is no access token is tried as a bot token, as client libraries send either).
func (c *conn) authenticate(token string) (Identity, wsframe.Close) {
	token = strings.TrimSpace(token)
	bearer, bot := true, true
	switch {
	case len(token) > 7 && strings.EqualFold(token[:7], "Bearer "):
		token, bot = strings.TrimSpace(token[7:]), false
	case len(token) > 4 && strings.EqualFold(token[:4], "Bot "):
		token, bearer = strings.TrimSpace(token[4:]), false
	}
	who, r := c.resolve(token, bearer, bot)
	if r.Code == 0 {
		c.token = "Bearer " + token
		if who.Bot {
			c.token = "Bot " + token
		}
	}
	return who, r
}

func (c *conn) resolve(token string, bearer, bot bool) (Identity, wsframe.Close) {
	failed := wsframe.Close{Code: gwire.CloseAuthenticationFailed, Reason: "authentication failed"}
	if token == "" {
		return Identity{}, failed
	}
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.WriteTimeout)
	defer cancel()
	var who Identity
	var ok bool
	var err error
	if bearer {
		who, ok, err = c.h.cfg.Tokens.ResolveBearer(ctx, token)
	}
	if bot && err == nil && !ok {
		if who, ok, err = c.h.cfg.Tokens.ResolveBot(ctx, token); ok {
			who.Bot = true
		}
	}
	switch {
	case err != nil:
		c.h.log.Warn("gateway: token lookup failed", "err", err)
		return Identity{}, wsframe.Close{Code: gwire.CloseUnknownError, Reason: "unknown error"}
	case !ok || who.UserID == 0 || (!who.Bot && !hasGatewayScope(who.Scopes)):
		return Identity{}, failed
	}
	who.Scopes = c.h.scopeSets.intern(who.Scopes)
	return who, wsframe.Close{}
}

// identify serves op 2: it checks the payload and the token, creates a session and sends READY.
func (c *conn) identify(d json.RawMessage) (wsframe.Close, bool) {
	h := c.h
	var id gwire.Identify
	switch {
	case !payload.DecodeObject(d, &id):
		return decodeError("invalid identify payload")
	case !payload.IsNull(id.Properties) && !payload.IsObject(id.Properties):
		return decodeError("properties must be an object")
	case !payload.IsNull(id.Presence) && !payload.IsObject(id.Presence):
		return decodeError("presence must be an object")
	case id.Shard != nil && (len(id.Shard) != 2 || id.Shard[1] < 1 || id.Shard[0] < 0 || id.Shard[0] >= id.Shard[1]):
		return wsframe.Close{Code: gwire.CloseInvalidShard, Reason: "invalid shard"}, true
	case id.Intents == nil || *id.Intents < 0 || uint64(*id.Intents)&^gwire.KnownIntents != 0:
		return wsframe.Close{Code: gwire.CloseInvalidIntents, Reason: "invalid intent(s)"}, true
	}
	intents := uint64(*id.Intents)
	who, fail := c.authenticate(id.Token)
	if fail.Code != 0 {
		return fail, true
	}
	if id.Capabilities != nil { // the session's hooks see them (rule GW-1)
		who.Capabilities = *id.Capabilities
	}
	if fail := c.allowIntents(who, intents); fail.Code != 0 {
		return fail, true
	}
	if who.Bot && !h.startSession(who.AppID, id.Shard) { // the day's starts are used up, or the bucket's
		return c.invalidSession()
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.WriteTimeout)
	user, err := h.cfg.Users.ReadyUser(ctx, who)
	app := gwire.ReadyApplication{ID: wire.Snowflake(who.AppID)}
	if err == nil && h.cfg.AppFlags != nil {
		var flags uint64
		flags, err = h.cfg.AppFlags(ctx, who.AppID)
		app.Flags, _ = wire.ApplicationFlags(flags)
	}
	var guilds []BotGuild
	if err == nil && who.Bot && h.cfg.Guilds != nil {
		guilds, err = h.cfg.Guilds(ctx, who, intents, id.Shard)
	}
	cancel()
	if err != nil {
		h.log.Warn("gateway: user lookup failed", "user_id", who.UserID, "err", err)
		return wsframe.Close{Code: gwire.CloseUnknownError, Reason: "unknown error"}, true
	}
	s := &session{id: newSessionID(), who: who, intents: intents, grant: who.Grant, since: h.cfg.Clock.Now()}
	if id.Capabilities != nil {
		s.capabilities = *id.Capabilities
	}
	listed := make([]json.RawMessage, 0, len(guilds))
	for _, g := range guilds {
		raw, _ := json.Marshal(wire.UnavailableGuild{ID: wire.Snowflake(g.ID), Unavailable: true}) // always encodes
		listed = append(listed, raw)
	}
	var ready []byte
	creates, err := encodeCreates(guilds)
	if err == nil {
		ready, err = json.Marshal(gwire.Ready{V: gwire.APIVersion, User: user, Guilds: listed, SessionID: s.id,
			ResumeGatewayURL: c.resumeURL, Application: app, Shard: id.Shard,
			SdkppFeatures: h.features()})
	}
	if err == nil && h.cfg.ReadyExtra != nil {
		ready, err = h.readyExtra(who, ready)
	}
	if err != nil {
		h.log.Warn("gateway: READY failed", "user_id", who.UserID, "err", err)
		return wsframe.Close{Code: gwire.CloseUnknownError, Reason: "unknown error"}, true
	}
	if id.Compress {
		c.tcp.Compress(wsframe.CompressPayload)
	}
	c.flushMu.Lock()
	h.mu.Lock()
	first := h.liveLocked(who.AppID, who.UserID) == 0
	s.conn, s.grant = c, who.Grant
	if h.cfg.Bus != nil { // numbered after what was read from the bus so far (busmsg.Shift)
		s.SetSeq(int64(h.busSeq) << busmsg.Shift)
	}
	c.sess, c.sent = s, s.Seq()
	s.Push([]byte(`"`+gwire.EventReady+`"`), ready, h.cfg.ReplayLimit) // sequence number 1 on a node alone
	for _, d := range creates {
		s.Push([]byte(`"`+gwire.EventGuildCreate+`"`), d, h.cfg.ReplayLimit)
	}
	h.addLocked(s)
	h.sweepLocked(h.cfg.Clock.Now())
	note := noteOf(s, busmsg.NoteLive)
	h.mu.Unlock()
	c.flushMu.Unlock()
	h.note(note)
	c.authed, c.who = true, who
	c.requester.Store(&requester{token: c.token, sess: s})
	if first {
		c.goOnline(who)
	}
	h.stats.Identifies.Add(1)
	h.log.Debug("gateway: identified", "user_id", who.UserID, "app_id", who.AppID)
	if r, stop := c.flush(); stop {
		return r, true
	}
	if h.cfg.OnSession != nil {
		h.cfg.OnSession(who)
	}
	if !payload.IsNull(id.Presence) && h.cfg.OnPresence != nil {
		h.cfg.OnPresence(who, json.RawMessage(bytes.Clone(id.Presence)))
	}
	return wsframe.Close{}, false
}

// resume serves op 6: it re-attaches a session, replays what the client missed and sends
// RESUMED, or answers Invalid Session.
func (c *conn) resume(d json.RawMessage) (wsframe.Close, bool) {
	h := c.h
	var rs gwire.Resume
	if !payload.DecodeObject(d, &rs) || rs.Seq == nil {
		return decodeError("invalid resume payload")
	}
	if *rs.Seq < 0 {
		return wsframe.Close{Code: gwire.CloseInvalidSeq, Reason: "invalid seq"}, true
	}
	who, fail := c.authenticate(rs.Token)
	if fail.Code != 0 {
		return fail, true
	}
	intents, remote, ok := h.sessionIntents(rs.SessionID, who)
	if ok {
		if fail := c.allowIntents(who, intents); fail.Code != 0 {
			if fail.Code == gwire.CloseDisallowedIntents && !remote {
				h.endDetached(rs.SessionID) // final: nothing is left to resume
			}
			return fail, true
		}
	}
	var a attached
	var r wsframe.Close
	var stop bool
	if remote { // another node ran it: what it missed is read again from the bus
		a, r, stop = c.resumeRemote(rs.SessionID, *rs.Seq, who)
	} else {
		a, r, stop = c.attach(rs.SessionID, *rs.Seq, who)
	}
	if a.first { // even if the replay's write failed: finish reports the user gone again
		c.goOnline(who)
	}
	if stop || a.s == nil {
		return r, stop
	}
	h.stats.Resumes.Add(1)
	h.stats.Replayed.Add(uint64(a.replayed))
	h.log.Debug("gateway: resumed", "user_id", who.UserID, "app_id", who.AppID, "replayed", a.replayed)
	if h.cfg.OnSession != nil {
		h.cfg.OnSession(who)
	}
	return c.flush()
}

// allowIntents asks Config.AllowIntents whether who may use intents: no close when it may,
// gwire.CloseDisallowedIntents when it may not, gwire.CloseUnknownError when the answer failed.
func (c *conn) allowIntents(who Identity, intents uint64) wsframe.Close {
	h := c.h
	if h.cfg.AllowIntents == nil {
		return wsframe.Close{}
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.WriteTimeout)
	ok, err := h.cfg.AllowIntents(ctx, who, intents)
	cancel()
	switch {
	case err != nil:
		h.log.Warn("gateway: intents check failed", "user_id", who.UserID, "app_id", who.AppID, "err", err)
		return wsframe.Close{Code: gwire.CloseUnknownError, Reason: "unknown error"}
	case !ok:
		return wsframe.Close{Code: gwire.CloseDisallowedIntents, Reason: "disallowed intent(s)"}
	}
	return wsframe.Close{}
}

// sessionIntents returns the intents of the session a gwire.Resume by who names, if it exists and
// is who's, and whether another node ran it (remote: this node knows it from the bus); attach
// decides what happens to a session that does not exist.
func (h *Hub) sessionIntents(sessionID string, who Identity) (intents uint64, remote, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[sessionID]; s != nil {
		return s.intents, false, s.who.UserID == who.UserID && s.who.AppID == who.AppID
	}
	if n := h.remote[sessionID]; n != nil && n.Who.UserID == who.UserID && n.Who.AppID == who.AppID {
		return n.Intents, true, true
	}
	return 0, false, false
}

// endDetached removes the session unless a connection holds it.
func (h *Hub) endDetached(sessionID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[sessionID]; s != nil && s.conn == nil {
		h.removeLocked(s)
	}
}

// attached is a session a gwire.Resume re-attached.
type attached struct {
	s        *session
	replayed int  // dispatches replayed
	first    bool // the user's first live session of the application
}

// attach re-attaches the session to this connection and writes the replay and RESUMED, holding
// flushMu until they are written so that no dispatcher's write (flushNow) goes before them. It
// returns the session, or none after answering Invalid Session, or a close.
func (c *conn) attach(sessionID string, seq int64, who Identity) (attached, wsframe.Close, bool) {
	h := c.h
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	h.mu.Lock()
	now := h.cfg.Clock.Now()
	s := h.sessions[sessionID]
	if s == nil || s.who.UserID != who.UserID || s.who.AppID != who.AppID || h.expireLocked(s, now) {
		h.mu.Unlock()
		r, stop := c.invalidSession()
		return attached{}, r, stop
	}
	if seq > s.Seq() {
		h.mu.Unlock()
		return attached{}, wsframe.Close{Code: gwire.CloseInvalidSeq, Reason: "invalid seq"}, true
	}
	old := s.conn
	replay, ok := s.After(seq)
	if !ok { // the client missed more than the buffer holds
		h.removeLocked(s)
		h.mu.Unlock()
		if old != nil {
			old.kickWith(wsframe.Close{Code: gwire.CloseUnknownError, Reason: "session invalidated"})
		}
		r, stop := c.invalidSession()
		return attached{}, r, stop
	}
	// RESUMED may push the oldest missed dispatch out of the buffer: the replay is taken first.
	pending := append(replay, s.Push([]byte(`"`+gwire.EventResumed+`"`), []byte("{}"), h.cfg.ReplayLimit))
	first := h.liveLocked(who.AppID, who.UserID) == 0
	s.conn, s.grant = c, who.Grant
	c.sess, c.sent = s, s.Seq()
	h.mu.Unlock()
	if old != nil {
		old.kickWith(wsframe.Close{Code: gwire.CloseUnknownError, Reason: "session resumed elsewhere"})
		h.voiceGone(Session{Identity: s.who, ID: s.id}) // the call was the old connection's
	}
	c.authed, c.who = true, s.who
	c.requester.Store(&requester{token: c.token, sess: s})
	if !c.writeAll(pending) {
		return attached{first: first}, wsframe.Gone, true
	}
	h.mu.Lock()
	note := noteOf(s, busmsg.NoteLive)
	h.mu.Unlock()
	h.note(note)
	return attached{s: s, replayed: len(replay), first: first}, wsframe.Close{}, false
}

// readyExtra adds Config.ReadyExtra's fields to the encoded READY object.
func (h *Hub) readyExtra(who Identity, ready []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.WriteTimeout)
	extra, err := h.cfg.ReadyExtra(ctx, who)
	cancel()
	if err != nil || len(extra) == 0 {
		return ready, err
	}
	return payload.AddFields(ready, extra)
}

// invalidSession sends op 9 with d false; the connection stays open for a new gwire.Identify.
func (c *conn) invalidSession() (wsframe.Close, bool) {
	if c.write(wsframe.Control(gwire.OpInvalidSession, false)) != nil {
		return wsframe.Gone, true
	}
	return wsframe.Close{}, false
}

// flush writes the session's dispatches this connection has not taken yet, in order.
func (c *conn) flush() (wsframe.Close, bool) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	pending, ok := c.take()
	if !ok { // the client fell more than ReplayLimit dispatches behind
		return wsframe.Close{Code: gwire.CloseUnknownError, Reason: "too far behind"}, true
	}
	if !c.writeAll(pending) {
		return wsframe.Gone, true
	}
	return wsframe.Close{}, false
}

// flushNow is flush done by a dispatcher that has just pushed to the connection's session: it
// writes what waits without waiting for the socket (wsframe.Conn.WriteNow), and wakes the loop for
// what it cannot write now. It leaves everything to the loop while the loop (or another
// dispatcher) is writing, or while writes are paced; a request's answer is never paced (a client
// with requests in flight waits for it), and the loop writes it at once (answerDue).
func (c *conn) flushNow(answer bool) {
	if !c.tcp.CanWriteNow() || !answer && c.h.rate.Busy() || !c.flushMu.TryLock() {
		c.signalFor(answer)
		return
	}
	defer c.flushMu.Unlock()
	if !answer && pace.Wait(false, c.backlog, c.lastWrite, time.Now(), c.h.cfg.busyPace) > 0 {
		c.signal() // the loop paces it
		return
	}
	pending, ok := c.take()
	switch {
	case !ok:
		c.signal() // too far behind: the loop closes the connection
	case len(pending) > 0:
		c.lastWrite = time.Now()
		c.backlog = c.backlog && answer || !answer && len(pending) > 1
		if kept, err := c.tcp.WriteNow(pending); kept || err != nil {
			c.signalFor(answer) // the loop writes the rest, or finds the connection broken
		}
	}
}

// signalFor is signal for a dispatch flushNow did not write: for an answer, at once, even while
// a paced write is due (answerDue).
func (c *conn) signalFor(answer bool) {
	if answer {
		c.answerDue.Store(true)
	}
	c.signal()
}

// take returns the session's dispatches this connection has not taken yet and marks them taken;
// false when some of them are no longer held (the client fell more than ReplayLimit behind).
// None when the connection has no session. Call with flushMu held.
func (c *conn) take() ([]wsframe.Dispatch, bool) {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	s := c.sess
	if s == nil || s.conn != c {
		return nil, true
	}
	pending, ok := s.AppendAfter(c.taken[:0], c.sent)
	if ok && len(pending) > 0 {
		c.sent = pending[len(pending)-1].Seq
	}
	c.taken = replay.Reusable(pending)
	return pending, ok
}

// writeAll writes the dispatches in order; false means the connection is gone. They leave in one
// write to the TCP connection, bounded by the write timeout as a deadline on it (the frames
// are only copied while held, so they need no context of their own). What flushNow left
// unwritten goes first. Call with flushMu held.
func (c *conn) writeAll(list []wsframe.Dispatch) bool {
	if len(list) == 0 && !c.tcp.Keeps() {
		return true
	}
	c.lastWrite, c.backlog = time.Now(), len(list) > 1
	c.tcp.Hold(c.h.cfg.WriteTimeout)
	for _, e := range list {
		if c.tcp.WriteDispatch(e) != nil {
			c.tcp.Release()
			return false
		}
	}
	return c.tcp.Release() == nil
}
