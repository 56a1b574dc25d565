package messages

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"sdkpp/server/counters"
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

// slowmode counts, for each channel and member, the messages of the current interval: at most
// one, in a window that starts with a message and lasts the channel's interval (package
// counters, in memory on one node and in the store where nodes share it, so that slowmode holds
// whichever nodes a member's messages reach). In memory it is not stored: after a restart every
// member may send once more at once, which only loosens slowmode for one message. An interval
// changed meanwhile counts from the member's next message.
type slowmode struct {
	once    sync.Once
	counter counters.Counter
}

// of returns the counter: c, or when c is nil one in memory.
func (m *slowmode) of(c counters.Counter) counters.Counter {
	m.once.Do(func() {
		m.counter = c
		if m.counter == nil {
			m.counter = counters.NewMemory()
		}
	})
	return m.counter
}

// slowmodeKey is the counter of userID's messages in a channel.
func slowmodeKey(channelID, userID uint64) string {
	return "slow|" + strconv.FormatUint(channelID, 10) + "|" + strconv.FormatUint(userID, 10)
}

// slowmodeCheck refuses a message in ch when the channel has slowmode, the sender sent one there
// within its interval and may not bypass it (429 20016 with retry_after in the body and
// Retry-After). Bots are unaffected, as on the platform. When it lets the message through it
// returns the counter the message must be claimed in (slowmodeClaim) just before it is saved,
// nil when slowmode does not apply; otherwise the httpx.Reply to answer with.
func (s *Service) slowmodeCheck(q *guildaccess.Caller, ch *store.GuildChannel, perms uint64) (*counters.Hit, any, error) {
	if q.Bot {
		return nil, nil, nil
	}
	cs, err := s.Store.GetChannelSettings(q.Ctx, ch.ID)
	if err != nil || cs.RateLimitPerUser == 0 {
		return nil, nil, err
	}
	now := s.Clock.Now()
	hit := &counters.Hit{Key: slowmodeKey(ch.ID, q.UserID), Limit: 1, Window: time.Duration(cs.RateLimitPerUser) * time.Second}
	if perms&BypassSlowmode(now) != 0 {
		// Never refused, but counted: should the member lose the bypass, the interval runs
		// from this message.
		hit.Limit = math.MaxInt32
		return hit, nil, nil
	}
	w, err := s.slow.of(s.Counter).Peek(q.Ctx, hit.Key, now)
	if err != nil {
		return nil, nil, err
	}
	if w.Count > 0 {
		return nil, slowmodeRefusal(w.End.Sub(now)), nil
	}
	return hit, nil, nil
}

// slowmodeRefusal is the answer to a message sent left too early.
func slowmodeRefusal(left time.Duration) any {
	// The platform sends Retry-After too, in whole seconds rounded up, beside the body's exact
	// retry_after.
	retry := strconv.Itoa(int(math.Ceil(left.Seconds())))
	return httpx.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {retry}},
		Body: wire.SlowmodeRateLimited{Message: "You are being rate limited.", Code: wire.CodeSlowmodeRateLimited,
			RetryAfter: left.Seconds()}}
}

// slowmodeClaim counts the caller's message in the counter slowmodeCheck returned, just before
// the message is saved: nil when it may be saved, else the answer. Of two messages that passed
// the check at once (on two nodes), one is counted and the other refused.
func (s *Service) slowmodeClaim(q *guildaccess.Caller, hit *counters.Hit) (any, error) {
	if hit == nil {
		return nil, nil
	}
	now := s.Clock.Now()
	ok, ws, err := s.slow.of(s.Counter).Hit(q.Ctx, now, *hit)
	if err != nil || ok {
		return nil, err
	}
	return slowmodeRefusal(ws[0].End.Sub(now)), nil
}
