// Package seqwait lets goroutines wait until a sequence number that one owner advances (the
// last message a node read from the cluster's bus, say) reaches a value.
package seqwait

import (
	"context"
	"sync"
)

// Seq is a sequence number that only grows. The zero value is 0 and ready to use; it is safe for
// concurrent use.
type Seq struct {
	mu   sync.Mutex
	n    uint64
	next chan struct{} // closed and dropped by the next Advance; nil while nobody waits
}

// Advance raises the number to n, waking those who wait for it; a lower n changes nothing.
func (s *Seq) Advance(n uint64) {
	s.mu.Lock()
	if n > s.n {
		s.n = n
		if s.next != nil {
			close(s.next)
			s.next = nil
		}
	}
	s.mu.Unlock()
}

// Load returns the number.
func (s *Seq) Load() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Wait returns once the number is at least n, or ctx's error when ctx ends first.
func (s *Seq) Wait(ctx context.Context, n uint64) error {
	for {
		s.mu.Lock()
		if s.n >= n {
			s.mu.Unlock()
			return nil
		}
		if s.next == nil {
			s.next = make(chan struct{})
		}
		next := s.next
		s.mu.Unlock()
		select {
		case <-next:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
