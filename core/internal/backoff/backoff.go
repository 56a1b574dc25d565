// Package backoff is the SDK's one retry policy: exponential delays with jitter, used by the
// gateway's reconnects, the desktop-client link's reconnects, the token refresh's retries and the
// message catch-up's retries.
package backoff

import "time"

// Policy is the delay between attempts: Initial after the first failure, doubling up to Max,
// each delay shortened by a random fraction of up to Jitter (0 to 1).
type Policy struct {
	Initial, Max time.Duration
	Jitter       float64
}

// Delay is the delay before retry number attempt (0 is the first), given r in [0, 1).
func (p Policy) Delay(attempt int, r float64) time.Duration {
	d := p.Initial
	for i := 0; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	j := min(max(p.Jitter, 0), 1)
	return d - time.Duration(float64(d)*j*r)
}
