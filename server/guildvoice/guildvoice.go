// Package guildvoice keeps who is in the voice channels of guilds: the platform's Update Voice
// State (gateway op 4 with a guild_id), the guild's VOICE_STATE_UPDATE dispatches, the
// voice_states of GUILD_CREATE, and each voice channel's voice_start_time (rules GW-3, GW-4).
//
// A gateway session of a guild member joins a voice (or stage) channel of the guild with op 4
// {guild_id, channel_id, self_mute, self_deaf}, moves with another channel_id and leaves with
// channel_id null. Joining needs VIEW_CHANNEL and CONNECT in the channel. A user has one voice
// state per guild: a join from the user's other session takes the state over. A session leaves
// every guild voice channel when its gateway connection ends (SessionGone), and a member that
// leaves the guild leaves its channel there (MemberLeft). Every change is dispatched as
// VOICE_STATE_UPDATE (d a wire.VoiceState with guild_id and member) to the sessions of the
// guild's members whose intents include GUILD_VOICE_STATES; a refusal is an SDKPP_VOICE_ERROR to
// the session that asked (codes in wire/voice).
//
// A channel's voice session starts when its first member joins and ends when its last one
// leaves: voice_start_time (Unix seconds) is set and cleared then, each change dispatched to the
// guild as VOICE_CHANNEL_START_TIME_UPDATE (rule GW-4) and reported by Request Channel Info
// (StartTimes, rule GW-3).
//
// The service has no voice server for guild channels, so no VOICE_SERVER_UPDATE follows a join:
// a guild voice state is presence in the channel, without media. The states live in memory, as
// the gateway sessions they belong to do.
//
// On a cluster every node keeps every state. A change is made once, on the node where it
// happens (the session's node for op 4 and a closed connection, the node that found a node down
// for that node's sessions, the node that served a member's removal): that node dispatches it
// and shares the user's new state (Share), and the other nodes take it without a dispatch
// (Apply). A node that starts reads the shared states back from the bus.
package guildvoice

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/gateway"
	"sdkpp/server/guildaccess"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
	vwire "sdkpp/wire/voice"
)

// Hub delivers dispatches to gateway sessions (package gateway's Hub).
type Hub interface {
	DispatchSession(sessionID, event string, data any) bool
	DispatchIntent(userIDs []uint64, intent uint64, event string, data any)
}

// GuildEvents delivers an event of a guild to the bot sessions in it that have the GUILDS intent
// (package guilds' Service).
type GuildEvents interface {
	GuildEvent(ctx context.Context, guildID uint64, event string, data any)
}

// storeTimeout bounds the store work of one change.
const storeTimeout = 5 * time.Second

// Service keeps the guilds' voice states. Set its fields before the hub serves; it is safe for
// concurrent use.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	Hub    Hub
	Events GuildEvents
	Logger *slog.Logger
	// Share, when set, tells the other nodes of a cluster each change (Apply takes it there).
	// Nil for a node alone.
	Share func(Change)

	mu        sync.Mutex
	guilds    map[uint64]*guildStates    // by guild id
	bySession map[string]map[uint64]bool // the guilds where a session has a state
}

// guildStates is one guild's voice states and its channels' voice sessions.
type guildStates struct {
	states map[uint64]*state    // by user id
	starts map[uint64]time.Time // by channel id: when its voice session started
	counts map[uint64]int       // by channel id: how many are in it
}

// state is one user's voice state in a guild.
type state struct {
	sessionID          string
	channelID          uint64
	selfMute, selfDeaf bool
}

// Change is a user's voice state in a guild after a change, as the nodes of a cluster share it:
// Channel 0 when the user left. Start is when Channel's voice session started (Unix
// nanoseconds), so that every node reports the same voice_start_time.
type Change struct {
	Guild    uint64 `json:"guild"`
	User     uint64 `json:"user"`
	Session  string `json:"session,omitempty"`
	Channel  uint64 `json:"channel,omitempty"`
	SelfMute bool   `json:"self_mute,omitempty"`
	SelfDeaf bool   `json:"self_deaf,omitempty"`
	Start    int64  `json:"start,omitempty"`
}

func (s *Service) initLocked() {
	if s.guilds == nil {
		s.guilds, s.bySession = map[uint64]*guildStates{}, map[string]map[uint64]bool{}
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Update serves an op 4 whose guild_id is set (u.GuildID non-nil).
func (s *Service) Update(sess gateway.Session, u vwire.StateUpdate) {
	guildID := uint64(*u.GuildID)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if u.ChannelID == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.initLocked()
		if g := s.guilds[guildID]; g != nil && g.states[sess.UserID] != nil {
			s.leaveLocked(ctx, guildID, g, sess.UserID)
		}
		return
	}
	channelID := uint64(*u.ChannelID)
	if code, msg, err := s.check(ctx, sess.UserID, guildID, channelID); err != nil {
		s.logger().Warn("guild voice: join not checked", "user_id", sess.UserID, "guild_id", guildID, "err", err)
		s.refuse(sess, u.ChannelID, wire.CodeGeneral, "internal error: try again")
		return
	} else if code != 0 {
		s.refuse(sess, u.ChannelID, code, msg)
		return
	}
	s.mu.Lock()
	s.joinLocked(ctx, sess, guildID, channelID, u)
	s.mu.Unlock()
	// The user may have left the guild between the check and the join, and MemberLeft may have
	// come before the join: check again now that it would find the state.
	if _, err := s.Store.GetGuildMember(ctx, guildID, sess.UserID); errors.Is(err, store.ErrNotFound) {
		s.MemberLeft(guildID, sess.UserID)
	}
}

// check tells whether userID may join the channel: a refusal's code and message, or an error
// of the store.
func (s *Service) check(ctx context.Context, userID, guildID, channelID uint64) (int, string, error) {
	g, err := s.Store.GetGuild(ctx, guildID)
	if errors.Is(err, store.ErrNotFound) {
		return vwire.CodeUnknownGuild, "Unknown Guild", nil
	} else if err != nil {
		return 0, "", err
	}
	a, err := guildaccess.LoadAccess(ctx, s.Store, g, userID)
	if err != nil {
		return 0, "", err
	}
	if !a.IsMember() {
		return vwire.CodeUnknownGuild, "Unknown Guild", nil
	}
	ch, err := s.Store.GetGuildChannel(ctx, channelID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ch.GuildID != guildID) {
		return vwire.CodeUnknownChannel, "Unknown Channel", nil
	} else if err != nil {
		return 0, "", err
	}
	perms, err := a.Channel(ctx, s.Store, ch)
	switch {
	case err != nil:
		return 0, "", err
	case perms&guildaccess.PermViewChannel == 0:
		return vwire.CodeMissingAccess, "Missing Access", nil
	case ch.Type != wire.ChannelGuildVoice && ch.Type != wire.ChannelGuildStageVoice:
		return vwire.CodeInvalidChannelType, "Cannot execute action on this channel type", nil
	case perms&guildaccess.PermConnect == 0:
		return vwire.CodeMissingPermissions, "Missing Permissions", nil
	}
	return 0, "", nil
}

// joinLocked puts the user's voice state in the channel (a join, a move, a change of self_mute
// or self_deaf, or a takeover by another session of the user), tells the guild and shares it.
func (s *Service) joinLocked(ctx context.Context, sess gateway.Session, guildID, channelID uint64, u vwire.StateUpdate) {
	st := &state{sessionID: sess.ID, channelID: channelID, selfMute: u.SelfMute, selfDeaf: u.SelfDeaf}
	ended, started := s.setLocked(guildID, sess.UserID, st, s.Clock.Now())
	s.dispatchState(ctx, guildID, st.object(guildID, sess.UserID))
	s.afterLocked(ctx, guildID, sess.UserID, st, ended, started)
}

// leaveLocked takes userID's voice state out of the guild, tells the guild and shares it.
func (s *Service) leaveLocked(ctx context.Context, guildID uint64, g *guildStates, userID uint64) {
	st := g.states[userID]
	ended, _ := s.setLocked(guildID, userID, nil, time.Time{})
	left := st.object(guildID, userID)
	left.ChannelID, left.SelfMute, left.SelfDeaf = nil, false, false
	s.dispatchState(ctx, guildID, left)
	s.afterLocked(ctx, guildID, userID, nil, ended, false)
}

// afterLocked sends the start-time events of a change of userID's state to st (nil: left) and
// shares the change with the other nodes.
func (s *Service) afterLocked(ctx context.Context, guildID, userID uint64, st *state, ended uint64, started bool) {
	if ended != 0 {
		s.startTimeEvent(ctx, guildID, ended, time.Time{})
	}
	c := Change{Guild: guildID, User: userID}
	if st != nil {
		start := s.guilds[guildID].starts[st.channelID]
		if started {
			s.startTimeEvent(ctx, guildID, st.channelID, start)
		}
		c.Session, c.Channel, c.SelfMute, c.SelfDeaf, c.Start = st.sessionID, st.channelID, st.selfMute, st.selfDeaf, start.UnixNano()
	}
	if s.Share != nil {
		s.Share(c)
	}
}

// setLocked makes st userID's voice state in the guild (nil: none). A channel whose voice session
// it starts starts at start. It returns the channel whose voice session it ended (0: none) and
// whether it started the voice session of st's channel.
func (s *Service) setLocked(guildID, userID uint64, st *state, start time.Time) (ended uint64, started bool) {
	s.initLocked()
	g := s.guilds[guildID]
	if g == nil {
		if st == nil {
			return 0, false
		}
		g = &guildStates{states: map[uint64]*state{}, starts: map[uint64]time.Time{}, counts: map[uint64]int{}}
		s.guilds[guildID] = g
	}
	old := g.states[userID]
	if old != nil {
		s.untrackLocked(old.sessionID, guildID)
	}
	if st == nil {
		delete(g.states, userID)
	} else {
		g.states[userID] = st
		s.trackLocked(st.sessionID, guildID)
	}
	if old != nil && (st == nil || old.channelID != st.channelID) && g.exitLocked(old.channelID) {
		ended = old.channelID
	}
	if st != nil && (old == nil || old.channelID != st.channelID) {
		g.counts[st.channelID]++
		if started = g.counts[st.channelID] == 1; started {
			g.starts[st.channelID] = start
		}
	}
	if len(g.states) == 0 {
		delete(s.guilds, guildID)
	}
	return ended, started
}

// Apply takes a change that another node of the cluster made and shared: it becomes the user's
// state here, without a dispatch (that node sent them).
func (s *Service) Apply(c Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Channel == 0 {
		s.setLocked(c.Guild, c.User, nil, time.Time{})
		return
	}
	st := &state{sessionID: c.Session, channelID: c.Channel, selfMute: c.SelfMute, selfDeaf: c.SelfDeaf}
	start := time.Unix(0, c.Start)
	s.setLocked(c.Guild, c.User, st, start)
	if c.Start != 0 { // the node that made the change knows when the channel's session started
		s.guilds[c.Guild].starts[c.Channel] = start
	}
}

// Reshare shares again the states of the users for whom here says true (users with a session on
// this node): another node started.
func (s *Service) Reshare(here func(userID uint64) bool) {
	if s.Share == nil {
		return
	}
	var out []Change
	s.mu.Lock()
	for guildID, g := range s.guilds {
		for userID, st := range g.states {
			if here(userID) {
				out = append(out, Change{Guild: guildID, User: userID, Session: st.sessionID, Channel: st.channelID,
					SelfMute: st.selfMute, SelfDeaf: st.selfDeaf, Start: g.starts[st.channelID].UnixNano()})
			}
		}
	}
	s.mu.Unlock()
	for _, c := range out {
		s.Share(c)
	}
}

// exitLocked takes one member out of the channel's count; true when that ended its voice
// session.
func (g *guildStates) exitLocked(channelID uint64) bool {
	g.counts[channelID]--
	if g.counts[channelID] > 0 {
		return false
	}
	delete(g.counts, channelID)
	delete(g.starts, channelID)
	return true
}

func (s *Service) trackLocked(sessionID string, guildID uint64) {
	if s.bySession[sessionID] == nil {
		s.bySession[sessionID] = map[uint64]bool{}
	}
	s.bySession[sessionID][guildID] = true
}

func (s *Service) untrackLocked(sessionID string, guildID uint64) {
	delete(s.bySession[sessionID], guildID)
	if len(s.bySession[sessionID]) == 0 {
		delete(s.bySession, sessionID)
	}
}

// object is the wire form of st, without member.
func (st *state) object(guildID, userID uint64) wire.VoiceState {
	gid, cid := wire.Snowflake(guildID), wire.Snowflake(st.channelID)
	return wire.VoiceState{GuildID: &gid, ChannelID: &cid, UserID: wire.Snowflake(userID), SessionID: st.sessionID,
		SelfMute: st.selfMute, SelfDeaf: st.selfDeaf}
}

// dispatchState sends a VOICE_STATE_UPDATE, with the user's member when it still is one, to the
// guild's sessions with GUILD_VOICE_STATES. Events are best effort, as the platform's: a store
// failure is logged and the event goes to fewer sessions.
func (s *Service) dispatchState(ctx context.Context, guildID uint64, v wire.VoiceState) {
	if m, err := guildaccess.LoadMember(ctx, s.Store, guildID, uint64(v.UserID), true); err == nil {
		v.Member = &m
	}
	audience, err := s.memberIDs(ctx, guildID)
	if err != nil {
		s.logger().Warn("guild voice: members not listed", "guild_id", guildID, "err", err)
	}
	// A member that just left the guild still hears that it left its channel.
	audience = append(audience, uint64(v.UserID))
	s.Hub.DispatchIntent(audience, gwire.IntentGuildVoiceStates, gwire.EventVoiceStateUpdate, v)
}

// memberIDs lists the guild's members.
func (s *Service) memberIDs(ctx context.Context, guildID uint64) ([]uint64, error) {
	var out []uint64
	after := uint64(0)
	for {
		list, err := s.Store.ListGuildMembers(ctx, guildID, after, guildaccess.MaxMembersList)
		if err != nil {
			return out, err
		}
		for _, m := range list {
			out = append(out, m.UserID)
		}
		if len(list) < guildaccess.MaxMembersList {
			return out, nil
		}
		after = list[len(list)-1].UserID
	}
}

// startTimeEvent sends VOICE_CHANNEL_START_TIME_UPDATE (rule GW-4): the channel's voice session
// started at start, or ended (zero start: voice_start_time null).
func (s *Service) startTimeEvent(ctx context.Context, guildID, channelID uint64, start time.Time) {
	if s.Events == nil {
		return
	}
	ev := gwire.VoiceChannelStartTimeUpdate{ID: wire.Snowflake(channelID), GuildID: wire.Snowflake(guildID)}
	if !start.IsZero() {
		sec := start.Unix()
		ev.VoiceStartTime = &sec
	}
	s.Events.GuildEvent(ctx, guildID, gwire.EventVoiceChannelStartTimeUpdate, ev)
}

// refuse sends an SDKPP_VOICE_ERROR to the session.
func (s *Service) refuse(sess gateway.Session, channel *wire.Snowflake, code int, message string) {
	s.Hub.DispatchSession(sess.ID, gwire.EventVoiceError, vwire.Error{ChannelID: channel, Code: code, Message: message})
}

// SessionGone takes the session out of every guild voice channel it is in: its gateway
// connection ended.
func (s *Service) SessionGone(sess gateway.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	for _, guildID := range slices.Sorted(maps.Keys(s.bySession[sess.ID])) {
		if g := s.guilds[guildID]; g != nil && g.states[sess.UserID] != nil && g.states[sess.UserID].sessionID == sess.ID {
			s.leaveLocked(ctx, guildID, g, sess.UserID)
		}
	}
}

// MemberLeft takes the user out of the guild's voice channel: the user left the guild.
func (s *Service) MemberLeft(guildID, userID uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	if g := s.guilds[guildID]; g != nil && g.states[userID] != nil {
		s.leaveLocked(ctx, guildID, g, userID)
	}
}

// States returns the guild's voice states for GUILD_CREATE (without guild_id and member), by
// user id.
func (s *Service) States(guildID uint64) []wire.VoiceState {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	out := []wire.VoiceState{}
	g := s.guilds[guildID]
	if g == nil {
		return out
	}
	for _, userID := range slices.Sorted(maps.Keys(g.states)) {
		v := g.states[userID].object(guildID, userID)
		v.GuildID = nil
		out = append(out, v)
	}
	return out
}

// StartTimes returns when the voice session of each of the guild's channels that has one
// started (rule GW-3).
func (s *Service) StartTimes(guildID uint64) map[uint64]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	if g := s.guilds[guildID]; g != nil {
		return maps.Clone(g.starts)
	}
	return map[uint64]time.Time{}
}

// Channel returns the voice channel the user is in in the guild, 0 when none.
func (s *Service) Channel(guildID, userID uint64) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	if g := s.guilds[guildID]; g != nil && g.states[userID] != nil {
		return g.states[userID].channelID
	}
	return 0
}
