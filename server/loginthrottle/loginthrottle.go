// Package loginthrottle limits password and code guessing on the service's web pages (the
// consent, device and invite pages, and the operator console): it remembers recent failures by
// key and tells how long a further attempt must wait.
//
// After MaxLoginFailures wrong passwords within Lockout for one username ("user:<name>"), or
// MaxAddressFailures from one address ("ip:<address>", which may be many people behind one NAT),
// further attempts for it are refused until the deciding failure is Lockout old. Keys starting
// "code:" lock after MaxCodeFailures. Callers do not check the password while locked, so the lock
// gives no answer to guess against, and clear a username's failures when it signs in.
//
// A Throttle keeps the failures in this process's memory, or, with Shared set, in the store that
// every node of a cluster shares, so that a guesser spreading attempts over nodes is locked all
// the same. Should the store fail, an attempt is let through (its password check needs the
// store too).
package loginthrottle

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// The limits and the lockout of the keys.
const (
	MaxLoginFailures   = 5
	MaxAddressFailures = 20
	MaxCodeFailures    = 10
	Lockout            = 15 * time.Minute
	// maxKeys bounds the memory of failures; when full, the oldest keys are forgotten.
	maxKeys = 1 << 16
)

// Throttle remembers recent failures by key. Its zero value is ready; a nil *Throttle throttles
// nothing.
type Throttle struct {
	// Shared, when set, keeps the failures for every node (store.SharedStateStore); nil keeps
	// them in memory.
	Shared Failures

	mu       sync.Mutex
	failures map[string][]time.Time // each key's failures within Lockout, oldest first
	sweep    clock.Chore            // Shared: the deletions of old failures
}

// Failures keeps sign-in failures where every node sees them (store.SharedStateStore).
type Failures interface {
	AddLoginFailure(ctx context.Context, keys []string, at time.Time) error
	NthLoginFailure(ctx context.Context, key string, since time.Time, n int) (time.Time, bool, error)
	ClearLoginFailures(ctx context.Context, key string) error
	SweepLoginFailures(ctx context.Context, before time.Time) error
}

// sweepEvery is how often, on the clock of the failures, a Shared throttle deletes old ones.
const sweepEvery = time.Minute

// Keys returns the keys of a sign-in attempt on r for username: the username's and the
// address's, followed by more.
func Keys(r *http.Request, username string, more ...string) []string {
	return append([]string{UserKey(username), "ip:" + RemoteHost(r)}, more...)
}

// UserKey is the key of a username's failures.
func UserKey(username string) string { return "user:" + strings.ToLower(strings.TrimSpace(username)) }

// RemoteHost is the address r came from, without its port.
func RemoteHost(r *http.Request) string {
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

// Locked reports how long an attempt with keys must wait, zero when it may go ahead.
func (t *Throttle) Locked(keys []string, now time.Time) time.Duration {
	if t == nil {
		return 0
	}
	var wait time.Duration
	if t.Shared != nil {
		for _, k := range keys {
			limit := limitOf(k)
			at, ok, err := t.Shared.NthLoginFailure(context.Background(), k, now.Add(-Lockout), limit)
			if err == nil && ok {
				wait = max(wait, at.Add(Lockout).Sub(now))
			}
		}
		return wait
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		fs, limit := t.recentLocked(k, now), limitOf(k)
		if len(fs) >= limit {
			wait = max(wait, fs[len(fs)-limit].Add(Lockout).Sub(now))
		}
	}
	return wait
}

// Failed records a failure for keys.
func (t *Throttle) Failed(keys []string, now time.Time) {
	if t == nil {
		return
	}
	if t.Shared != nil {
		t.failedShared(keys, now)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failures == nil {
		t.failures = map[string][]time.Time{}
	}
	if len(t.failures) >= maxKeys {
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

// Succeeded clears the failures of one key (a username's; its address keeps its own).
func (t *Throttle) Succeeded(key string) {
	if t == nil {
		return
	}
	if t.Shared != nil {
		_ = t.Shared.ClearLoginFailures(context.Background(), key) // at worst the failures lock a little longer
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
}

// failedShared is Failed on the Shared store, deleting the failures older than Lockout at most
// once per sweepEvery.
func (t *Throttle) failedShared(keys []string, now time.Time) {
	ctx := context.Background()
	if t.sweep.Due(now, sweepEvery) {
		_ = t.Shared.SweepLoginFailures(ctx, now.Add(-Lockout)) // the next sweep tries again
	}
	_ = t.Shared.AddLoginFailure(ctx, keys, now) // a store that fails here fails the sign-ins too
}

func (t *Throttle) recentLocked(k string, now time.Time) []time.Time {
	fs := t.failures[k]
	for len(fs) > 0 && !now.Before(fs[0].Add(Lockout)) {
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
func (t *Throttle) sweepLocked(now time.Time) {
	for k := range t.failures {
		t.recentLocked(k, now)
	}
	if len(t.failures) >= maxKeys {
		clear(t.failures)
	}
}

// LockedText is the message of a refused sign-in.
func LockedText(wait time.Duration) string {
	return "Too many failed sign-in attempts. Try again in " + MinutesText(wait) + "."
}

// MinutesText is wait in whole minutes, rounded up: "1 minute", "15 minutes".
func MinutesText(wait time.Duration) string {
	minutes := int(math.Ceil(wait.Minutes()))
	if minutes == 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", minutes)
}

// RetryAfter sets the Retry-After header of a refusal for wait, in whole seconds rounded up.
func RetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
}
