// Package token keeps the access token a Client uses, what it knows of the tokens it obtained
// itself (their expiry and refresh token), and the one timer that acts before the token in use
// expires: an automatic refresh when the Client holds its refresh token, else the game's
// expiration warning.
//
// A refresh token is presented to the service at most once (Spend): the service rotates it on
// use and takes a second presentation for theft, revoking every token of its grant (RFC 9700
// 4.14.2). So two refreshes that race, the SDK's own or the game's, never both send one.
package token

import (
	"slices"
	"sync"
	"time"

	"sdkpp/internal/clock"
)

// ExpiryWarning is how long before a token's expiry the expiration warning fires.
const ExpiryWarning = 5 * time.Minute

// Lead is how long before expiry a token of the given lifetime is refreshed: the expiration
// warning's five minutes, or half the lifetime of a shorter-lived token.
func Lead(lifetime time.Duration) time.Duration { return min(ExpiryWarning, lifetime/2) }

// Issued is what the Client knows of an access token it obtained.
type Issued struct {
	Expires  time.Time
	Lifetime time.Duration
	Refresh  string // "" when the exchange gave none
	AppID    uint64 // the application the token was issued to
}

// Timers is what the Store's timer does when it fires; both run on the clock's goroutine and
// must not block.
type Timers struct {
	// Refresh refreshes the token old, which the Client obtained with a refresh token.
	Refresh func(old string)
	// Expiring warns the game that the token in use expires soon.
	Expiring func()
	// Warn reports whether the game wants the warning (a handler is set).
	Warn func() bool
}

// Store is the token in use and the tokens obtained; its methods may be called from any
// goroutine. Its lock is a leaf.
type Store struct {
	clock  clock.Clock
	timers Timers

	mu     sync.Mutex
	token  string
	issued map[string]Issued
	timer  clock.Timer
	// spent holds the refresh tokens handed to a refresh, in the order spentOrder, at most
	// maxSpent of them.
	spent      map[string]struct{}
	spentOrder []string
}

// maxSpent bounds the spent refresh tokens a Store remembers; a Client refreshes about once a
// token lifetime, so these span far longer than any refresh token is kept by a game.
const maxSpent = 256

// New returns an empty Store whose timer runs on clk.
func New(clk clock.Clock, t Timers) *Store { return &Store{clock: clk, timers: t} }

// Set makes token the one in use and re-arms the timer. It reports whether it replaced a
// different token.
func (s *Store) Set(token string) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed = s.token != "" && s.token != token
	s.token = token
	s.scheduleLocked()
	return changed
}

// Get returns the token in use, "" when none.
func (s *Store) Get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// Header returns the Authorization header for the token in use, "" when none.
func (s *Store) Header() string {
	if t := s.Get(); t != "" {
		return "Bearer " + t
	}
	return ""
}

// Clear drops the token in use if it is token (a revoked one) and stops its timer.
func (s *Store) Clear(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.token = ""
		s.stopLocked()
	}
}

// Remember records a token the Client obtained, with its lifetime from now, its refresh token
// and its application. A token with no lifetime is not recorded.
func (s *Store) Remember(access, refresh string, lifetime time.Duration, appID uint64) {
	if access == "" || lifetime <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issued == nil {
		s.issued = map[string]Issued{}
	}
	s.issued[access] = Issued{Expires: s.clock.Now().Add(lifetime), Lifetime: lifetime, Refresh: refresh, AppID: appID}
}

// InUse returns what is known of token, and reports whether it is known and still in use.
func (s *Store) InUse(token string) (Issued, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, known := s.issued[token]
	return it, known && s.token == token
}

// Swap makes next the token in use in place of old, forgets old and re-arms the timer; it
// reports false, changing nothing, when old is no longer in use.
func (s *Store) Swap(old, next string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != old {
		return false
	}
	s.token = next
	delete(s.issued, old)
	s.scheduleLocked()
	return true
}

// Spend hands refresh to one refresh_token grant: it reports false when the token was spent
// already, so that the caller must not present it. A spent token arms no automatic refresh;
// a timer armed to refresh with it stops.
func (s *Store) Spend(refresh string) bool {
	if refresh == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.spent[refresh]; ok {
		return false
	}
	if s.spent == nil {
		s.spent = map[string]struct{}{}
	}
	if len(s.spentOrder) >= maxSpent {
		delete(s.spent, s.spentOrder[0])
		s.spentOrder = s.spentOrder[1:]
	}
	s.spent[refresh] = struct{}{}
	s.spentOrder = append(s.spentOrder, refresh)
	s.stopRefreshLocked(refresh)
	return true
}

// Unspend gives refresh back after a grant that provably never reached the service (it could
// not connect, or the service refused before reading the token: 429, 503).
func (s *Store) Unspend(refresh string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.spent[refresh]; !ok {
		return
	}
	delete(s.spent, refresh)
	s.spentOrder = slices.DeleteFunc(s.spentOrder, func(r string) bool { return r == refresh })
	s.scheduleLocked()
}

// stopRefreshLocked stops the timer when it would refresh the token in use with refresh: the
// refresh that spent it acts instead, and says what happens when it fails.
func (s *Store) stopRefreshLocked(refresh string) {
	if it, ok := s.issued[s.token]; ok && it.Refresh == refresh {
		s.stopLocked()
	}
}

// Reschedule re-arms the timer, for example once the game sets or clears its warning handler.
func (s *Store) Reschedule() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scheduleLocked()
}

// Stop stops the timer; the Store may be used again after it.
func (s *Store) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

// scheduleLocked arms the timer of the token in use: its refresh when the Client holds its
// refresh token, else the warning when the game wants it.
func (s *Store) scheduleLocked() {
	s.stopLocked()
	token := s.token
	it, known := s.issued[token]
	switch {
	case !known:
	case it.Refresh != "" && it.AppID != 0 && !s.isSpentLocked(it.Refresh):
		s.timer = s.clock.AfterFunc(it.Expires.Add(-Lead(it.Lifetime)).Sub(s.clock.Now()), func() { s.timers.Refresh(token) })
	case s.timers.Warn():
		s.timer = s.clock.AfterFunc(it.Expires.Add(-ExpiryWarning).Sub(s.clock.Now()), s.timers.Expiring)
	}
}

func (s *Store) isSpentLocked(refresh string) bool {
	_, ok := s.spent[refresh]
	return ok
}

func (s *Store) stopLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}
