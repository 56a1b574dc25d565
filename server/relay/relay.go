// Package relay is the service's UDP media relay for voice calls: it forwards each participant's
// packets to every other bound participant of the same call, unchanged and without decoding
// (the payloads are sealed end to end; the relay holds no key). The packet format is package
// wire/voice's.
//
// Signaling (package voice of the service) opens a flow for each participant that joins a call
// (Open), which gives the participant's SSRC and a fresh flow token, and removes it when the
// participant leaves (Remove): from then on nothing reaches that participant's address.
//
// A client binds its flow by sending a bind packet with the token from its side, so that it
// works behind NAT: the relay learns the client's address from it and answers with a bind reply.
// A bind from another address with the same token moves the flow there (NAT rebinding, a new
// network). Any packet of a bound flow keeps it alive; keepalives are echoed. A flow that sends
// nothing for Config.FlowTimeout (by the service's clock) is unbound and must bind again; its
// token stays valid while the participant is in the call.
//
// Media and loss reports from a bound address go to every other bound participant of its call,
// the whole packet as received. Packets are refused, dropped and counted (Stats) when they are
// malformed (short, too long, another version, an unknown type, a bad payload size), come from
// an address that is not bound, carry another participant's SSRC, bind with an unknown token,
// or exceed the flow's rate (a token bucket of Config.Rate packets a second, Config.Burst deep).
// The relay answers only binds and keepalives, with at most the bytes it received, so it cannot
// be used to amplify traffic.
//
// On Linux the relay reads and writes in batches (recvmmsg and sendmmsg, through
// golang.org/x/net's ipv4 and ipv6 PacketConn ReadBatch and WriteBatch); elsewhere it reads and
// writes one packet per system call. One goroutine serves the socket and another expires flows;
// Close stops both and waits for them.
package relay

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/wire/voice"
)

// DefaultBatch is how many packets one system call reads at most (Linux).
const DefaultBatch = 64

// Config configures a Relay. Zero values take the defaults.
type Config struct {
	// Addr is the UDP address to listen on. Default "127.0.0.1:0" (a free port on loopback).
	Addr string
	// Clock times flows out and refills their rate limits. Default the machine's.
	Clock clock.Clock
	// FlowTimeout is how long a bound flow lives without a packet. Default voice.FlowTimeout.
	FlowTimeout time.Duration
	// Rate and Burst are each flow's rate limit in packets. Defaults voice.MaxPacketsPerSecond
	// and voice.MaxPacketBurst.
	Rate, Burst int
	// Batch is how many packets one system call reads at most (Linux). Default DefaultBatch.
	Batch int
	// Rand makes flow tokens. Default crypto/rand.
	Rand io.Reader
	// Logger default slog.Default().
	Logger *slog.Logger
}

// Relay is a running UDP relay. Its methods are safe for concurrent use.
type Relay struct {
	cfg  Config
	conn *net.UDPConn
	log  *slog.Logger

	mu     sync.Mutex
	closed bool
	tokens map[voice.Token]*flow
	byAddr map[netip.AddrPort]*flow
	calls  map[uint64]*call

	stats counters

	closing chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// flow is one participant's flow. Every field is guarded by Relay.mu.
type flow struct {
	token voice.Token
	call  *call
	ssrc  uint32

	bound    bool
	addr     netip.AddrPort
	udpAddr  *net.UDPAddr // addr, for writing
	lastSeen time.Time    // the last packet from addr, by the relay's clock

	tokensLeft float64 // the rate limit's bucket
	refilled   time.Time
}

// call is the flows of one call, in the order they were opened.
type call struct {
	id       uint64
	flows    []*flow
	nextSSRC uint32
}

// Flow is what signaling gives a participant that joins a call: its SSRC and its flow token.
type Flow struct {
	Token voice.Token
	SSRC  uint32
}

// New listens on cfg.Addr and starts serving.
func New(cfg Config) (*Relay, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.FlowTimeout <= 0 {
		cfg.FlowTimeout = voice.FlowTimeout
	}
	if cfg.Rate <= 0 {
		cfg.Rate = voice.MaxPacketsPerSecond
	}
	if cfg.Burst <= 0 {
		cfg.Burst = voice.MaxPacketBurst
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ua, err := net.ResolveUDPAddr("udp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("relay: address %q: %w", cfg.Addr, err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("relay: listen: %w", err)
	}
	r := &Relay{cfg: cfg, conn: conn, log: cfg.Logger, tokens: map[voice.Token]*flow{},
		byAddr: map[netip.AddrPort]*flow{}, calls: map[uint64]*call{}, closing: make(chan struct{})}
	srv, err := newServer(r)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("relay: %w", err)
	}
	r.wg.Add(2)
	go func() { // owned by the relay: Close waits for it
		defer r.wg.Done()
		srv.serve()
	}()
	go func() { // owned by the relay: Close waits for it
		defer r.wg.Done()
		r.janitor()
	}()
	return r, nil
}

// Addr is the address the relay listens on.
func (r *Relay) Addr() netip.AddrPort {
	return r.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Close stops the relay and waits for its goroutines; every flow is gone.
func (r *Relay) Close() error {
	var err error
	r.once.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.closing)
		r.mu.Unlock()
		err = r.conn.Close()
		r.wg.Wait()
		r.mu.Lock()
		clear(r.tokens)
		clear(r.byAddr)
		clear(r.calls)
		r.mu.Unlock()
	})
	return err
}

// ErrClosed is Open's error after Close.
var ErrClosed = errors.New("relay: closed")

// Open adds a flow to call callID (any id that names the call, the same for all its
// participants) and returns its SSRC, unique in the call and never reused while the call has
// flows, and its token, fresh from Config.Rand.
func (r *Relay) Open(callID uint64) (Flow, error) {
	var tok voice.Token
	if _, err := io.ReadFull(r.cfg.Rand, tok[:]); err != nil {
		return Flow{}, fmt.Errorf("relay: flow token: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Flow{}, ErrClosed
	}
	if r.tokens[tok] != nil {
		return Flow{}, errors.New("relay: flow token collision")
	}
	c := r.calls[callID]
	if c == nil {
		c = &call{id: callID}
		r.calls[callID] = c
	}
	c.nextSSRC++
	f := &flow{token: tok, call: c, ssrc: c.nextSSRC, tokensLeft: float64(r.cfg.Burst)}
	c.flows = append(c.flows, f)
	r.tokens[tok] = f
	return Flow{Token: tok, SSRC: f.ssrc}, nil
}

// Remove ends the flow of token at once: nothing more is forwarded to or from it. Unknown
// tokens are ignored.
func (r *Relay) Remove(token voice.Token) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.tokens[token]
	if f == nil {
		return
	}
	r.unbindLocked(f)
	delete(r.tokens, token)
	c := f.call
	if i := slices.Index(c.flows, f); i >= 0 {
		c.flows = slices.Delete(c.flows, i, i+1)
	}
	if len(c.flows) == 0 {
		delete(r.calls, c.id)
	}
}

// unbindLocked forgets the flow's address.
func (r *Relay) unbindLocked(f *flow) {
	if f.bound && r.byAddr[f.addr] == f {
		delete(r.byAddr, f.addr)
	}
	f.bound, f.addr, f.udpAddr = false, netip.AddrPort{}, nil
}

// expiredLocked tells whether a bound flow's time has passed; it unbinds it then.
func (r *Relay) expiredLocked(f *flow, now time.Time) bool {
	if now.Sub(f.lastSeen) <= r.cfg.FlowTimeout {
		return false
	}
	r.unbindLocked(f)
	r.stats.expired.Add(1)
	return true
}

// janitor unbinds expired flows every half FlowTimeout of the relay's clock, so that the
// addresses of clients that went away are forgotten even when no packet comes.
func (r *Relay) janitor() {
	for {
		ch, stop := clock.At(r.cfg.Clock, r.cfg.Clock.Now().Add(r.cfg.FlowTimeout/2))
		select {
		case <-r.closing:
			stop()
			return
		case now := <-ch:
			r.mu.Lock()
			for _, f := range r.byAddr {
				r.expiredLocked(f, now)
			}
			r.mu.Unlock()
		}
	}
}

// allow takes one packet from the flow's rate limit.
func (f *flow) allow(now time.Time, rate, burst int) bool {
	if d := now.Sub(f.refilled); d > 0 {
		f.tokensLeft = min(float64(burst), f.tokensLeft+d.Seconds()*float64(rate))
		f.refilled = now
	} else if f.refilled.IsZero() {
		f.refilled = now
	}
	if f.tokensLeft < 1 {
		return false
	}
	f.tokensLeft--
	return true
}

// outbox collects the packets one batch sends: each is a slice of a received packet.
type outbox struct {
	pkts  [][]byte
	addrs []*net.UDPAddr
	aps   []netip.AddrPort
}

func (o *outbox) reset() {
	clear(o.pkts) // let the flows' addresses go
	clear(o.addrs)
	o.pkts, o.addrs, o.aps = o.pkts[:0], o.addrs[:0], o.aps[:0]
}

func (o *outbox) add(pkt []byte, f *flow) {
	o.pkts = append(o.pkts, pkt)
	o.addrs = append(o.addrs, f.udpAddr)
	o.aps = append(o.aps, f.addr)
}

// handleLocked serves one received packet: it answers binds and keepalives and forwards media
// and loss reports, appending what to send to out. pkt may be changed in place (replies are
// made from it). from is the sender's address; ua the same as a *net.UDPAddr when the reader
// has one (nil: made at bind).
func (r *Relay) handleLocked(pkt []byte, from netip.AddrPort, ua *net.UDPAddr, now time.Time, out *outbox) {
	st := &r.stats
	st.received.Add(1)
	st.receivedBytes.Add(uint64(len(pkt)))
	h, payload, err := voice.Parse(pkt)
	switch {
	case errors.Is(err, voice.ErrTooLong):
		st.tooLong.Add(1)
		return
	case err != nil:
		st.malformed.Add(1)
		return
	case h.Flags&voice.FlagReply != 0 && h.Type != voice.TypeMedia && h.Type != voice.TypeLossReport:
		st.malformed.Add(1) // only the relay replies
		return
	}
	if h.Type == voice.TypeBind {
		r.bindLocked(pkt, h, voice.Token(payload), from, ua, now, out)
		return
	}
	f := r.byAddr[from]
	switch {
	case f == nil:
		st.unbound.Add(1)
		return
	case r.expiredLocked(f, now):
		st.unbound.Add(1)
		return
	case h.SSRC != f.ssrc:
		st.spoofed.Add(1)
		return
	case !f.allow(now, r.cfg.Rate, r.cfg.Burst):
		st.rateLimited.Add(1)
		return
	}
	f.lastSeen = now
	if h.Type == voice.TypeKeepalive {
		pkt[2] |= byte(voice.FlagReply)
		out.add(pkt, f)
		st.replies.Add(1)
		return
	}
	n := 0
	for _, g := range f.call.flows {
		if g != f && g.bound && !r.expiredLocked(g, now) {
			out.add(pkt, g)
			n++
		}
	}
	st.forwarded.Add(uint64(n))
	st.forwardedBytes.Add(uint64(n * len(pkt)))
}

// bindLocked serves a bind packet.
func (r *Relay) bindLocked(pkt []byte, h voice.Header, tok voice.Token, from netip.AddrPort, ua *net.UDPAddr, now time.Time, out *outbox) {
	st := &r.stats
	f := r.tokens[tok]
	if f == nil || f.ssrc != h.SSRC {
		st.badToken.Add(1)
		return
	}
	if !f.allow(now, r.cfg.Rate, r.cfg.Burst) {
		st.rateLimited.Add(1)
		return
	}
	if !f.bound || f.addr != from {
		if f.bound {
			st.rebinds.Add(1)
		}
		r.unbindLocked(f)
		if other := r.byAddr[from]; other != nil { // the address was another flow's (a client that joined again)
			r.unbindLocked(other)
		}
		if ua == nil {
			ua = net.UDPAddrFromAddrPort(from)
		}
		f.bound, f.addr, f.udpAddr = true, from, ua
		r.byAddr[from] = f
		st.binds.Add(1)
	}
	f.lastSeen = now
	pkt[2] |= byte(voice.FlagReply)
	out.add(pkt[:voice.HeaderBytes], f)
	st.replies.Add(1)
}

// unmap gives IPv4 addresses one form (not IPv4-mapped IPv6), so that map keys match.
func unmap(ap netip.AddrPort) netip.AddrPort {
	if ap.Addr().Is4In6() {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return ap
}

// Stats are the relay's counters since it started.
type Stats struct {
	Received  uint64 // packets read
	Forwarded uint64 // packets sent on to other participants (one per recipient)
	Replies   uint64 // bind replies and keepalive echoes sent
	Binds     uint64 // flows bound to an address (first binds and rebinds)
	Rebinds   uint64 // binds that moved a bound flow to a new address
	Expired   uint64 // flows unbound after FlowTimeout without a packet
	// Dropped packets, by reason.
	Malformed   uint64 // short, another version, unknown type or flags, bad payload size, a reply sent to the relay
	TooLong     uint64 // longer than voice.MaxPacketBytes
	Unbound     uint64 // from an address no flow is bound to (or whose flow expired)
	BadToken    uint64 // binds with an unknown token, or another participant's SSRC
	Spoofed     uint64 // from a bound address with another participant's SSRC
	RateLimited uint64 // over the flow's rate limit
	SendErrors  uint64 // sends that failed

	// ReceivedBytes and ForwardedBytes are the bytes of the packets received and forwarded.
	ReceivedBytes, ForwardedBytes uint64
	// Flows are the flows open now (BoundFlows of them bound to an address), Calls their calls.
	Flows, BoundFlows, Calls int
}

// Dropped is the sum of the packets dropped for any reason.
func (s Stats) Dropped() uint64 {
	return s.Malformed + s.TooLong + s.Unbound + s.BadToken + s.Spoofed + s.RateLimited
}

type counters struct {
	received, forwarded, replies, binds, rebinds, expired                   atomic.Uint64
	receivedBytes, forwardedBytes                                           atomic.Uint64
	malformed, tooLong, unbound, badToken, spoofed, rateLimited, sendErrors atomic.Uint64
}

// Stats returns the counters, and the flows and calls open now.
func (r *Relay) Stats() Stats {
	c := &r.stats
	st := Stats{Received: c.received.Load(), Forwarded: c.forwarded.Load(), Replies: c.replies.Load(),
		ReceivedBytes: c.receivedBytes.Load(), ForwardedBytes: c.forwardedBytes.Load(),
		Binds: c.binds.Load(), Rebinds: c.rebinds.Load(), Expired: c.expired.Load(), Malformed: c.malformed.Load(),
		TooLong: c.tooLong.Load(), Unbound: c.unbound.Load(), BadToken: c.badToken.Load(), Spoofed: c.spoofed.Load(),
		RateLimited: c.rateLimited.Load(), SendErrors: c.sendErrors.Load()}
	r.mu.Lock()
	st.Flows, st.Calls = len(r.tokens), len(r.calls)
	for _, f := range r.tokens {
		if f.bound {
			st.BoundFlows++
		}
	}
	r.mu.Unlock()
	return st
}

// isClosed tells whether Close has begun (a read error then ends the reader).
func (r *Relay) isClosed() bool {
	select {
	case <-r.closing:
		return true
	default:
		return false
	}
}
