package core

import (
	"sync"

	"sdkpp/core/callbacks"
)

// handlerSlot holds one replaceable game callback. Its lock is its own and a leaf, so a
// capability sets and posts its handlers without any other lock.
type handlerSlot[F any] struct {
	mu    sync.Mutex
	scope *callbacks.Scope
	fn    F
}

// isSet reports whether a handler is set.
func (s *handlerSlot[F]) isSet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scope != nil
}

// take empties the slot and returns its scope, nil when none was set; the caller closes it.
func (s *handlerSlot[F]) take() *callbacks.Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := s.scope
	var zero F
	s.scope, s.fn = nil, zero
	return scope
}

// setHandler replaces the handler in slot; the old one is released.
func setHandler[F any](c *Client, slot *handlerSlot[F], cb Callback[F]) {
	scope := c.scope.NewScope(cb.Release)
	slot.mu.Lock()
	old := slot.scope
	slot.scope, slot.fn = scope, cb.Fn
	slot.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// postHandler queues call with the handler in slot, if there is one.
func postHandler[F any](c *Client, slot *handlerSlot[F], call func(F)) {
	slot.mu.Lock()
	scope, fn := slot.scope, slot.fn
	slot.mu.Unlock()
	if scope != nil {
		scope.Post(func() { call(fn) })
	}
}
