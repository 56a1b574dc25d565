package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"

	"sdkpp/server/gateway"
	"sdkpp/server/guildvoice"
	"sdkpp/server/relay"
	"sdkpp/server/voice"
	vwire "sdkpp/wire/voice"
)

// startRelay starts the voice relay and prepares the calls (voice signaling); listen is the
// HTTP listener's address, whose host the relay takes by default.
func (s *Server) startRelay(listen string) error {
	addr := s.cfg.VoiceAddr
	if addr == "" {
		host, _, err := net.SplitHostPort(listen)
		if err != nil {
			return fmt.Errorf("server: voice relay address: %w", err)
		}
		addr = net.JoinHostPort(host, "0")
	}
	r, err := relay.New(relay.Config{Addr: addr, Clock: s.cfg.Clock, Logger: s.log.With("component", "relay")})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.relay = r
	s.voice = &voice.Service{Members: s.lobbies, Relay: r, Endpoint: s.voiceEndpoint(r.Addr()),
		Logger: s.log.With("component", "voice")}
	s.log.Info("voice relay listening", "addr", r.Addr().String(), "endpoint", s.voice.Endpoint)
	s.voiceCalls = s.voice
	if s.bus != nil { // each call relayed by one node, whichever nodes its players are on
		ctx, cancel := context.WithTimeout(context.Background(), busCatchUp)
		defer cancel()
		claims, err := s.bus.Claims(ctx, "voice_calls", voice.ClaimTTL)
		if err != nil {
			r.Close()
			return fmt.Errorf("server: %w", err)
		}
		s.voiceCluster = &voice.Cluster{Service: s.voice, Claims: claims, Node: s.cfg.NodeID, Clock: s.cfg.Clock,
			Logger: s.log.With("component", "voice")}
		s.voiceCalls = s.voiceCluster
	}
	return nil
}

// lobbyCalls is what the lobbies' events and the gateway tell the lobbies' calls: a node
// alone's voice.Service, or a cluster node's voice.Cluster.
type lobbyCalls interface {
	gateway.Voice
	MemberLeft(lobbyID, userID uint64)
	LobbyGone(lobbyID uint64)
}

// voiceEndpoint is the relay's address as clients reach it: Config.VoiceEndpoint, or the
// relay's own address, with the public URL's host in place of an unspecified one.
func (s *Server) voiceEndpoint(bound netip.AddrPort) string {
	if s.cfg.VoiceEndpoint != "" {
		return s.cfg.VoiceEndpoint
	}
	if !bound.Addr().IsUnspecified() {
		return bound.String()
	}
	host := "127.0.0.1"
	if u, err := url.Parse(s.url); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return net.JoinHostPort(host, fmt.Sprint(bound.Port()))
}

// voiceRouter serves the gateway's voice payloads: a Voice State Update with a guild_id goes to
// the guilds' voice channels, every other one, and Voice Keys, to the lobbies' calls; a session
// that goes leaves both.
type voiceRouter struct {
	calls  lobbyCalls
	guilds *guildvoice.Service
}

func (v voiceRouter) VoiceStateUpdate(s gateway.Session, u vwire.StateUpdate) {
	if u.GuildID != nil {
		v.guilds.Update(s, u)
		return
	}
	v.calls.VoiceStateUpdate(s, u)
}

func (v voiceRouter) VoiceKeys(s gateway.Session, k vwire.Keys) { v.calls.VoiceKeys(s, k) }

func (v voiceRouter) VoiceSessionGone(s gateway.Session) {
	v.calls.VoiceSessionGone(s)
	v.guilds.SessionGone(s)
}

// Calls is the service's voice calls (after Start).
func (s *Server) Calls() *voice.Service { return s.voice }
