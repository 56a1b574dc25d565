package clock

import (
	"sync"
	"time"
)

// Chore paces a periodic chore (a sweep of expired rows, say) by the times it is given rather
// than by a timer of its own: Due is true at most once per interval of them. Its zero value is
// ready; it is safe for concurrent use.
type Chore struct {
	mu   sync.Mutex
	last time.Time
	done bool
}

// Due reports whether the chore is due at now — it never was, every has passed since it last
// was, or the time went back — and if so counts it as done at now.
func (c *Chore) Due(now time.Time, every time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done && now.Sub(c.last) < every && !now.Before(c.last) {
		return false
	}
	c.last, c.done = now, true
	return true
}
