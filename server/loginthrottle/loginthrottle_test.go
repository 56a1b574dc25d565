package loginthrottle

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
)

// The throttle behaves the same with its failures in memory and in a store.
func TestThrottleLocksAndClears(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testLocksAndClears(t, &Throttle{}) })
	t.Run("shared", func(t *testing.T) { testLocksAndClears(t, &Throttle{Shared: openStore(t)}) })
}

// Failures spread over nodes lock on every node: two throttles on one store are one throttle.
func TestSharedThrottleHoldsAcrossNodes(t *testing.T) {
	st := openStore(t)
	a, b := &Throttle{Shared: st}, &Throttle{Shared: st}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	keys := []string{"user:admin", "ip:10.0.0.1"}
	for i := range MaxLoginFailures {
		node := []*Throttle{a, b}[i%2]
		assert.Zero(t, node.Locked(keys, now))
		node.Failed(keys, now.Add(time.Duration(i)*time.Second))
	}
	assert.Equal(t, Lockout, a.Locked(keys, now.Add(Lockout-Lockout)), "locked on a by failures made on both")
	assert.Equal(t, Lockout-time.Second, b.Locked(keys, now.Add(time.Second)), "and on b")
	b.Succeeded("user:admin")
	assert.Zero(t, a.Locked(keys, now), "a success on b clears the username on a")
	// The sweep, a minute on, forgets what is Lockout old.
	b.Failed([]string{"ip:10.0.0.2"}, now.Add(Lockout+time.Minute))
	_, ok, err := st.NthLoginFailure(context.Background(), "ip:10.0.0.1", time.Time{}, 1)
	require.NoError(t, err)
	assert.False(t, ok, "swept")
}

func openStore(t *testing.T) *store.DB {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), "")
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func testLocksAndClears(t *testing.T, th *Throttle) {
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
