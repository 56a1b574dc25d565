package loginthrottle

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestThrottleLocksAndClears(t *testing.T) {
	var th Throttle
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := httptest.NewRequest("POST", "/", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	keys := Keys(r, " Admin ")
	require.Equal(t, []string{"user:admin", "ip:10.0.0.1"}, keys)
	for range MaxLoginFailures {
		assert.Zero(t, th.Locked(keys, now))
		th.Failed(keys, now)
	}
	assert.Equal(t, Lockout, th.Locked(keys, now), "locked until the deciding failure is Lockout old")
	assert.Zero(t, th.Locked(keys, now.Add(Lockout)), "the lock ends")
	th.Succeeded(UserKey("admin"))
	assert.Zero(t, th.Locked(keys, now), "a success clears the username")

	var none *Throttle
	none.Failed(keys, now)
	assert.Zero(t, none.Locked(keys, now), "nil throttles nothing")

	w := httptest.NewRecorder()
	RetryAfter(w, 1500*time.Millisecond)
	assert.Equal(t, "2", w.Header().Get("Retry-After"))
	assert.Equal(t, "Too many failed sign-in attempts. Try again in 15 minutes.", LockedText(Lockout))
}
