// Package voice keeps the service's voice calls: the signaling side of package wire/voice. Each
// lobby has at most one call; its participants are gateway sessions of the lobby's members.
//
// The gateway hub decodes and checks the payloads (package gateway's Config.Voice) and calls
// the Service: Voice State Update (op 4) joins, moves, updates and leaves; Voice Keys (op 101)
// forwards sealed keys, unread, to their recipients' sessions. The Service answers with
// VOICE_STATE_UPDATE to the call's participants, VOICE_SERVER_UPDATE (the relay's endpoint and a
// fresh flow token from package relay) to a joining session, and SDKPP_VOICE_ERROR for a
// refusal (codes in wire/voice). A participant leaves when it asks, when it joins another call
// (a user is in at most one call per game: a join from another session moves the user), when it
// leaves the lobby or the lobby goes (MemberLeft, LobbyGone, which the service calls from its
// lobby events), and when its gateway connection ends (VoiceSessionGone). Its flow token stops
// working at once.
//
// On a node alone the gateway calls the Service. On a cluster it calls the node's Cluster, which
// routes each call's signaling to the one node that relays it, whose Service keeps the call.
package voice

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"sdkpp/server/gateway"
	"sdkpp/server/relay"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	vwire "sdkpp/wire/voice"
)

// Hub delivers dispatches to gateway sessions (package gateway's Hub).
type Hub interface {
	DispatchSession(sessionID, event string, data any) bool
}

// Members tells whether a user is a member of a lobby (package lobbies' Service.CheckMember):
// nil, a *wire.APIError (10031 unknown lobby, 50001 not a member), or another error.
type Members interface {
	CheckMember(ctx context.Context, appID, lobbyID, userID uint64) error
}

// Relay opens and removes media flows (package relay's Relay).
type Relay interface {
	Open(callID uint64) (relay.Flow, error)
	Remove(token vwire.Token)
}

// checkTimeout bounds one membership check.
const checkTimeout = 5 * time.Second

// Service keeps the calls. Set its fields before the hub serves; it is safe for concurrent use.
type Service struct {
	Hub     Hub
	Members Members
	Relay   Relay
	// Endpoint is the relay's UDP address as clients reach it, host:port (VOICE_SERVER_UPDATE).
	Endpoint string
	Logger   *slog.Logger
	// OnEnded, when set, is told of each call whose last participant left, with the service's
	// lock held: it must not call the service.
	OnEnded func(lobbyID uint64)

	mu        sync.Mutex
	calls     map[uint64]*call         // by lobby id
	bySession map[string]*participant  // by gateway session id
	byUser    map[userKey]*participant // a user is in one call per application
}

type userKey struct{ appID, userID uint64 }

// call is one lobby's call.
type call struct {
	lobbyID uint64
	parts   []*participant // in join order
}

// participant is one session in a call.
type participant struct {
	sess  gateway.Session
	call  *call
	state vwire.State
	token vwire.Token
}

// Stats returns how many calls there are and how many participants they have.
func (s *Service) Stats() (calls, participants int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls), len(s.bySession)
}

func (s *Service) init() {
	if s.calls == nil {
		s.calls, s.bySession, s.byUser = map[uint64]*call{}, map[string]*participant{}, map[userKey]*participant{}
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// VoiceStateUpdate serves op 4 (gateway.Voice) for lobby calls: the service hands an op 4 with a
// guild_id to package guildvoice instead, and one that reaches this is refused as of an unknown
// guild.
func (s *Service) VoiceStateUpdate(sess gateway.Session, u vwire.StateUpdate) {
	if u.ChannelID == nil {
		s.Leave(sess)
		return
	}
	if lobbyID, ok := s.Admit(sess, u); ok {
		s.Join(sess, lobbyID, u)
	}
}

// Leave takes the session out of its call, if it is in one (an op 4 with channel_id null).
func (s *Service) Leave(sess gateway.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if p := s.bySession[sess.ID]; p != nil {
		s.leaveLocked(p)
	}
}

// Admit checks an op 4 that names a lobby: it must carry the participant's public keys and no
// guild_id, and the session's user must be a member of the lobby. It returns the lobby's id, or
// false after refusing the session.
func (s *Service) Admit(sess gateway.Session, u vwire.StateUpdate) (uint64, bool) {
	switch {
	case u.ChannelID == nil:
		return 0, false
	case u.GuildID != nil:
		s.refuse(sess, u.ChannelID, vwire.CodeUnknownGuild, "Unknown Guild: a lobby call has no guild")
		return 0, false
	case len(u.E2EEPublicKeys) == 0:
		s.refuse(sess, u.ChannelID, vwire.CodeE2EERequired, "E2EE required: a Voice State Update must carry the participant's public keys")
		return 0, false
	}
	lobbyID := uint64(*u.ChannelID)
	return lobbyID, s.member(sess, lobbyID, u.ChannelID)
}

// Join puts an admitted session (Admit) in the lobby's call, or updates its state there.
func (s *Service) Join(sess gateway.Session, lobbyID uint64, u vwire.StateUpdate) {
	if !s.join(sess, lobbyID, u) {
		return
	}
	// The user may have left the lobby between the check and the join, and its removal event
	// may have come before the join: check again now that MemberLeft would find it.
	if !s.member(sess, lobbyID, nil) {
		s.mu.Lock()
		if p := s.bySession[sess.ID]; p != nil && p.call.lobbyID == lobbyID {
			s.leaveLocked(p)
		}
		s.mu.Unlock()
	}
}

// Evict takes out of their calls the session and the other session of its user in its game:
// the session joins a call that another node relays (package voice's Cluster), and a user is
// in one call per game.
func (s *Service) Evict(sess gateway.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if p := s.bySession[sess.ID]; p != nil {
		s.leaveLocked(p)
	}
	if p := s.byUser[userKey{sess.AppID, sess.UserID}]; p != nil {
		s.leaveLocked(p)
	}
}

// Prune takes out of their calls the participants whose session connected does not keep (its
// connection ended where the service was not told: on a node that died).
func (s *Service) Prune(connected func(sessionID string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	for id, p := range s.bySession {
		if !connected(id) {
			s.leaveLocked(p)
		}
	}
}

// HasCall tells whether the lobby has a call here.
func (s *Service) HasCall(lobbyID uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[lobbyID] != nil
}

// member checks the session's user's membership of the lobby; when it fails and channel is
// set, it refuses the session with the matching code.
func (s *Service) member(sess gateway.Session, lobbyID uint64, channel *wire.Snowflake) bool {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	err := s.Members.CheckMember(ctx, sess.AppID, lobbyID, sess.UserID)
	if err == nil {
		return true
	}
	if channel == nil {
		return false
	}
	var api *wire.APIError
	switch {
	case errors.As(err, &api) && api.Code == wire.CodeUnknownLobby:
		s.refuse(sess, channel, vwire.CodeUnknownLobby, "Unknown Lobby")
	case errors.As(err, &api) && api.Code == wire.CodeMissingAccess:
		s.refuse(sess, channel, vwire.CodeMissingAccess, "Missing Access: only the lobby's members may join its call")
	default:
		s.logger().Warn("voice: membership check failed", "user_id", sess.UserID, "lobby_id", lobbyID, "err", err)
		s.refuse(sess, channel, wire.CodeGeneral, "internal error: try again")
	}
	return false
}

// join puts the session in the lobby's call, or updates its state there; false when refused.
func (s *Service) join(sess gateway.Session, lobbyID uint64, u vwire.StateUpdate) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	channel := wire.Snowflake(lobbyID)
	if p := s.bySession[sess.ID]; p != nil && p.call.lobbyID == lobbyID { // an update
		p.state.SelfMute, p.state.SelfDeaf = u.SelfMute, u.SelfDeaf
		p.state.E2EEPublicKeys = slices.Clone(u.E2EEPublicKeys)
		s.broadcastLocked(p.call, p.state, nil)
		return true
	}
	c := s.calls[lobbyID]
	if c != nil && len(c.parts) >= vwire.MaxParticipants {
		s.refuse(sess, &channel, vwire.CodeCallFull, "the call is full")
		return false
	}
	if p := s.bySession[sess.ID]; p != nil { // a move: leave the other call first
		s.leaveLocked(p)
	}
	if p := s.byUser[userKey{sess.AppID, sess.UserID}]; p != nil { // the user's other session
		s.leaveLocked(p)
	}
	flow, err := s.Relay.Open(lobbyID)
	if err != nil {
		s.logger().Error("voice: relay flow not opened", "lobby_id", lobbyID, "err", err)
		s.refuse(sess, &channel, wire.CodeGeneral, "internal error: try again")
		return false
	}
	if c = s.calls[lobbyID]; c == nil { // (leaving may have ended it)
		c = &call{lobbyID: lobbyID}
		s.calls[lobbyID] = c
	}
	p := &participant{sess: sess, call: c, token: flow.Token, state: vwire.State{ChannelID: &channel,
		UserID: wire.Snowflake(sess.UserID), SessionID: sess.ID, SelfMute: u.SelfMute, SelfDeaf: u.SelfDeaf,
		E2EEPublicKeys: slices.Clone(u.E2EEPublicKeys), SSRC: flow.SSRC}}
	for _, q := range c.parts { // who is there already, to the joiner
		s.Hub.DispatchSession(sess.ID, gwire.EventVoiceStateUpdate, q.state)
	}
	c.parts = append(c.parts, p)
	s.bySession[sess.ID] = p
	s.byUser[userKey{sess.AppID, sess.UserID}] = p
	s.broadcastLocked(c, p.state, nil)
	s.Hub.DispatchSession(sess.ID, gwire.EventVoiceServerUpdate, vwire.ServerUpdate{Token: flow.Token,
		Endpoint: s.Endpoint, ChannelID: channel, SSRC: flow.SSRC})
	s.logger().Debug("voice: joined", "user_id", sess.UserID, "lobby_id", lobbyID, "ssrc", flow.SSRC)
	return true
}

// leaveLocked takes p out of its call: its flow ends, and everyone in the call, p included,
// gets its state with channel_id null.
func (s *Service) leaveLocked(p *participant) {
	c := p.call
	if i := slices.Index(c.parts, p); i >= 0 {
		c.parts = slices.Delete(c.parts, i, i+1)
	}
	if len(c.parts) == 0 && s.calls[c.lobbyID] == c {
		delete(s.calls, c.lobbyID)
		if s.OnEnded != nil {
			s.OnEnded(c.lobbyID)
		}
	}
	delete(s.bySession, p.sess.ID)
	if k := (userKey{p.sess.AppID, p.sess.UserID}); s.byUser[k] == p {
		delete(s.byUser, k)
	}
	s.Relay.Remove(p.token)
	left := vwire.State{UserID: p.state.UserID, SessionID: p.sess.ID}
	s.broadcastLocked(c, left, p)
	s.logger().Debug("voice: left", "user_id", p.sess.UserID, "lobby_id", c.lobbyID)
}

// broadcastLocked sends a state to every participant of the call, and to also when set.
func (s *Service) broadcastLocked(c *call, st vwire.State, also *participant) {
	for _, q := range c.parts {
		s.Hub.DispatchSession(q.sess.ID, gwire.EventVoiceStateUpdate, st)
	}
	if also != nil {
		s.Hub.DispatchSession(also.sess.ID, gwire.EventVoiceStateUpdate, st)
	}
}

// refuse sends an SDKPP_VOICE_ERROR to the session.
func (s *Service) refuse(sess gateway.Session, channel *wire.Snowflake, code int, message string) {
	s.Hub.DispatchSession(sess.ID, gwire.EventVoiceError, vwire.Error{ChannelID: channel, Code: code, Message: message})
}

// VoiceKeys serves op 101 (gateway.Voice): each sealed key goes to its recipient's session in
// the sender's call; keys for users not in the call are dropped.
func (s *Service) VoiceKeys(sess gateway.Session, k vwire.Keys) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	p := s.bySession[sess.ID]
	if p == nil || p.call.lobbyID != uint64(k.ChannelID) {
		s.refuse(sess, &k.ChannelID, vwire.CodeMissingAccess, "Missing Access: not in this call")
		return
	}
	for _, key := range k.Keys {
		for _, q := range p.call.parts {
			if q != p && q.state.UserID == key.UserID {
				s.Hub.DispatchSession(q.sess.ID, gwire.EventVoiceKeys, vwire.KeyDelivery{ChannelID: k.ChannelID,
					SenderID: p.state.UserID, Sealed: key.Sealed})
			}
		}
	}
}

// VoiceSessionGone takes the session out of its call (gateway.Voice).
func (s *Service) VoiceSessionGone(sess gateway.Session) { s.Leave(sess) }

// MemberLeft takes the user out of the lobby's call: the user left the lobby or was removed.
func (s *Service) MemberLeft(lobbyID, userID uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	c := s.calls[lobbyID]
	if c == nil {
		return
	}
	for _, p := range slices.Clone(c.parts) {
		if p.sess.UserID == userID {
			s.leaveLocked(p)
		}
	}
}

// LobbyGone ends the lobby's call: the lobby was deleted or expired.
func (s *Service) LobbyGone(lobbyID uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if c := s.calls[lobbyID]; c != nil {
		for _, p := range slices.Clone(c.parts) {
			s.leaveLocked(p)
		}
	}
}

// Participants returns the user ids in the lobby's call, in join order.
func (s *Service) Participants(lobbyID uint64) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	var ids []uint64
	if c := s.calls[lobbyID]; c != nil {
		for _, p := range c.parts {
			ids = append(ids, p.sess.UserID)
		}
	}
	return ids
}
