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

	"sdkpp/core/internal/backoff"
	"sdkpp/core/rest"
	"sdkpp/core/token"
	"sdkpp/internal/clock"
)

// RefreshBackoff spaces the attempts of an automatic refresh that failed on the network or with
// a retryable status; the waits run on the Client's clock.
var RefreshBackoff = backoff.Policy{Initial: time.Second, Max: time.Minute, Jitter: 0.5}

// ErrSpentRefresh answers a refresh with a refresh token the Client presented before.
var ErrSpentRefresh = &rest.Error{Status: http.StatusBadRequest, OAuthError: "invalid_grant",
	OAuthDescription: "this refresh token was used already (by the SDK's automatic refresh or an earlier RefreshToken) and is not sent again; use the tokens from TokenRefreshedCallback or sign in again"}

// Refresh prepares the game's refresh of a refresh token (RefreshToken) and returns what runs
// it. The token is spent at once (token.Store.Spend): one this Client presented already (its own
// automatic refresh, or an earlier call) fails with ErrSpentRefresh without being sent, since the
// service would take a second use for theft and revoke the grant (RFC 9700 4.14.2). A failure
// that proves the service never acted on it (rest.Error.Unprocessed) gives it back.
func (f *Flows) Refresh(appID uint64, refresh string) func(context.Context) (*Tokens, error) {
	f.Secrets.Add(refresh)
	spent := !f.Tokens.Spend(refresh)
	return func(ctx context.Context) (*Tokens, error) {
		if spent {
			return nil, ErrSpentRefresh
		}
		t, err := f.Exchange(ctx, RefreshGrant(appID, refresh))
		var re *rest.Error
		if errors.As(err, &re) && re.Unprocessed() {
			f.Tokens.Unspend(refresh) // the service never saw it: the game may try again
		}
		return t, err
	}
}

// AutoRefresh refreshes the access token old, if it is still the one in use, and renews the
// connection with the new one. It runs on a goroutine of the Client, which Close stops. It is the
// Refresh timer of the token store.
//
// Its refresh token is spent first (token.Store.Spend), so a second refresh of old, racing this
// one, presents nothing; and it is sent again only after a failure that proves the service never
// acted on it (rest.Error.Unprocessed). After any other failure the service may have rotated it,
// and a second presentation would revoke the whole grant (RFC 9700 4.14.2), so the refresh stops
// and the game is told as for a refused refresh.
func (f *Flows) AutoRefresh(old string) {
	it, inUse := f.Tokens.InUse(old)
	if !inUse || !f.Tokens.Spend(it.Refresh) {
		return // the game set another token meanwhile, or another refresh holds this one
	}
	f.Start(func(ctx context.Context) {
		for attempt := 0; ; attempt++ {
			if _, inUse := f.Tokens.InUse(old); !inUse {
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
			switch {
			case errors.As(err, &re) && re.Unprocessed():
			case errors.As(err, &re) && re.Network:
				f.Logf(Error, "automatic token refresh failed: %v; the service may have used the refresh token, so it is not sent again; the token expires at %s and the user must sign in again", err, it.Expires.Format(time.RFC3339))
				f.Expiring()
				return
			default:
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
