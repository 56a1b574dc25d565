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

// Memory remembers the messages sent with an enforced nonce for its window, oldest first, in at
// most a limit of bytes.
//
// A message is kept in its wire form, encoded (the one its members got): one pointer for the
// garbage collector to follow per message, where its fields were many, and nothing to encode
// again when a send is repeated. Expiry moves the start of order, which is compacted only once
// most of it is gone, so that forgetting costs no copy of the window per message.
//
// When what it holds (counted as Cost) passes the limit, it forgets its oldest messages before
// their window ends, and ForgotEarly tells until when: its owner must then look a nonce it lacks
// up elsewhere (the store) while a message it forgot early may still be repeated. It never
// forgets early a message kept at the newest time it was given, so that messages accepted
// together, and not yet stored, stay remembered whatever the limit.
type Memory struct {
	window time.Duration // how long a message is remembered after it was sent
	limit  int           // the most bytes held, as Cost counts them
	bytes  int           // what byKey holds, as Cost counts it
	byKey  map[Key]wire.Encoded
	order  []keyAt
	first  int       // order[:first] is forgotten
	early  time.Time // when the newest message forgotten before its window ended was sent
}

// New returns an empty Memory that remembers each message for window after it was sent, in at
// most limit bytes as Cost counts them.
func New(window time.Duration, limit int) *Memory { return &Memory{window: window, limit: limit} }

type keyAt struct {
	key Key
	at  time.Time
}

// EntryOverhead is what a remembered message costs besides its encoding and its nonce's bytes: its
// map slot and its entry of order (Key and time), with the room their growth leaves, and the
// nonce's string allocation rounded up (measured: BenchmarkMemoryHeap).
const EntryOverhead = 160

// Cost is what remembering enc with k counts against the limit: the encoding's whole buffer (its
// capacity, which the memory keeps alive), the nonce, and EntryOverhead.
func Cost(k Key, enc wire.Encoded) int { return cap(enc) + len(k.Nonce) + EntryOverhead }

// Find returns the message remembered for k at now.
func (m *Memory) Find(k Key, now time.Time) (wire.Encoded, bool) {
	m.expire(now)
	enc, ok := m.byKey[k]
	return enc, ok
}

// Keep remembers enc, the encoded message sent with k, from now on (from the first time, when k
// is already remembered), forgetting the oldest messages early while the memory is over its
// limit.
func (m *Memory) Keep(k Key, enc wire.Encoded, now time.Time) {
	m.expire(now)
	if m.byKey == nil {
		m.byKey = make(map[Key]wire.Encoded)
	}
	if old, ok := m.byKey[k]; ok {
		m.bytes -= Cost(k, old)
	} else {
		m.order = append(m.order, keyAt{key: k, at: now})
	}
	m.byKey[k] = enc
	m.bytes += Cost(k, enc)
	for m.bytes > m.limit && m.first < len(m.order) && m.order[m.first].at.Before(now) {
		m.early = m.order[m.first].at
		m.forgetFirst()
	}
	m.compact()
}

// ForgotEarly returns when the newest message forgotten before its window ended was sent (zero:
// none): until the window has passed after it, a message sent within the window may be missing.
func (m *Memory) ForgotEarly() time.Time { return m.early }

// Bytes returns what the memory holds, as Cost counts it.
func (m *Memory) Bytes() int { return m.bytes }

// Len returns the number of messages the memory holds.
func (m *Memory) Len() int { return len(m.byKey) }

// expire forgets what is older than the window.
func (m *Memory) expire(now time.Time) {
	for m.first < len(m.order) && now.Sub(m.order[m.first].at) >= m.window {
		m.forgetFirst()
	}
	m.compact()
}

// forgetFirst forgets the oldest message.
func (m *Memory) forgetFirst() {
	k := m.order[m.first].key
	m.bytes -= Cost(k, m.byKey[k])
	delete(m.byKey, k)
	m.order[m.first] = keyAt{}
	m.first++
}

// compact drops the forgotten start of order once it is most of it.
func (m *Memory) compact() {
	if m.first > 0 && m.first >= len(m.order)/2 {
		m.order = m.order[:copy(m.order, m.order[m.first:])]
		m.first = 0
	}
}
