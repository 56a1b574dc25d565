package core

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"sdkpp/core/clock"
	"sdkpp/core/internal/backoff"
	"sdkpp/core/messages"
	"sdkpp/core/rest"
	"sdkpp/core/users"
	"sdkpp/wire"
)

// Catching up after a new gateway session.
//
// A resumed session replays what the client missed. A new one (READY after the session was lost:
// a service restart, a resume window that passed, a client that fell too far behind) does not:
// the client fetches, for every cached lobby in which it has seen a message, the messages after
// the last one it saw (GET /lobbies/{id}/messages?after=, 200 a page, oldest page first) and
// feeds them through deliverCreated, the path of a live dispatch. Live messages of a lobby that
// is catching up are held and delivered after the fetched ones, so that each message reaches the
// game once and in order.
//
// A lobby in which no message was delivered yet catches up from its last_message_id as the
// client first saw the lobby.

// catchUpPageSize is how many messages one catch-up request asks for (the service's maximum).
const catchUpPageSize = 200

// catchUpBackoff spaces the retries of a failed catch-up request. Its jitter spreads the players
// who all catch up at once after a service restart.
var catchUpBackoff = backoff.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.5}

// startCatchUp begins a new session's catch-up of every cached lobby with a known last message;
// READY calls it.
func (c *Client) startCatchUp() {
	gen, todo := c.msg.cache.NewSession(c.lobby.cache.IDs())
	if len(todo) == 0 {
		return
	}
	c.start(func(ctx context.Context) {
		for _, id := range todo {
			if !c.catchUpLobby(ctx, gen, id) {
				return // a newer session took over, or the client is closing
			}
		}
	})
}

// catchUpLobby fetches and delivers one lobby's missed messages, then the live ones it held. It
// returns false when it stopped because a newer session started or the client is closing; the
// held messages then stay for the newer catch-up.
func (c *Client) catchUpLobby(ctx context.Context, gen, lobbyID uint64) bool {
	after := c.msg.cache.CatchUpFrom(lobbyID)
	for attempt := 0; ; {
		if !c.msg.cache.Current(gen) || ctx.Err() != nil {
			return false
		}
		page, err := c.missedPage(ctx, lobbyID, after)
		var re *rest.Error
		switch {
		case errors.As(err, &re) && (re.Status == http.StatusNotFound || re.Status == http.StatusForbidden):
			c.logf(LoggingSeverityInfo, "catch-up of lobby %d: %v; nothing to fetch", lobbyID, err)
			page = nil // the lobby is gone or the player left: deliver what was held
		case err != nil:
			c.logf(LoggingSeverityWarning, "catch-up of lobby %d failed: %v; retrying", lobbyID, err)
			if clock.Sleep(ctx, c.clock, catchUpBackoff.Delay(attempt, rand.Float64())) != nil {
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
			c.deliverCreated(messages.FromLobby(w), users.Of(&w.Author))
			after = max(after, uint64(w.ID))
		}
		if len(page) < catchUpPageSize {
			break
		}
	}
	if n := c.releaseHeld(gen, lobbyID); n >= 0 {
		c.logf(LoggingSeverityVerbose, "lobby %d caught up; %d live messages were held", lobbyID, n)
		return true
	}
	return false
}

// missedPage fetches the oldest page of a lobby's messages above after, newest first.
func (c *Client) missedPage(ctx context.Context, lobbyID, after uint64) ([]wire.LobbyMessage, error) {
	var page []wire.LobbyMessage
	err := c.api.Do(ctx, rest.Request{Auth: c.authHeader(), Path: "/lobbies/" + strconv.FormatUint(lobbyID, 10) +
		"/messages?limit=" + strconv.Itoa(catchUpPageSize) + "&after=" + strconv.FormatUint(after, 10)}, &page)
	return page, err
}

// releaseHeld delivers the live messages held for a lobby, in arrival order, until none is left,
// and ends its catch-up. It returns how many it delivered, or -1 when a newer session took over.
func (c *Client) releaseHeld(gen, lobbyID uint64) int {
	n := 0
	for {
		list, done, ok := c.msg.cache.TakeHeld(gen, lobbyID)
		switch {
		case !ok:
			return -1
		case done:
			return n
		}
		for _, h := range list {
			c.deliverCreated(h.M, h.Author)
		}
		n += len(list)
	}
}
