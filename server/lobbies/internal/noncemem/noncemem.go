// Package noncemem remembers, for a window of time, the messages sent with an enforced nonce,
// so that a send repeated after a lost answer gets the first message back instead of making a
// second one.
package noncemem

import (
	"hash/maphash"
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
// What it holds is counted as Cost (a message) and HashCost (a hash). When the messages pass half
// the limit, the oldest are forgotten early but for a hash of their key: Sent then tells that a
// key may have been sent, and its message is to be looked up elsewhere (the store), which a new
// send need not do. When messages and hashes together pass the limit, the oldest hashes go too,
// and ForgotEarly tells until when every key the memory lacks is to be looked up. A message kept
// at the newest time it was given is never forgotten early, so that messages accepted together,
// and not yet stored, stay remembered whatever the limit.
type Memory struct {
	window time.Duration // how long a message is remembered after it was sent
	limit  int           // the most bytes held, as Cost and HashCost count them
	bytes  int           // what byKey and hashes hold, so counted
	byKey  map[Key]wire.Encoded
	order  []keyAt
	first  int // order[:first] is forgotten

	seed   maphash.Seed
	hashes map[uint64]int // the hashes of the keys forgotten early from byKey, with their number
	sent   []hashAt       // hashes' keys, oldest first
	sentAt int            // sent[:sentAt] is forgotten
	early  time.Time      // when the newest key forgotten whole before its window ended was sent
}

// New returns an empty Memory that remembers each message for window after it was sent, in at
// most limit bytes as Cost and HashCost count them.
func New(window time.Duration, limit int) *Memory {
	return &Memory{window: window, limit: limit, seed: maphash.MakeSeed()}
}

type keyAt struct {
	key Key
	at  time.Time
}

type hashAt struct {
	hash uint64
	at   int64 // Unix nanoseconds
}

// EntryOverhead is what a remembered message costs besides its encoding and its nonce's bytes: its
// map slot and its entry of order (Key and time), with the room their growth leaves, and the
// nonce's string allocation rounded up (measured: BenchmarkMemoryHeap).
const EntryOverhead = 160

// HashCost is what a key forgotten early but for its hash costs: its map slot and its entry of
// sent, with the room their growth leaves (measured: BenchmarkMemoryHeap).
const HashCost = 64

// Cost is what remembering enc with k counts against the limit: the encoding's whole buffer (its
// capacity, which the memory keeps alive), the nonce, and EntryOverhead.
func Cost(k Key, enc wire.Encoded) int { return cap(enc) + len(k.Nonce) + EntryOverhead }

// Find returns the message remembered for k at now.
func (m *Memory) Find(k Key, now time.Time) (wire.Encoded, bool) {
	m.expire(now)
	enc, ok := m.byKey[k]
	return enc, ok
}

// Sent tells whether a message may have been sent with k within the window that the memory
// forgot early but for its hash (a key of the same hash makes it true too). Call after Find.
func (m *Memory) Sent(k Key) bool {
	return len(m.hashes) > 0 && m.hashes[maphash.Comparable(m.seed, k)] > 0
}

// Keep remembers enc, the encoded message sent with k, from now on (from the first time, when k
// is already remembered), forgetting the oldest early while the memory is over its limit.
func (m *Memory) Keep(k Key, enc wire.Encoded, now time.Time) {
	m.expire(now)
	if old, ok := m.byKey[k]; ok {
		m.bytes -= Cost(k, old)
		m.byKey[k] = enc
		m.bytes += Cost(k, enc)
		m.bound(now)
		return
	}
	m.add(k, enc, now)
}

// Add is Keep for a key that Find has just reported missing at now, with nothing kept since: it
// spares Keep's lookup of k, one of the three a new message's key cost in a map that, holding a
// window of messages, is mostly out of the processor's caches.
func (m *Memory) Add(k Key, enc wire.Encoded, now time.Time) { m.add(k, enc, now) }

// add remembers enc with k, which the memory lacks, from now on.
func (m *Memory) add(k Key, enc wire.Encoded, now time.Time) {
	if m.byKey == nil {
		m.byKey = make(map[Key]wire.Encoded)
	}
	m.order = append(m.order, keyAt{key: k, at: now})
	m.byKey[k] = enc
	m.bytes += Cost(k, enc)
	m.bound(now)
}

// bound forgets the oldest early while the memory is over its limit (Keep, add).
func (m *Memory) bound(now time.Time) {
	for m.bytes-HashCost*(len(m.sent)-m.sentAt) > m.limit/2 && m.first < len(m.order) && m.order[m.first].at.Before(now) {
		m.hashFirst()
	}
	for m.bytes > m.limit && m.sentAt < len(m.sent) {
		m.early = time.Unix(0, m.sent[m.sentAt].at)
		m.forgetHash()
	}
	m.compact()
}

// ForgotEarly returns when the newest key forgotten whole before its window ended was sent (zero:
// none): until the window has passed after it, a message sent within the window may be missing
// whatever Sent says.
func (m *Memory) ForgotEarly() time.Time { return m.early }

// Bytes returns what the memory holds, as Cost and HashCost count it.
func (m *Memory) Bytes() int { return m.bytes }

// Len returns the number of messages the memory holds whole.
func (m *Memory) Len() int { return len(m.byKey) }

// Hashes returns the number of keys the memory holds the hash of.
func (m *Memory) Hashes() int { return len(m.sent) - m.sentAt }

// expire forgets what is older than the window.
func (m *Memory) expire(now time.Time) {
	for m.first < len(m.order) && now.Sub(m.order[m.first].at) >= m.window {
		m.forgetFirst()
	}
	for m.sentAt < len(m.sent) && now.UnixNano()-m.sent[m.sentAt].at >= int64(m.window) {
		m.forgetHash()
	}
	m.compact()
}

// forgetFirst forgets the oldest message, returning it.
func (m *Memory) forgetFirst() keyAt {
	ka := m.order[m.first]
	m.bytes -= Cost(ka.key, m.byKey[ka.key])
	delete(m.byKey, ka.key)
	m.order[m.first] = keyAt{}
	m.first++
	return ka
}

// hashFirst forgets the oldest message but for the hash of its key.
func (m *Memory) hashFirst() {
	ka := m.forgetFirst()
	if m.hashes == nil {
		m.hashes = make(map[uint64]int)
	}
	h := maphash.Comparable(m.seed, ka.key)
	m.hashes[h]++
	m.sent = append(m.sent, hashAt{hash: h, at: ka.at.UnixNano()})
	m.bytes += HashCost
}

// forgetHash forgets the oldest hash.
func (m *Memory) forgetHash() {
	h := m.sent[m.sentAt].hash
	if m.hashes[h]--; m.hashes[h] == 0 {
		delete(m.hashes, h)
	}
	m.sentAt++
	m.bytes -= HashCost
}

// compact drops the forgotten starts of order and sent once they are most of them.
func (m *Memory) compact() {
	if m.first > 0 && m.first >= len(m.order)/2 {
		m.order = m.order[:copy(m.order, m.order[m.first:])]
		m.first = 0
	}
	if m.sentAt > 0 && m.sentAt >= len(m.sent)/2 {
		m.sent = m.sent[:copy(m.sent, m.sent[m.sentAt:])]
		m.sentAt = 0
	}
}
