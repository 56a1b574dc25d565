package httpx

import (
	"context"
	"sync"
)

// SessionMemo is a one-entry cache that a long-lived connection lends the requests it serves
// (WithSessionMemo), so that what each of them would look up the same way, such as what the
// connection's credential grants, is looked up once for the connection. It is safe for
// concurrent use.
type SessionMemo struct {
	mu  sync.Mutex
	key string
	v   any
}

// Get returns the value kept for key.
func (m *SessionMemo) Get(key string) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.v == nil || m.key != key {
		return nil, false
	}
	return m.v, true
}

// Keep keeps v for key, in place of what was kept.
func (m *SessionMemo) Keep(key string, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.key, m.v = key, v
}

// sessionMemoKey is the context key of WithSessionMemo.
type sessionMemoKey struct{}

// WithSessionMemo returns ctx carrying m for the request it is given to.
func WithSessionMemo(ctx context.Context, m *SessionMemo) context.Context {
	return context.WithValue(ctx, sessionMemoKey{}, m)
}

// SessionMemoOf returns the SessionMemo of ctx, or nil.
func SessionMemoOf(ctx context.Context) *SessionMemo {
	m, _ := ctx.Value(sessionMemoKey{}).(*SessionMemo)
	return m
}
