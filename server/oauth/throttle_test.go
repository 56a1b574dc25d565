package oauth

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLoginThrottleByUsernameAndAddress(t *testing.T) {
	var th LoginThrottle
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	keys := func(user string) []string { return []string{"user:" + user, "ip:10.0.0.1"} }

	for range MaxLoginFailures - 1 {
		th.failed(keys("alice"), now)
	}
	assert.Zero(t, th.locked(keys("alice"), now), "below the limit")
	th.failed(keys("alice"), now.Add(time.Minute))
	assert.Equal(t, LoginLockout, th.locked(keys("alice"), now), "at the limit: until the deciding failure is old")
	th.succeeded("user:alice")
	assert.Zero(t, th.locked(keys("alice"), now), "a success clears the username")

	// Many players behind one address: each fails a little, the address locks at its own limit.
	for i := range MaxAddressFailures {
		th.failed(keys(fmt.Sprint("p", i)), now)
	}
	assert.Positive(t, th.locked(keys("someone-new"), now), "the address is locked")
	assert.Zero(t, th.locked([]string{"user:someone-new", "ip:10.0.0.2"}, now), "another address is not")
	assert.Zero(t, th.locked(keys("someone-new"), now.Add(LoginLockout)), "the lock ends")

	var none *LoginThrottle
	none.failed(keys("x"), now)
	assert.Zero(t, none.locked(keys("x"), now), "nil throttles nothing")
	assert.Equal(t, "Too many failed sign-in attempts. Try again in 1 minute.", lockedText(30*time.Second))
}

// RFC 8628 5.1: an address's user codes lock after MaxCodeFailures, a device request's logins
// after MaxLoginFailures; the texts name the wait in minutes.
func TestUserCodeThrottleLimits(t *testing.T) {
	var th LoginThrottle
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	code, device := []string{"code:10.0.0.1"}, []string{deviceKey("BCDFGHJK")}
	for range MaxCodeFailures - 1 {
		th.failed(code, now)
	}
	assert.Zero(t, th.locked(code, now), "below the limit")
	th.failed(code, now)
	assert.Equal(t, LoginLockout, th.locked(code, now))
	for range MaxLoginFailures {
		th.failed(device, now)
	}
	assert.Equal(t, LoginLockout, th.locked(device, now))
	assert.Equal(t, "Too many wrong codes. Try again in 15 minutes.", codeLockedText(LoginLockout))
}
