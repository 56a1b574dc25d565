package core

// The automatic token refresh: when the access token in use came from one of the Client's own
// exchanges with a refresh token, the Client refreshes it shortly before it expires, swaps the
// token the gateway uses, and renews the gateway connection, without the game doing anything.
// The game's TokenExpirationCallback runs only when the refresh is refused (invalid_grant, rule
// AU-6) or keeps failing until the token has expired.

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"sdkpp/core/internal/backoff"

	"sdkpp/core/clock"
	"sdkpp/core/rest"
	"sdkpp/core/token"
)

// refreshBackoff spaces the attempts of an automatic refresh that failed on the network or with
// a retryable status; the waits run on the Client's clock.
var refreshBackoff = backoff.Policy{Initial: time.Second, Max: time.Minute, Jitter: 0.5}

// autoRefresh refreshes the access token old, if it is still the one in use, and renews the
// connection with the new one. It runs on a goroutine of the Client, which Close stops.
//
// Its refresh token is spent first (token.Store.Spend), so a second refresh of old, racing this
// one, presents nothing; and it is sent again only after a failure that proves the service never
// acted on it (rest.Error.Unprocessed). After any other failure the service may have rotated it,
// and a second presentation would revoke the whole grant (RFC 9700 4.14.2), so the refresh stops
// and the game is told as for a refused refresh.
func (c *Client) autoRefresh(old string) {
	it, inUse := c.auth.tokens.InUse(old)
	if !inUse || !c.auth.tokens.Spend(it.Refresh) {
		return // the game set another token meanwhile, or another refresh holds this one
	}
	c.start(func(ctx context.Context) {
		for attempt := 0; ; attempt++ {
			if _, inUse := c.auth.tokens.InUse(old); !inUse {
				return // the game set another token meanwhile
			}
			t, err := c.refreshGrant(ctx, it)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				c.swapToken(old, t, it.AppID)
				return
			}
			var re *rest.Error
			switch {
			case errors.As(err, &re) && re.Unprocessed():
			case errors.As(err, &re) && re.Network:
				c.logf(LoggingSeverityError, "automatic token refresh failed: %v; the service may have used the refresh token, so it is not sent again; the token expires at %s and the user must sign in again", err, it.Expires.Format(time.RFC3339))
				c.tokenExpiring()
				return
			default:
				c.logf(LoggingSeverityError, "automatic token refresh refused: %v; the token expires at %s and the user must sign in again", err, it.Expires.Format(time.RFC3339))
				c.tokenExpiring()
				return
			}
			if !c.clock.Now().Before(it.Expires) {
				c.logf(LoggingSeverityError, "automatic token refresh failed until the token expired: %v", err)
				c.tokenExpiring()
				return
			}
			d := refreshBackoff.Delay(attempt, rand.Float64())
			c.logf(LoggingSeverityWarning, "automatic token refresh failed: %v; retrying in %v", err, d.Round(time.Millisecond))
			if clock.Sleep(ctx, c.clock, d) != nil {
				return
			}
		}
	})
}

// refreshGrant runs the refresh_token grant for it.
func (c *Client) refreshGrant(ctx context.Context, it token.Issued) (*tokenResponse, error) {
	var t tokenResponse
	err := c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: url.Values{
		"grant_type":    {"refresh_token"},
		"client_id":     {strconv.FormatUint(it.AppID, 10)},
		"refresh_token": {it.Refresh},
	}}, &t)
	if err == nil && t.AccessToken == "" {
		err = &rest.Error{Status: http.StatusOK, Message: "the token response has no access_token"}
	}
	return &t, err
}

// swapToken makes t the token in use in place of old, arms its own refresh, and renews the
// gateway connection so that the service re-authenticates the session with it.
func (c *Client) swapToken(old string, t *tokenResponse, appID uint64) {
	c.remember(t, appID)
	if !c.auth.tokens.Swap(old, t.AccessToken) { // the game set another token while the refresh ran
		return
	}
	gw := c.gateway()
	c.logf(LoggingSeverityInfo, "the access token was refreshed; renewing the gateway connection")
	if gw != nil {
		gw.Renew()
	}
	postHandler(c, &c.auth.refreshed, func(f ClientTokenRefreshedCallback) {
		f(t.AccessToken, t.RefreshToken, t.tokenType(), t.ExpiresIn, t.Scope)
	})
}

// SetTokenRefreshedCallback sets the handler of the SDK's own token refreshes, replacing the
// previous one. Refresh tokens rotate: a game that stores tokens between launches must store the
// pair this handler gets.
func (c *Client) SetTokenRefreshedCallback(cb Callback[ClientTokenRefreshedCallback]) {
	setHandler(c, &c.auth.refreshed, cb)
}
