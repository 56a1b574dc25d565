package auth

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
	"time"

	"sdkpp/core/clock"
	"sdkpp/core/internal/backoff"
	"sdkpp/core/rest"
	"sdkpp/core/token"
)

// RefreshBackoff spaces the attempts of an automatic refresh that failed on the network or with
// a retryable status; the waits run on the Client's clock.
var RefreshBackoff = backoff.Policy{Initial: time.Second, Max: time.Minute, Jitter: 0.5}

// AutoRefresh refreshes the access token old, if it is still the one in use, and renews the
// connection with the new one. It runs on a goroutine of the Client, which Close stops. It is the
// Refresh timer of the token store.
func (f *Flows) AutoRefresh(old string) {
	f.Start(func(ctx context.Context) {
		for attempt := 0; ; attempt++ {
			it, inUse := f.Tokens.InUse(old)
			if !inUse {
				return // the game set another token meanwhile
			}
			t, err := f.refreshGrant(ctx, it)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				f.swap(old, t, it.AppID)
				return
			}
			var re *rest.Error
			if errors.As(err, &re) && !re.Retryable() {
				f.Logf(Error, "automatic token refresh refused: %v; the token expires at %s and the user must sign in again", err, it.Expires.Format(time.RFC3339))
				f.Expiring()
				return
			}
			if !f.Clock.Now().Before(it.Expires) {
				f.Logf(Error, "automatic token refresh failed until the token expired: %v", err)
				f.Expiring()
				return
			}
			d := RefreshBackoff.Delay(attempt, rand.Float64())
			f.Logf(Warning, "automatic token refresh failed: %v; retrying in %v", err, d.Round(time.Millisecond))
			if clock.Sleep(ctx, f.Clock, d) != nil {
				return
			}
		}
	})
}

// refreshGrant runs the refresh_token grant for it.
func (f *Flows) refreshGrant(ctx context.Context, it token.Issued) (*Tokens, error) {
	var t Tokens
	err := f.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: url.Values(RefreshGrant(it.AppID, it.Refresh))}, &t)
	if err == nil && t.AccessToken == "" {
		err = &rest.Error{Status: http.StatusOK, Message: "the token response has no access_token"}
	}
	return &t, err
}

// swap makes t the token in use in place of old, arms its own refresh, and renews the gateway
// connection so that the service re-authenticates the session with it.
func (f *Flows) swap(old string, t *Tokens, appID uint64) {
	f.Remember(t, appID)
	if !f.Tokens.Swap(old, t.AccessToken) { // the game set another token while the refresh ran
		return
	}
	f.Logf(Info, "the access token was refreshed; renewing the gateway connection")
	f.Renew()
	f.Refreshed(t)
}
