package oauth

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Login throttling on the consent, device and invite pages: after MaxLoginFailures wrong
// passwords within LoginLockout for one username, or MaxAddressFailures from one address (which
// may be many players behind one NAT), further logins for it are refused (429, with the time to
// wait) until the deciding failure is LoginLockout old. The password
// is not checked while locked, so the lock gives no answer to guess against. A successful login
// clears its username's failures.
const (
	MaxLoginFailures   = 5
	MaxAddressFailures = 20
	LoginLockout       = 15 * time.Minute
	// maxThrottleKeys bounds the memory of failures; when full, the oldest keys are forgotten.
	maxThrottleKeys = 1 << 16
)

// LoginThrottle remembers recent login failures by key ("user:<name>", "ip:<address>"). Its zero
// value is ready; a nil *LoginThrottle throttles nothing.
type LoginThrottle struct {
	mu       sync.Mutex
	failures map[string][]time.Time // each key's failures within LoginLockout, oldest first
}

// keys returns the throttle keys of a login attempt.
func throttleKeys(r *http.Request, username string) []string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return []string{"user:" + strings.ToLower(strings.TrimSpace(username)), "ip:" + host}
}

// limitOf is the number of failures that locks key.
func limitOf(key string) int {
	if strings.HasPrefix(key, "ip:") {
		return MaxAddressFailures
	}
	return MaxLoginFailures
}

// locked reports how long the attempt must wait, zero when it may go ahead.
func (t *LoginThrottle) locked(keys []string, now time.Time) time.Duration {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		fs, limit := t.recentLocked(k, now), limitOf(k)
		if len(fs) >= limit {
			wait = max(wait, fs[len(fs)-limit].Add(LoginLockout).Sub(now))
		}
	}
	return wait
}

// failed records a wrong password for keys.
func (t *LoginThrottle) failed(keys []string, now time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failures == nil {
		t.failures = map[string][]time.Time{}
	}
	if len(t.failures) >= maxThrottleKeys {
		t.sweepLocked(now)
	}
	for _, k := range keys {
		fs := t.recentLocked(k, now)
		if len(fs) >= limitOf(k) { // keep only what decides the lock
			fs = fs[1:]
		}
		t.failures[k] = append(fs, now)
	}
}

// succeeded clears the failures of a username (the address keeps its own).
func (t *LoginThrottle) succeeded(userKey string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, userKey)
}

func (t *LoginThrottle) recentLocked(k string, now time.Time) []time.Time {
	fs := t.failures[k]
	for len(fs) > 0 && !now.Before(fs[0].Add(LoginLockout)) {
		fs = fs[1:]
	}
	if len(fs) == 0 {
		delete(t.failures, k)
		return nil
	}
	t.failures[k] = fs
	return fs
}

// sweepLocked forgets keys without recent failures, and every key when that frees nothing.
func (t *LoginThrottle) sweepLocked(now time.Time) {
	for k := range t.failures {
		t.recentLocked(k, now)
	}
	if len(t.failures) >= maxThrottleKeys {
		clear(t.failures)
	}
}

// lockedText is the message of a refused login.
func lockedText(wait time.Duration) string {
	minutes := int(math.Ceil(wait.Minutes()))
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	return fmt.Sprintf("Too many failed sign-in attempts. Try again in %d %s.", minutes, unit)
}
