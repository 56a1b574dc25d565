package token

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
)

// recorder records what the Store's timer did.
type recorder struct {
	mu        sync.Mutex
	refreshed []string
	warned    int
	warn      bool
}

func (r *recorder) timers() Timers {
	return Timers{
		Refresh:  func(old string) { r.mu.Lock(); r.refreshed = append(r.refreshed, old); r.mu.Unlock() },
		Expiring: func() { r.mu.Lock(); r.warned++; r.mu.Unlock() },
		Warn:     func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.warn },
	}
}

func (r *recorder) state() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.refreshed...), r.warned
}

func TestLead(t *testing.T) {
	assert.Equal(t, ExpiryWarning, Lead(time.Hour))
	assert.Equal(t, 2*time.Second, Lead(4*time.Second), "a short-lived token is refreshed at half its life")
}

func TestSetAndHeader(t *testing.T) {
	s := New(clock.NewFake(time.Unix(0, 0)), (&recorder{}).timers())
	assert.Empty(t, s.Header())
	assert.False(t, s.Set("a"), "the first token replaces nothing")
	assert.Equal(t, "Bearer a", s.Header())
	assert.False(t, s.Set("a"))
	assert.True(t, s.Set("b"))
	s.Clear("a")
	assert.Equal(t, "b", s.Get(), "clearing another token keeps the one in use")
	s.Clear("b")
	assert.Empty(t, s.Get())
}

// A token the Client obtained with a refresh token is refreshed Lead before it expires; one
// without is announced ExpiryWarning before, and only when the game wants to hear it.
func TestTimer(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	r := &recorder{}
	s := New(clk, r.timers())
	s.Remember("with-refresh", "r1", time.Hour, 7)
	s.Set("with-refresh")
	clk.Advance(time.Hour - ExpiryWarning - time.Second)
	refreshed, _ := r.state()
	assert.Empty(t, refreshed, "not yet")
	clk.Advance(time.Second)
	refreshed, _ = r.state()
	assert.Equal(t, []string{"with-refresh"}, refreshed)

	it, inUse := s.InUse("with-refresh")
	require.True(t, inUse)
	assert.Equal(t, Issued{Expires: time.Unix(0, 0).Add(time.Hour), Lifetime: time.Hour, Refresh: "r1", AppID: 7}, it)
	s.Remember("next", "r2", time.Hour, 7)
	require.True(t, s.Swap("with-refresh", "next"))
	assert.False(t, s.Swap("with-refresh", "other"), "the old token is no longer in use")
	_, inUse = s.InUse("with-refresh")
	assert.False(t, inUse)
	assert.Equal(t, "next", s.Get())

	s.Remember("no-refresh", "", 10*time.Minute, 7)
	s.Set("no-refresh")
	clk.Advance(10 * time.Minute)
	_, warned := r.state()
	assert.Zero(t, warned, "the game set no warning handler")
	r.mu.Lock()
	r.warn = true
	r.mu.Unlock()
	s.Remember("no-refresh-2", "", 10*time.Minute, 7)
	s.Set("no-refresh-2")
	clk.Advance(5*time.Minute - time.Second)
	_, warned = r.state()
	assert.Zero(t, warned)
	clk.Advance(time.Second)
	_, warned = r.state()
	assert.Equal(t, 1, warned)

	s.Remember("stopped", "", 10*time.Minute, 7)
	s.Set("stopped")
	s.Stop()
	clk.Advance(time.Hour)
	_, warned = r.state()
	assert.Equal(t, 1, warned, "a stopped store fires nothing")
	assert.Zero(t, clk.Pending())
}

func TestRememberIgnoresTokensWithoutLifetime(t *testing.T) {
	s := New(clock.NewFake(time.Unix(0, 0)), (&recorder{}).timers())
	s.Remember("", "r", time.Hour, 1)
	s.Remember("x", "r", 0, 1)
	s.Set("x")
	_, inUse := s.InUse("x")
	assert.False(t, inUse, "unknown: the game's own token")
}

// RFC 9700 4.14.2: a refresh token is handed to one refresh only. Spending it stops the timer
// that would refresh with it, so that racing refreshes never both present it; a refresh the
// service never saw gives it back and re-arms the timer.
func TestSpendHandsARefreshTokenOutOnce(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	r := &recorder{}
	s := New(clk, r.timers())
	s.Remember("a", "r1", time.Hour, 7)
	s.Set("a")
	require.True(t, s.Spend("r1"), "the first refresh gets it")
	assert.False(t, s.Spend("r1"), "a racing refresh does not")
	assert.False(t, s.Spend(""), "no refresh token is nothing to present")
	clk.Advance(time.Hour)
	refreshed, _ := r.state()
	assert.Empty(t, refreshed, "the timer refreshed with a spent token")

	s.Unspend("r1") // re-arms at the same expiry, which has passed: it fires at once
	clk.Advance(time.Millisecond)
	refreshed, _ = r.state()
	assert.Equal(t, []string{"a"}, refreshed, "after Unspend the timer refreshes again")
	require.True(t, s.Spend("r1"))

	for i := range maxSpent {
		s.Spend(string(rune('A' + i)))
	}
	assert.True(t, s.Spend("r1"), "the oldest spent tokens are forgotten past maxSpent")
}
