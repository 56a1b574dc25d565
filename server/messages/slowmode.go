package messages

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// PermManageThreads is one of the permissions BYPASS_SLOWMODE was split from.
const PermManageThreads uint64 = 1 << 34

// BypassSlowmode is the permissions that let a member skip a channel's slowmode at t (rules
// VER-1, VER-3): BYPASS_SLOWMODE from wire.BypassSlowmodeFrom; before, any of MANAGE_MESSAGES,
// MANAGE_CHANNELS and MANAGE_THREADS, which it was split from.
func BypassSlowmode(t time.Time) uint64 {
	if t.Before(wire.BypassSlowmodeFrom) {
		return guildaccess.PermManageMessages | guildaccess.PermManageChannels | PermManageThreads
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
// within its interval and may not bypass it (429 20016 with retry_after in the body and Retry-After). Bots are unaffected,
// as on the platform. A nil answer lets the message through (the caller then calls
// slowmodeSent); otherwise it is the httpx.Reply to answer with.
func (s *Service) slowmodeCheck(q *guildaccess.Caller, ch *store.GuildChannel, perms uint64) (any, error) {
	if q.Bot {
		return nil, nil
	}
	cs, err := s.Store.GetChannelSettings(q.Ctx, ch.ID)
	if err != nil || cs.RateLimitPerUser == 0 {
		return nil, err
	}
	now := s.Clock.Now()
	if perms&BypassSlowmode(now) != 0 {
		return nil, nil
	}
	left := s.slow.wait(ch.ID, q.UserID, time.Duration(cs.RateLimitPerUser)*time.Second, now)
	if left == 0 {
		return nil, nil
	}
	// The platform sends Retry-After too, in whole seconds rounded up, beside the body's exact
	// retry_after.
	retry := strconv.Itoa(int(math.Ceil(left.Seconds())))
	return httpx.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {retry}},
		Body: wire.SlowmodeRateLimited{Message: "You are being rate limited.", Code: wire.CodeSlowmodeRateLimited,
			RetryAfter: left.Seconds()}}, nil
}

// slowmodeSent records a message the caller sent in ch.
func (s *Service) slowmodeSent(q *guildaccess.Caller, ch *store.GuildChannel) {
	s.slow.sent(ch.ID, q.UserID, s.Clock.Now())
}
