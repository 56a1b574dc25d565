package oauth

import (
	"net/http"
	"time"

	"sdkpp/server/loginthrottle"
)

// Login throttling on the consent, device and invite pages (package loginthrottle): after
// MaxLoginFailures wrong passwords within LoginLockout for one username, or MaxAddressFailures
// from one address (which may be many players behind one NAT), further logins for it are
// refused (429, with the time to wait) until the deciding failure is LoginLockout old. The
// password is not checked while locked, so the lock gives no answer to guess against. A
// successful login clears its username's failures.
//
// User codes on the device pages are throttled the same way (RFC 8628 5.1: the short code is
// strong enough only with attempts limited): after MaxCodeFailures unknown or expired codes from
// one address, that address's codes are not looked up until the lockout passes; and one device
// request takes at most MaxLoginFailures wrong logins on its form.
const (
	MaxLoginFailures   = loginthrottle.MaxLoginFailures
	MaxAddressFailures = loginthrottle.MaxAddressFailures
	MaxCodeFailures    = loginthrottle.MaxCodeFailures
	LoginLockout       = loginthrottle.Lockout
)

// LoginThrottle remembers recent login failures by key ("user:<name>", "ip:<address>"). Its zero
// value is ready; a nil *LoginThrottle throttles nothing.
type LoginThrottle struct{ t loginthrottle.Throttle }

// NewLoginThrottle returns a LoginThrottle keeping its failures in shared (every node's; see
// package loginthrottle), or in memory when shared is nil.
func NewLoginThrottle(shared loginthrottle.Failures) *LoginThrottle {
	return &LoginThrottle{t: loginthrottle.Throttle{Shared: shared}}
}

// throttleKeys returns the throttle keys of a login attempt: its username's, its address's, and
// those of what it answers (deviceKey).
func throttleKeys(r *http.Request, username string, more ...string) []string {
	return loginthrottle.Keys(r, username, more...)
}

// codeKey is the throttle key of the user codes tried from r's address.
func codeKey(r *http.Request) string { return "code:" + loginthrottle.RemoteHost(r) }

// deviceKey is the throttle key of the logins on one device request's form.
func deviceKey(userCode string) string { return "device:" + userCode }

// throttle is t's throttle; nil (throttling nothing) when t is nil.
func (t *LoginThrottle) throttle() *loginthrottle.Throttle {
	if t == nil {
		return nil
	}
	return &t.t
}

// locked reports how long the attempt must wait, zero when it may go ahead.
func (t *LoginThrottle) locked(keys []string, now time.Time) time.Duration {
	return t.throttle().Locked(keys, now)
}

// failed records a wrong password for keys.
func (t *LoginThrottle) failed(keys []string, now time.Time) { t.throttle().Failed(keys, now) }

// succeeded clears the failures of a username (the address keeps its own).
func (t *LoginThrottle) succeeded(userKey string) { t.throttle().Succeeded(userKey) }

// lockedText is the message of a refused login.
func lockedText(wait time.Duration) string { return loginthrottle.LockedText(wait) }

// codeLockedText is the message of a refused user code.
func codeLockedText(wait time.Duration) string {
	return "Too many wrong codes. Try again in " + loginthrottle.MinutesText(wait) + "."
}

// retryAfter sets the Retry-After header of a refusal for wait, in whole seconds rounded up.
func retryAfter(w http.ResponseWriter, wait time.Duration) { loginthrottle.RetryAfter(w, wait) }
