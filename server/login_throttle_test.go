package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/browser"
	"sdkpp/server/oauth"
	"sdkpp/server/servertest"
)

// Issue 12, class 5: wrong passwords on the consent page are throttled with a clear message. After
// five for one username, even the right password is refused (429, the wait named) until the
// lockout has passed on the service's clock; another username is not locked by them.
func TestConsentLoginThrottle(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	u := authz{clientID: e.App.ID.String(), scope: "openid sdk.social_layer", state: "s", redirect: loopbackRedirect}.url(e)
	login := func(user, password string) error {
		_, err := browser.New().Authorize(context.Background(), u, browser.Choice{Username: user, Password: password})
		return err
	}
	for i := range oauth.MaxLoginFailures {
		err := login("alice", "wrong")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "HTTP 401", "failure %d", i+1)
	}
	err := login("alice", e.User("alice").Password)
	require.Error(t, err, "the right password during the lockout")
	assert.Contains(t, err.Error(), "HTTP 429")
	assert.Contains(t, err.Error(), "Too many failed sign-in attempts. Try again in 15 minutes.")

	assert.NoError(t, login("bob", e.User("bob").Password), "another user is not locked")

	e.Clock.Advance(oauth.LoginLockout)
	assert.NoError(t, login("alice", e.User("alice").Password), "after the lockout")
}
