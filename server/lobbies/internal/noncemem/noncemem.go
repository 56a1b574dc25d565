// Package noncemem remembers, for a window of time, the messages sent with an enforced nonce,
// so that a send repeated after a lost answer gets the first message back instead of making a
// second one.
package noncemem

import (
	"time"

	"sdkpp/wire"
)

// Key identifies a message sent with an enforced nonce.
type Key struct {
	Lobby, Author uint64
	Nonce         string
}

// Memory remembers the messages sent with an enforced nonce for its window, oldest first.
//
// A message is kept in its wire form, encoded (the one its members got): one pointer for the
// garbage collector to follow per message, where its fields were many, and nothing to encode
// again when a send is repeated. Expiry moves the start of order, which is compacted only once
// most of it is gone, so that forgetting costs no copy of the window per message.
type Memory struct {
	window time.Duration // how long a message is remembered after it was sent
	byKey  map[Key]wire.Encoded
	order  []keyAt
	first  int // order[:first] is forgotten
}

// New returns an empty Memory that remembers each message for window after it was sent.
func New(window time.Duration) *Memory { return &Memory{window: window} }

type keyAt struct {
	key Key
	at  time.Time
}

// Find returns the message remembered for k at now.
func (m *Memory) Find(k Key, now time.Time) (wire.Encoded, bool) {
	m.expire(now)
	enc, ok := m.byKey[k]
	return enc, ok
}

// Keep remembers enc, the encoded message sent with k, from now on.
func (m *Memory) Keep(k Key, enc wire.Encoded, now time.Time) {
	m.expire(now)
	if m.byKey == nil {
		m.byKey = make(map[Key]wire.Encoded)
	}
	m.byKey[k] = enc
	m.order = append(m.order, keyAt{key: k, at: now})
}

// expire forgets what is older than the window.
func (m *Memory) expire(now time.Time) {
	for m.first < len(m.order) && now.Sub(m.order[m.first].at) >= m.window {
		delete(m.byKey, m.order[m.first].key)
		m.order[m.first] = keyAt{}
		m.first++
	}
	if m.first > 0 && m.first >= len(m.order)/2 {
		m.order = m.order[:copy(m.order, m.order[m.first:])]
		m.first = 0
	}
}
