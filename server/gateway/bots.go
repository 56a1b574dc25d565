package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"sdkpp/server/counters"
	"sdkpp/server/gateway/internal/busmsg"
	"sdkpp/server/gateway/internal/payload"
	"sdkpp/server/gateway/internal/wsframe"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Defaults of the bot settings of Config.
const (
	DefaultSessionStarts      = 1000
	DefaultSessionStartWindow = 24 * time.Hour
	DefaultMembersRateWindow  = 30 * time.Second
	// DefaultIdentifyWindow is the platform's max_concurrency window: a bot may Identify
	// max_concurrency times per window, once in each rate-limit bucket (shard id modulo
	// max_concurrency).
	DefaultIdentifyWindow = 5 * time.Second
)

// Limits of Request Guild Members (op 8), the platform's.
const (
	maxMembersChunk  = 1000 // members per GUILD_MEMBERS_CHUNK
	maxMemberUserIDs = 100  // user_ids of one request
	maxMembersNonce  = 32   // bytes of its nonce
)

// BotGuild is a guild of a bot session (Config.Guilds): its id, and the d of its GUILD_CREATE
// (nil sends none, when the session's intents leave it out).
type BotGuild struct {
	ID     uint64
	Create any
}

// encodeCreates encodes the GUILD_CREATE data of guilds.
func encodeCreates(guilds []BotGuild) ([][]byte, error) {
	var out [][]byte
	for _, g := range guilds {
		if g.Create == nil {
			continue
		}
		d, err := json.Marshal(g.Create)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// startsKey is the counter of the application's bot's Identifies.
func startsKey(appID uint64) string { return "starts|" + strconv.FormatUint(appID, 10) }

// bucketKey is the counter of the Identifies of one of the application's rate-limit buckets:
// shard ids that are equal modulo max_concurrency share one.
func bucketKey(appID uint64, bucket int) string {
	return "identify|" + strconv.FormatUint(appID, 10) + "|" + strconv.Itoa(bucket)
}

// startSession counts one Identify of the application's bot, of shard (nil: shard 0); false when
// the window's starts are used up, or when the shard's rate-limit bucket (its id modulo the
// application's max_concurrency, Config.MaxConcurrency) already identified in this
// IdentifyWindow. The counters are the shared ones, so both limits hold across the nodes of a
// cluster. Should a counter fail, the session starts (the budget guards the service, which a
// failing store fails anyway).
func (h *Hub) startSession(appID uint64, shard []int) bool {
	hits := []counters.Hit{{Key: startsKey(appID), Limit: h.cfg.SessionStarts, Window: h.cfg.SessionStartWindow}}
	if h.cfg.MaxConcurrency != nil {
		n, err := h.cfg.MaxConcurrency(h.ctx, appID)
		if err != nil || n < 1 {
			h.log.Warn("gateway: max_concurrency unknown, taken as 1", "app_id", appID, "err", err)
			n = 1
		}
		bucket := 0
		if len(shard) == 2 {
			bucket = shard[0] % n
		}
		hits = append(hits, counters.Hit{Key: bucketKey(appID, bucket), Limit: 1, Window: h.cfg.IdentifyWindow})
	}
	ok, _, err := h.cfg.Counter.Hit(h.ctx, h.cfg.Clock.Now(), hits...)
	if err != nil {
		h.log.Warn("gateway: session starts not counted", "app_id", appID, "err", err)
		return true
	}
	return ok
}

// SessionStartLimit returns the application's bot's session_start_limit for GET /gateway/bot,
// counted on the hub's clock; maxConcurrency is passed through.
func (h *Hub) SessionStartLimit(appID uint64, maxConcurrency int) wire.SessionStartLimit {
	now := h.cfg.Clock.Now()
	out := wire.SessionStartLimit{Total: h.cfg.SessionStarts, Remaining: h.cfg.SessionStarts, MaxConcurrency: maxConcurrency}
	w, err := h.cfg.Counter.Peek(h.ctx, startsKey(appID), now)
	if err != nil || w.Count == 0 {
		out.ResetAfter = h.cfg.SessionStartWindow.Milliseconds()
		return out
	}
	out.Remaining -= min(w.Count, out.Total)
	out.ResetAfter = w.End.Sub(now).Milliseconds()
	return out
}

// DispatchBots is Dispatch to the bot sessions among userIDs' sessions whose intents include
// one of the bits of intent (guild events reach bots only, by intent).
func (h *Hub) DispatchBots(userIDs []uint64, intent uint64, event string, data any) {
	h.dispatchTo(userIDs, event, data, filter{kind: busmsg.ToBots, intent: intent})
}

// DispatchBotsSplit is DispatchBots of with to the sessions whose intents also include one of
// the bits of split, and of without to the others (a message's content goes only to sessions
// with MESSAGE_CONTENT).
func (h *Hub) DispatchBotsSplit(userIDs []uint64, intent, split uint64, event string, with, without any) {
	h.dispatchTo(userIDs, event, with, filter{kind: busmsg.ToBotsWith, intent: intent, split: split})
	h.dispatchTo(userIDs, event, without, filter{kind: busmsg.ToBotsWithout, intent: intent, split: split})
}

// DispatchIntent is Dispatch to those of userIDs' sessions, bots' or players', whose intents
// include one of the bits of intent (a guild's voice states reach every session that asks).
func (h *Hub) DispatchIntent(userIDs []uint64, intent uint64, event string, data any) {
	h.dispatchTo(userIDs, event, data, filter{kind: busmsg.ToIntent, intent: intent})
}

// memberAskKey is the counter of a bot's requests for all members of a guild: one per
// MembersRateWindow (GW-2).
func memberAskKey(appID, guildID uint64) string {
	return "members|" + strconv.FormatUint(appID, 10) + "|" + strconv.FormatUint(guildID, 10)
}

// requestMembers serves op 8 of a bot session: malformed payloads close with 4002; a request
// for all members of a guild more than once per MembersRateWindow gets RATE_LIMITED (rule GW-2);
// the answer is GUILD_MEMBERS_CHUNK dispatches of at most 1000 members, which no rate limit
// holds back.
func (c *conn) requestMembers(d json.RawMessage) (wsframe.Close, bool) {
	h := c.h
	if !c.authed {
		return wsframe.Close{Code: gwire.CloseNotAuthenticated, Reason: "not authenticated"}, true
	}
	if !c.who.Bot {
		return wsframe.Close{Code: gwire.CloseUnknownOpcode, Reason: "unknown opcode"}, true
	}
	var rq wire.RequestGuildMembers
	if !payload.DecodeObject(d, &rq) {
		return decodeError("invalid request guild members payload")
	}
	guild, ok := payload.Snowflakes(rq.GuildID)
	if !ok || len(guild) != 1 || payload.IsArray(rq.GuildID) {
		return decodeError("guild_id must be one snowflake")
	}
	userIDs, ok := payload.Snowflakes(rq.UserIDs)
	switch {
	case !ok || len(userIDs) > maxMemberUserIDs:
		return decodeError("user_ids must be at most 100 snowflakes")
	case rq.Query == nil && userIDs == nil:
		return decodeError("query or user_ids is required")
	case rq.Query != nil && userIDs != nil:
		return decodeError("give query or user_ids, not both")
	case rq.Query != nil && (rq.Limit == nil || *rq.Limit < 0):
		return decodeError("limit is required with query and may not be negative")
	case len(rq.Nonce) > maxMembersNonce:
		return decodeError("nonce is at most 32 bytes")
	}
	query, limit := "", 0
	if rq.Query != nil {
		query, limit = *rq.Query, *rq.Limit
	}
	h.mu.Lock()
	sid := ""
	if c.sess != nil {
		sid = c.sess.id
	}
	h.mu.Unlock()
	if rq.Query != nil && query == "" && limit == 0 { // all members: rate limited (GW-2)
		now := h.cfg.Clock.Now()
		ok, ws, err := h.cfg.Counter.Hit(h.ctx, now,
			counters.Hit{Key: memberAskKey(c.who.AppID, guild[0]), Limit: 1, Window: h.cfg.MembersRateWindow})
		if err != nil {
			h.log.Warn("gateway: member request not counted", "app_id", c.who.AppID, "err", err)
		} else if !ok {
			h.DispatchSession(sid, gwire.EventRateLimited, wire.RateLimitedEvent{Opcode: gwire.OpRequestGuildMembers,
				RetryAfter: ws[0].End.Sub(now).Seconds(),
				Meta:       wire.RateLimitedMeta{GuildID: wire.Snowflake(guild[0]), Nonce: rq.Nonce}})
			return wsframe.Close{}, false
		}
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.WriteTimeout)
	members, missing, err := h.cfg.Members(ctx, c.who, guild[0], query, limit, userIDs)
	cancel()
	var apiErr *wire.APIError
	switch {
	case errors.As(err, &apiErr): // not the bot's guild: no answer
		return wsframe.Close{}, false
	case err != nil:
		h.log.Warn("gateway: member lookup failed", "user_id", c.who.UserID, "err", err)
		return wsframe.Close{Code: gwire.CloseUnknownError, Reason: "unknown error"}, true
	}
	count := max(1, (len(members)+maxMembersChunk-1)/maxMembersChunk)
	for i := range count {
		chunk := wire.GuildMembersChunk{GuildID: wire.Snowflake(guild[0]), Members: members[min(i*maxMembersChunk, len(members)):min((i+1)*maxMembersChunk, len(members))],
			ChunkIndex: i, ChunkCount: count, Nonce: rq.Nonce}
		if chunk.Members == nil {
			chunk.Members = []wire.Member{}
		}
		if i == 0 {
			for _, id := range missing {
				chunk.NotFound = append(chunk.NotFound, wire.Snowflake(id))
			}
		}
		h.DispatchSession(sid, gwire.EventGuildMembersChunk, chunk)
	}
	return wsframe.Close{}, false
}
