package oauth

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
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
//
// User codes on the device pages are throttled the same way (RFC 8628 5.1: the short code is
// strong enough only with attempts limited): after MaxCodeFailures unknown or expired codes from
// one address, that address's codes are not looked up until the lockout passes; and one device
// request takes at most MaxLoginFailures wrong logins on its form.
const (
	MaxLoginFailures   = 5
	MaxAddressFailures = 20
	MaxCodeFailures    = 10
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

// throttleKeys returns the throttle keys of a login attempt: its username's, its address's, and
// those of what it answers (deviceKey).
func throttleKeys(r *http.Request, username string, more ...string) []string {
	return append([]string{"user:" + strings.ToLower(strings.TrimSpace(username)), "ip:" + remoteHost(r)}, more...)
}

// codeKey is the throttle key of the user codes tried from r's address.
func codeKey(r *http.Request) string { return "code:" + remoteHost(r) }

// deviceKey is the throttle key of the logins on one device request's form.
func deviceKey(userCode string) string { return "device:" + userCode }

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return host
}

// limitOf is the number of failures that locks key.
func limitOf(key string) int {
	switch {
	case strings.HasPrefix(key, "ip:"):
		return MaxAddressFailures
	case strings.HasPrefix(key, "code:"):
		return MaxCodeFailures
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
	return "Too many failed sign-in attempts. Try again in " + minutesText(wait) + "."
}

// codeLockedText is the message of a refused user code.
func codeLockedText(wait time.Duration) string {
	return "Too many wrong codes. Try again in " + minutesText(wait) + "."
}

// minutesText is wait in whole minutes, rounded up: "1 minute", "15 minutes".
func minutesText(wait time.Duration) string {
	minutes := int(math.Ceil(wait.Minutes()))
	if minutes == 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", minutes)
}

// retryAfter sets the Retry-After header of a refusal for wait, in whole seconds rounded up.
func retryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
}
