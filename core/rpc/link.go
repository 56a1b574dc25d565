package rpc

import (
	"context"
	"encoding/json"
	"sync"

	"sdkpp/core/internal/sdkerr"
)

// Link is a Client's link to the desktop client: the connection, made on first use, and its
// named event subscriptions, each of which lasts across restarts of the desktop client until it
// is removed, replaced or the Link closed. Its lock is its own; no other lock is taken while it
// is held.
type Link struct {
	// Config returns the configuration of the connection, or why it cannot be made yet.
	Config func() (Config, error)
	// Start runs fn on a goroutine its owner stops (and cancels fn's context); false once closed.
	Start func(fn func(ctx context.Context)) bool
	// Warn logs a subscription that failed.
	Warn func(format string, args ...any)

	mu     sync.Mutex
	closed bool // no connection is made after Close
	client *Client
	subs   map[string]*subscription
}

// subscription is one named subscription: its release and the way to end it. seq tells a
// finished subscribe call whether it is still wanted.
type subscription struct {
	release func()
	unsub   func()
	seq     uint64
}

// Client returns the connection, making it on first use; sdkerr.ErrClosed once the Link closed.
func (l *Link) Client() (*Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.clientLocked()
}

func (l *Link) clientLocked() (*Client, error) {
	if l.client != nil {
		return l.client, nil
	}
	if l.closed {
		return nil, sdkerr.ErrClosed
	}
	cfg, err := l.Config()
	if err != nil {
		return nil, err
	}
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l.client = c
	return c, nil
}

// Subscribe makes name a subscription to evt, replacing the one of that name: each event runs
// onEvent, and release runs once the subscription ends. It returns why the connection cannot be
// made (the subscription is then released at once); a failure to subscribe later is logged.
func (l *Link) Subscribe(name, evt string, onEvent func(json.RawMessage), release func()) error {
	l.mu.Lock()
	c, err := l.clientLocked()
	if err != nil {
		l.mu.Unlock()
		if release != nil {
			release()
		}
		return err
	}
	if l.subs == nil {
		l.subs = map[string]*subscription{}
	}
	s := l.subs[name]
	if s == nil {
		s = &subscription{}
		l.subs[name] = s
	}
	s.endLocked()
	s.seq++
	seq := s.seq
	s.release = release
	l.mu.Unlock()

	l.Start(func(ctx context.Context) {
		unsub, err := c.Subscribe(ctx, evt, nil, onEvent)
		if err != nil {
			if ctx.Err() == nil { // not because the owner is closing
				l.Warn("%s: %v", name, err)
			}
			return
		}
		l.mu.Lock()
		current := s.seq == seq
		if current {
			s.unsub = unsub
		}
		l.mu.Unlock()
		if !current {
			unsub() // removed or replaced while subscribing
		}
	})
	return nil
}

// Subscribed reports whether the subscription name is in place.
func (l *Link) Subscribed(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.subs[name]
	return s != nil && s.release != nil
}

// Remove ends the subscription name and releases it.
func (l *Link) Remove(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.subs[name]; s != nil {
		s.endLocked()
	}
}

// endLocked ends the subscription and releases it; the Link's lock is held.
func (s *subscription) endLocked() {
	if s.unsub != nil {
		s.unsub()
	}
	if s.release != nil {
		s.release()
	}
	s.release, s.unsub = nil, nil
	s.seq++
}

// Close ends the connection; none is made afterwards. The subscriptions' releases are their
// owner's to run (it closes their scopes).
func (l *Link) Close() {
	l.mu.Lock()
	c := l.client
	l.client, l.closed = nil, true
	l.mu.Unlock()
	if c != nil {
		c.Close()
	}
}
