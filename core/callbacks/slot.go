package callbacks

import "sync"

// Slot holds one replaceable handler of the game and the scope that owns it. Its lock is its
// own and a leaf, so a capability sets and posts its handlers without any other lock.
type Slot[F any] struct {
	mu    sync.Mutex
	scope *Scope
	fn    F
}

// IsSet reports whether a handler is set.
func (s *Slot[F]) IsSet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scope != nil
}

// Take empties the slot and returns its scope, nil when none was set; the caller closes it.
func (s *Slot[F]) Take() *Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := s.scope
	var zero F
	s.scope, s.fn = nil, zero
	return scope
}

// Set replaces the handler with fn, owned by scope; the old one's scope is closed (released).
func (s *Slot[F]) Set(scope *Scope, fn F) {
	s.mu.Lock()
	old := s.scope
	s.scope, s.fn = scope, fn
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// Post queues call with the handler, if there is one, and reports whether it did.
func (s *Slot[F]) Post(call func(F)) bool {
	s.mu.Lock()
	scope, fn := s.scope, s.fn
	s.mu.Unlock()
	return scope != nil && scope.Post(func() { call(fn) })
}

// PostValue is Post with the value v for call, which then needs capture nothing: a call that
// captured v was an allocation per post of its own, beside the queued one (a lobby message's
// MessageCreated, posted for each message a member receives).
func PostValue[F, V any](s *Slot[F], v V, call func(F, V)) bool {
	s.mu.Lock()
	scope, fn := s.scope, s.fn
	s.mu.Unlock()
	return scope != nil && scope.Post(func() { call(fn, v) })
}
