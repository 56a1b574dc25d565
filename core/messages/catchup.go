package messages

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"sdkpp/core/internal/backoff"
	"sdkpp/core/rest"
	"sdkpp/core/users"
	"sdkpp/internal/clock"
	"sdkpp/wire"
)

// Catching up after a new gateway session.
//
// A resumed session replays what the client missed. A new one (READY after the session was lost:
// a service restart, a resume window that passed, a client that fell too far behind) does not:
// the client fetches, for every cached lobby in which it has seen a message, the messages after
// the last one it saw (GET /lobbies/{id}/messages?after=, 200 a page, oldest page first) and
// feeds them through the path of a live dispatch. Live messages of a lobby that is catching up
// are held and delivered after the fetched ones, so that each message reaches the game once and
// in order. Each new session starts a new generation of the cache: a catch-up of an older
// generation stops and leaves what it held to the newer one.
//
// A lobby in which no message was delivered yet catches up from its last_message_id as the
// client first saw the lobby.

// CatchUpPageSize is how many messages one catch-up request asks for (the service's maximum).
const CatchUpPageSize = 200

// CatchUpBackoff spaces the retries of a failed catch-up request. Its jitter spreads the players
// who all catch up at once after a service restart.
var CatchUpBackoff = backoff.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.5}

// Fetcher is what a catch-up uses of its Client.
type Fetcher struct {
	API   *rest.Client
	Clock clock.Clock
	// Auth returns the Authorization header of the token in use.
	Auth func() string
	// Deliver takes a message as if it had arrived live.
	Deliver func(m *Message, author *users.User)
	// Info and Warn write to the Client's log; Verbose too, at the lowest level.
	Verbose, Info, Warn func(format string, args ...any)
}

// CatchUp fetches and delivers the missed messages of the lobbies todo, of session generation
// gen (NewSession), one lobby after the other. It returns when all have caught up, when a newer
// session took over or when ctx is done.
func (c *Cache) CatchUp(ctx context.Context, f *Fetcher, gen uint64, todo []uint64) {
	for _, id := range todo {
		if !c.catchUpLobby(ctx, f, gen, id) {
			return // a newer session took over, or the client is closing
		}
	}
}

// catchUpLobby fetches and delivers one lobby's missed messages, then the live ones it held. It
// returns false when it stopped because a newer session started or ctx is done; the held
// messages then stay for the newer catch-up.
func (c *Cache) catchUpLobby(ctx context.Context, f *Fetcher, gen, lobbyID uint64) bool {
	after := c.CatchUpFrom(lobbyID)
	for attempt := 0; ; {
		if !c.Current(gen) || ctx.Err() != nil {
			return false
		}
		page, err := f.missedPage(ctx, lobbyID, after)
		var re *rest.Error
		switch {
		case errors.As(err, &re) && (re.Status == http.StatusNotFound || re.Status == http.StatusForbidden):
			f.Info("catch-up of lobby %d: %v; nothing to fetch", lobbyID, err)
			page = nil // the lobby is gone or the player left: deliver what was held
		case err != nil:
			f.Warn("catch-up of lobby %d failed: %v; retrying", lobbyID, err)
			if clock.Sleep(ctx, f.Clock, CatchUpBackoff.Delay(attempt, rand.Float64())) != nil {
				return false
			}
			attempt++
			continue
		}
		for i := len(page) - 1; i >= 0; i-- { // the page is newest first
			w := &page[i]
			if uint64(w.LobbyID) != lobbyID {
				continue
			}
			f.Deliver(FromLobby(w), users.Of(&w.Author))
			after = max(after, uint64(w.ID))
		}
		if len(page) < CatchUpPageSize {
			break
		}
	}
	if n := c.releaseHeld(f, gen, lobbyID); n >= 0 {
		f.Verbose("lobby %d caught up; %d live messages were held", lobbyID, n)
		return true
	}
	return false
}

// missedPage fetches the oldest page of a lobby's messages above after, newest first.
func (f *Fetcher) missedPage(ctx context.Context, lobbyID, after uint64) ([]wire.LobbyMessage, error) {
	var page []wire.LobbyMessage
	err := f.API.Do(ctx, rest.Request{Auth: f.Auth(), Path: "/lobbies/" + strconv.FormatUint(lobbyID, 10) +
		"/messages?limit=" + strconv.Itoa(CatchUpPageSize) + "&after=" + strconv.FormatUint(after, 10)}, &page)
	return page, err
}

// releaseHeld delivers the live messages held for a lobby, in arrival order, until none is left,
// and ends its catch-up. It returns how many it delivered, or -1 when a newer session took over.
func (c *Cache) releaseHeld(f *Fetcher, gen, lobbyID uint64) int {
	n := 0
	for {
		list, done, ok := c.TakeHeld(gen, lobbyID)
		switch {
		case !ok:
			return -1
		case done:
			return n
		}
		for _, h := range list {
			f.Deliver(h.M, h.Author)
		}
		n += len(list)
	}
}
