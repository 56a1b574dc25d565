package guilds

import (
	"errors"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// PermManageThreads is one of the permissions BYPASS_SLOWMODE was split from.
const PermManageThreads uint64 = 1 << 34

// registerSlowmode adds Modify Channel for guild channels (PATCH /channels/{channel_id}): name,
// topic and the slowmode interval rate_limit_per_user (rule VER-1).
func (s *Service) registerSlowmode(mux httpx.Router) {
	mux.HandleFunc("PATCH /channels/{channel_id}", s.callerRoute(s.modifyChannel))
}

// BypassSlowmode is the permissions that let a member skip a channel's slowmode at t (rules
// VER-1, VER-3): BYPASS_SLOWMODE from wire.BypassSlowmodeFrom; before, any of MANAGE_MESSAGES,
// MANAGE_CHANNELS and MANAGE_THREADS, which it was split from.
func BypassSlowmode(t time.Time) uint64 {
	if t.Before(wire.BypassSlowmodeFrom) {
		return PermManageMessages | PermManageChannels | PermManageThreads
	}
	return wire.PermBypassSlowmode
}

// slowmode remembers, in the service's memory, when each user last sent a message in each
// channel: what the slowmode interval counts from. It is not stored: after a restart every
// member may send once more at once, which only loosens slowmode for one message. Entries older
// than the longest interval are dropped as new ones come.
type slowmode struct {
	mu    sync.Mutex
	last  map[[2]uint64]time.Time // (channel, user) -> last send
	swept time.Time
}

// wait returns how long userID must still wait before sending in a channel whose interval is
// every, as of now (0: may send).
func (m *slowmode) wait(channelID, userID uint64, every time.Duration, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.last[[2]uint64{channelID, userID}]
	if !ok {
		return 0
	}
	return max(0, last.Add(every).Sub(now))
}

// sent records that userID sent a message in the channel at now.
func (m *slowmode) sent(channelID, userID uint64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[[2]uint64]time.Time{}
	}
	keep := time.Duration(wire.MaxRateLimitPerUser) * time.Second
	if now.Sub(m.swept) > keep {
		for k, at := range m.last {
			if now.Sub(at) >= keep {
				delete(m.last, k)
			}
		}
		m.swept = now
	}
	m.last[[2]uint64{channelID, userID}] = now
}

// slowmodeCheck refuses a message in ch when the channel has slowmode, the sender sent one there
// within its interval and may not bypass it (429 20016 with retry_after). Bots are unaffected,
// as on the platform. A nil answer lets the message through (the caller then calls
// slowmodeSent); otherwise it is the httpx.Reply to answer with.
func (s *Service) slowmodeCheck(q *caller, ch *store.GuildChannel, perms uint64) (any, error) {
	if q.bot {
		return nil, nil
	}
	cs, err := s.Store.GetChannelSettings(q.ctx, ch.ID)
	if err != nil || cs.RateLimitPerUser == 0 {
		return nil, err
	}
	now := s.Clock.Now()
	if perms&BypassSlowmode(now) != 0 {
		return nil, nil
	}
	left := s.slow.wait(ch.ID, q.userID, time.Duration(cs.RateLimitPerUser)*time.Second, now)
	if left == 0 {
		return nil, nil
	}
	return httpx.Reply{Status: http.StatusTooManyRequests, Body: wire.SlowmodeRateLimited{
		Message: "You are being rate limited.", Code: wire.CodeSlowmodeRateLimited, RetryAfter: left.Seconds()}}, nil
}

// slowmodeSent records a message the caller sent in ch.
func (s *Service) slowmodeSent(q *caller, ch *store.GuildChannel) {
	s.slow.sent(ch.ID, q.userID, s.Clock.Now())
}

// modifyChannel serves PATCH /channels/{channel_id} for a guild channel: needs MANAGE_CHANNELS in
// the channel (50013); name 1 to 100 characters, topic at most 1024 (null or "" clears it) and
// rate_limit_per_user 0 to 21600 seconds (0 turns slowmode off), on text channels. Answers with
// the channel.
func (s *Service) modifyChannel(q *caller) (any, error) {
	var body wire.ModifyChannel
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	name, setName, err := optionalString("name", body.Name)
	if err != nil {
		return nil, err
	}
	if setName {
		if err := checkName("name", name); err != nil {
			return nil, err
		}
	}
	topic, setTopic, err := optionalString("topic", body.Topic)
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(topic) > wire.MaxTopicChars || !utf8.ValidString(topic) {
		return nil, wire.InvalidAt("topic", "BASE_TYPE_MAX_LENGTH", "Must be 1024 or fewer in length.")
	}
	setRate := len(body.RateLimitPerUser) > 0
	rate, err := intField("rate_limit_per_user", body.RateLimitPerUser, 0, wire.MaxRateLimitPerUser)
	if err != nil {
		return nil, err
	}
	ch, _, perms, err := s.guildChannel(q)
	if err != nil {
		return nil, err
	}
	if perms&PermManageChannels == 0 {
		return nil, wire.MissingPermissions()
	}
	if (setTopic || setRate) && !textChannel(ch.Type) {
		return nil, wire.InvalidAt("rate_limit_per_user", "CHANNEL_TYPE_INVALID", "Only text channels have a topic and slowmode.")
	}
	cs, err := s.Store.GetChannelSettings(q.ctx, ch.ID)
	if err != nil {
		return nil, err
	}
	if setTopic {
		cs.Topic = topic
	}
	if setRate {
		cs.RateLimitPerUser = rate
	}
	err = s.Store.WithTx(q.ctx, func(st store.Store) error {
		if setName {
			if err := st.RenameGuildChannel(q.ctx, ch.ID, name); err != nil {
				return err
			}
		}
		return st.PutChannelSettings(q.ctx, cs)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownChannel()
	}
	if err != nil {
		return nil, err
	}
	if ch, err = s.Store.GetGuildChannel(q.ctx, ch.ID); err != nil {
		return nil, err
	}
	return FullChannel(q.ctx, s.Store, ch)
}
