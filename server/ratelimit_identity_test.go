package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
)

// Issue 12, class 3: the limiter keys on who a request authenticates as, not on the header's
// text. The same token written with another case or extra spaces, and a second token of the same
// user in the same game, share one bucket; a request whose credential is not valid is limited by
// its address.
func TestRateLimitKeysOnTheAuthenticatedCaller(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		servertest.WithConfig(func(c *server.Config) {
			c.RateLimits = ratelimit.Config{Routes: map[string]ratelimit.Rule{"GET /users/@me": {Limit: 4, Window: 5 * time.Second}}}
		}))
	first := linkedTokens(t, e, "alice", "openid sdk.social_layer").AccessToken
	second := linkedTokens(t, e, "alice", "openid sdk.social_layer").AccessToken
	headers := []string{"Bearer " + first, "bearer " + first, "BEARER " + first, "Bearer   " + first + "  ",
		"Bearer " + second, "bEaReR " + second}
	allowed := 0
	for _, h := range headers {
		r := do(t, http.MethodGet, e.APIURL+"/users/@me", nil, http.Header{"Authorization": {h}})
		if r.Status == http.StatusOK {
			allowed++
		} else {
			assert.Equal(t, http.StatusTooManyRequests, r.Status, "%q: %s", h, r.Body)
		}
	}
	assert.Equal(t, 4, allowed, "one bucket for one user in one game, however the header is written")

	// Another player has a bucket of their own.
	bob := linkedTokens(t, e, "bob", "openid sdk.social_layer").AccessToken
	assert.Equal(t, http.StatusOK, do(t, http.MethodGet, e.APIURL+"/users/@me", nil, bearer(bob)).Status)

	// Invalid credentials share the address's bucket: spraying tokens gets no fresh buckets.
	refused := 0
	for i := range 6 {
		r := do(t, http.MethodGet, e.APIURL+"/users/@me", nil, http.Header{"Authorization": {"Bearer not-a-token-" + string(rune('a'+i))}})
		if r.Status == http.StatusTooManyRequests {
			refused++
		}
	}
	assert.Equal(t, 2, refused, "six invalid tokens from one address: four 401s, then 429s")
}
