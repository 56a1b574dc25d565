// Package voicestatus serves voice channel statuses: setting them, telling the guild, recording
// them in the guild's audit log, and answering the gateway's Request Channel Info.
//
// # Routes (under /api/v10)
//
//	PUT /channels/{channel_id}/voice-status  Bot; {"status": "<= 500 characters" | null} -> 204 (rule VCS-1)
//	GET /guilds/{guild_id}/audit-logs         Bot; ?action_type&user_id&before&after&limit (1-100, default 50)
//	                                          -> {"audit_log_entries": [...], "users": [...], ...}
//
// Setting a status needs VIEW_CHANNEL and SET_VOICE_CHANNEL_STATUS in the guild, and also
// MANAGE_CHANNELS when the bot is not connected to the voice channel (Service.Voice). A status that changes is dispatched to the
// guild as VOICE_CHANNEL_STATUS_UPDATE (rule GW-4) and recorded in the audit log as
// VOICE_CHANNEL_STATUS_UPDATE (192, options.status the new status) or, when cleared (null or ""),
// VOICE_CHANNEL_STATUS_DELETE (193) (rule AUD-1). Setting the status a channel already has changes
// nothing. Reading the audit log needs VIEW_AUDIT_LOG.
//
// Request Channel Info (gateway op 43, rule GW-3) of a guild member gets the status and
// voice_start_time of the guild's voice channels (ChannelInfo); the start times are Voice's.
//
// # Errors
//
// 401 without a valid bot token; 400 50035 for a malformed id, query value or status; 404 10003
// for an unknown channel, 10004 for an unknown guild; 403 50001 for a bot that is not a member;
// 403 50013 without the permissions; 400 50024 for a channel that is not a voice channel.
package voicestatus

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"sdkpp/internal/clock"
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// VoiceChannels tells who is in the guild's voice channels (package guildvoice's Service).
type VoiceChannels interface {
	// Channel returns the voice channel the user is in in the guild, 0 when none.
	Channel(guildID, userID uint64) uint64
	// StartTimes returns when the voice session of each channel of the guild that has one
	// started.
	StartTimes(guildID uint64) map[uint64]time.Time
}

// GuildEvents delivers an event of a guild to the bot sessions in it that have the GUILDS intent.
type GuildEvents interface {
	GuildEvent(ctx context.Context, guildID uint64, event string, data any)
}

// Service serves voice channel statuses. Set its fields before Register.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	// Events, when set, receives VOICE_CHANNEL_STATUS_UPDATE (rule GW-4); nil tells no one.
	Events GuildEvents
	// Voice tells who is in the voice channels; required.
	Voice VoiceChannels
}

// Register adds the routes to mux (paths relative to the API base).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("PUT /channels/{channel_id}/voice-status", s.bot(s.setStatus))
	mux.HandleFunc("GET /guilds/{guild_id}/audit-logs", s.bot(s.auditLog))
}

// CodeInvalidChannelType is the platform's 50024: an action a channel of that type does not take.
const CodeInvalidChannelType = 50024

// bot authenticates a bot token and writes the handler's answer (nil as 204).
func (s *Service) bot(h func(r *http.Request, app *store.Application) (any, error)) http.HandlerFunc {
	return token.Auth{Store: s.Store, Clock: s.Clock}.BotRoute(s.Logger, h)
}

func missingPermissions() *wire.APIError {
	return &wire.APIError{Status: http.StatusForbidden, Code: wire.CodeMissingPermissions, Message: "Missing Permissions"}
}

// guildPerms returns userID's permissions in the guild; 404 10004 for no guild, 403 50001 for a
// non-member.
func guildPerms(ctx context.Context, st store.Store, guildID, userID uint64) (*store.Guild, uint64, error) {
	g, err := st.GetGuild(ctx, guildID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, wire.UnknownGuild()
	} else if err != nil {
		return nil, 0, err
	}
	perms, member, err := guildaccess.Permissions(ctx, st, g, userID)
	if err != nil {
		return nil, 0, err
	}
	if !member {
		return nil, 0, wire.MissingAccess()
	}
	return g, perms, nil
}

// setStatus serves PUT /channels/{channel_id}/voice-status (rules VCS-1, GW-4, AUD-1).
func (s *Service) setStatus(r *http.Request, app *store.Application) (any, error) {
	ctx := r.Context()
	id, err := httpx.PathID(r, "channel_id")
	if err != nil {
		return nil, err
	}
	var body wire.VoiceStatusRequest
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	status := ""
	if body.Status != nil {
		status = *body.Status
	}
	if utf8.RuneCountInString(status) > wire.MaxVoiceStatusChars || !utf8.ValidString(status) {
		return nil, wire.Invalid("status", "BASE_TYPE_MAX_LENGTH", "Must be 500 or fewer in length.")
	}
	var changed bool
	var guildID uint64
	err = s.Store.WithTx(ctx, func(st store.Store) error {
		ch, err := st.GetGuildChannel(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownChannel()
		} else if err != nil {
			return err
		}
		_, perms, err := guildPerms(ctx, st, ch.GuildID, app.BotUserID)
		if err != nil {
			return err
		}
		need := guildaccess.PermViewChannel | wire.PermSetVoiceChannelStatus
		if s.Voice.Channel(ch.GuildID, app.BotUserID) != ch.ID {
			need |= guildaccess.PermManageChannels
		}
		if perms&need != need {
			return missingPermissions()
		}
		if ch.Type != wire.ChannelGuildVoice {
			return &wire.APIError{Status: http.StatusBadRequest, Code: CodeInvalidChannelType,
				Message: "Cannot execute action on this channel type"}
		}
		now := s.Clock.Now()
		cur, err := st.GetVoiceStatus(ctx, ch.ID)
		if errors.Is(err, store.ErrNotFound) {
			cur, err = &store.VoiceStatus{ChannelID: ch.ID, GuildID: ch.GuildID}, nil
		}
		if err != nil {
			return err
		}
		if cur.Status == status {
			return nil
		}
		changed, guildID = true, ch.GuildID
		cur.Status, cur.UpdatedAt = status, now
		if err := st.PutVoiceStatus(ctx, cur); err != nil {
			return err
		}
		return st.InsertAuditEntry(ctx, auditEntry(s.IDs.Next(), ch, app.BotUserID, status, now))
	})
	if err != nil {
		return nil, err
	}
	if changed && s.Events != nil {
		s.Events.GuildEvent(ctx, guildID, gwire.EventVoiceChannelStatusUpdate,
			gwire.VoiceChannelStatusUpdate{ID: wire.Snowflake(id), GuildID: wire.Snowflake(guildID), Status: optional(status)})
	}
	return nil, nil
}

// auditEntry is the audit log entry of a status change (rule AUD-1): 192 with the new status in
// its options, 193 when the status was cleared.
func auditEntry(id uint64, ch *store.GuildChannel, userID uint64, status string, now time.Time) *store.AuditEntry {
	chID := wire.Snowflake(ch.ID)
	opts := wire.AuditEntryOptions{ChannelID: &chID}
	action := wire.AuditVoiceChannelStatusDelete
	if status != "" {
		action, opts.Status = wire.AuditVoiceChannelStatusUpdate, &status
	}
	raw, _ := json.Marshal(opts) // pointers to a snowflake and a string always encode
	return &store.AuditEntry{ID: id, GuildID: ch.GuildID, UserID: userID, TargetID: ch.ID, ActionType: action,
		Options: raw, CreatedAt: now}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Limits of GET /guilds/{guild_id}/audit-logs.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 100
)

// auditLog serves GET /guilds/{guild_id}/audit-logs (rule AUD-1).
func (s *Service) auditLog(r *http.Request, app *store.Application) (any, error) {
	ctx := r.Context()
	id, err := httpx.PathID(r, "guild_id")
	if err != nil {
		return nil, err
	}
	query := r.URL.Query()
	q := store.AuditQuery{Limit: DefaultAuditLimit}
	for _, f := range []struct {
		name string
		v    *uint64
	}{{"user_id", &q.UserID}, {"before", &q.Before}, {"after", &q.After}} {
		if *f.v, err = httpx.QueryID(query, f.name); err != nil {
			return nil, err
		}
	}
	if v := query.Get("action_type"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<16 {
			return nil, wire.Invalid("action_type", "NUMBER_TYPE_COERCE", "Value is not an audit log action type.")
		}
		q.ActionType = n
	}
	if q.Limit, err = httpx.QueryLimit(query, q.Limit, MaxAuditLimit); err != nil {
		return nil, err
	}
	_, perms, err := guildPerms(ctx, s.Store, id, app.BotUserID)
	if err != nil {
		return nil, err
	}
	if perms&wire.PermViewAuditLog == 0 {
		return nil, missingPermissions()
	}
	list, err := s.Store.ListAuditEntries(ctx, id, q)
	if err != nil {
		return nil, err
	}
	out := wire.AuditLog{AuditLogEntries: make([]wire.AuditLogEntry, 0, len(list)), Users: []wire.User{},
		ApplicationCommands: []struct{}{}, AutoModerationRules: []struct{}{}, GuildScheduledEvents: []struct{}{},
		Integrations: []struct{}{}, Threads: []struct{}{}, Webhooks: []struct{}{}}
	seen := map[uint64]bool{}
	for _, e := range list {
		entry, err := auditObject(&e)
		if err != nil {
			return nil, err
		}
		out.AuditLogEntries = append(out.AuditLogEntries, entry)
		if seen[e.UserID] {
			continue
		}
		seen[e.UserID] = true
		u, err := s.Store.GetUser(ctx, e.UserID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out.Users = append(out.Users, users.Object(u, false))
	}
	return out, nil
}

// auditObject is the wire form of an audit log entry.
func auditObject(e *store.AuditEntry) (wire.AuditLogEntry, error) {
	user := wire.Snowflake(e.UserID)
	target := strconv.FormatUint(e.TargetID, 10)
	out := wire.AuditLogEntry{ID: wire.Snowflake(e.ID), UserID: &user, TargetID: &target, ActionType: e.ActionType}
	var opts wire.AuditEntryOptions
	if err := json.Unmarshal(e.Options, &opts); err != nil {
		return out, errors.New("voicestatus: audit entry " + strconv.FormatUint(e.ID, 10) + ": " + err.Error())
	}
	if opts != (wire.AuditEntryOptions{}) {
		out.Options = &opts
	}
	return out, nil
}

// ChannelInfo answers Request Channel Info (gateway op 43, rule GW-3) of userID: the fields asked
// for (status, voice_start_time) of the guild's voice and stage channels. A field not asked for
// is absent, and so is a voice_start_time of a channel without a voice session. 404 10004 for an
// unknown guild, 403 50001 for a user who is not a member.
func (s *Service) ChannelInfo(ctx context.Context, userID, guildID uint64, fields []string) (gwire.ChannelInfo, error) {
	out := gwire.ChannelInfo{GuildID: wire.Snowflake(guildID), Channels: []gwire.ChannelInfoEntry{}}
	if _, _, err := guildPerms(ctx, s.Store, guildID, userID); err != nil {
		return out, err
	}
	channels, err := s.Store.ListGuildChannels(ctx, guildID)
	if err != nil {
		return out, err
	}
	statuses, err := s.Store.ListVoiceStatuses(ctx, guildID)
	if err != nil {
		return out, err
	}
	starts := s.Voice.StartTimes(guildID)
	byChannel := make(map[uint64]*store.VoiceStatus, len(statuses))
	for i := range statuses {
		byChannel[statuses[i].ChannelID] = &statuses[i]
	}
	wantStatus := slices.Contains(fields, gwire.ChannelInfoFieldStatus)
	wantStart := slices.Contains(fields, gwire.ChannelInfoFieldStartTime)
	for _, ch := range channels {
		if ch.Type != wire.ChannelGuildVoice && ch.Type != wire.ChannelGuildStageVoice {
			continue
		}
		e := gwire.ChannelInfoEntry{ID: wire.Snowflake(ch.ID)}
		v := byChannel[ch.ID]
		if v == nil {
			v = &store.VoiceStatus{}
		}
		if wantStatus {
			status := v.Status
			e.Status = &status
		}
		if start, ok := starts[ch.ID]; wantStart && ok {
			sec := start.Unix()
			e.VoiceStartTime = &sec
		}
		out.Channels = append(out.Channels, e)
	}
	return out, nil
}
