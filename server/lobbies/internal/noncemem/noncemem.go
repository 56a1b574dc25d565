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
// A key is hashed once (Find's hash serves the Add that follows it), and the messages are found
// by that hash in a map of integers: a map keyed by Key hashed the key's string again on each of
// the three operations a new message costs it (its lookup, its insert and, at the end of its
// window, its delete), and its slots were four times larger, in a map that, holding a window of
// messages, is mostly out of the processor's caches. The map holds no pointer for the garbage
// collector to follow. A key whose hash another remembered key has (a collision, which a 64-bit
// hash makes rare) is kept in a map by key beside it.
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
	bytes  int           // what order and hashes hold, so counted

	sum   func(Key) uint64  // a key's hash (seeded maphash; a test's may collide)
	index map[uint64]uint64 // a remembered key's hash to its entry's number (see order)
	other map[Key]uint64    // the remembered keys that another's hash had when they came, to theirs
	order []entry           // the messages, oldest first: order[i] is entry number base+i
	first int               // order[:first] is forgotten
	base  uint64

	// The key hashed last, and its hash (hashOf).
	hashed  Key
	hash    uint64
	hasHash bool

	hashes map[uint64]int // the hashes of the keys forgotten early from order, with their number
	sent   []hashAt       // hashes' keys, oldest first
	sentAt int            // sent[:sentAt] is forgotten
	early  time.Time      // when the newest key forgotten whole before its window ended was sent
}

// New returns an empty Memory that remembers each message for window after it was sent, in at
// most limit bytes as Cost and HashCost count them.
func New(window time.Duration, limit int) *Memory {
	seed := maphash.MakeSeed()
	return &Memory{window: window, limit: limit, sum: func(k Key) uint64 { return maphash.Comparable(seed, k) }}
}

// entry is a remembered message.
type entry struct {
	key  Key
	hash uint64
	at   int64 // when it was sent, Unix nanoseconds
	enc  wire.Encoded
}

type hashAt struct {
	hash uint64
	at   int64 // Unix nanoseconds
}

// EntryOverhead is what a remembered message costs besides its encoding and its nonce's bytes: its
// map slot and its entry of order, with the room their growth leaves, and the nonce's string
// allocation rounded up (measured: BenchmarkMemoryHeap).
const EntryOverhead = 120

// HashCost is what a key forgotten early but for its hash costs: its map slot and its entry of
// sent, with the room their growth leaves (measured: BenchmarkMemoryHeap).
const HashCost = 64

// Cost is what remembering enc with k counts against the limit: the encoding's whole buffer (its
// capacity, which the memory keeps alive), the nonce, and EntryOverhead.
func Cost(k Key, enc wire.Encoded) int { return cap(enc) + len(k.Nonce) + EntryOverhead }

// Find returns the message remembered for k at now.
func (m *Memory) Find(k Key, now time.Time) (wire.Encoded, bool) {
	m.expire(now)
	if e := m.find(k); e != nil {
		return e.enc, true
	}
	return nil, false
}

// find returns k's entry, or nil.
func (m *Memory) find(k Key) *entry {
	if m.first == len(m.order) {
		return nil
	}
	if n, ok := m.index[m.hashOf(k)]; ok {
		if e := &m.order[n-m.base]; e.key == k {
			return e
		}
	}
	if n, ok := m.other[k]; ok {
		return &m.order[n-m.base]
	}
	return nil
}

// hashOf returns k's hash, computed once for the key asked for again and again (Find, then Sent
// or Add).
func (m *Memory) hashOf(k Key) uint64 {
	if !m.hasHash || m.hashed != k {
		m.hashed, m.hash, m.hasHash = k, m.sum(k), true
	}
	return m.hash
}

// Sent tells whether a message may have been sent with k within the window that the memory
// forgot early but for its hash (a key of the same hash makes it true too). Call after Find.
func (m *Memory) Sent(k Key) bool {
	return len(m.hashes) > 0 && m.hashes[m.hashOf(k)] > 0
}

// Keep remembers enc, the encoded message sent with k, from now on (from the first time, when k
// is already remembered), forgetting the oldest early while the memory is over its limit.
func (m *Memory) Keep(k Key, enc wire.Encoded, now time.Time) {
	m.expire(now)
	if e := m.find(k); e != nil {
		m.bytes += Cost(k, enc) - Cost(k, e.enc)
		e.enc = enc
		m.bound(now)
		return
	}
	m.add(k, enc, now)
}

// Add is Keep for a key that Find has just reported missing at now, with nothing kept since: it
// spares Keep's lookup of k, in a map that, holding a window of messages, is mostly out of the
// processor's caches.
func (m *Memory) Add(k Key, enc wire.Encoded, now time.Time) { m.add(k, enc, now) }

// add remembers enc with k, which the memory lacks, from now on.
func (m *Memory) add(k Key, enc wire.Encoded, now time.Time) {
	if m.index == nil {
		m.index = make(map[uint64]uint64)
	}
	h, n := m.hashOf(k), m.base+uint64(len(m.order))
	if _, taken := m.index[h]; !taken {
		m.index[h] = n
	} else { // another key's hash
		if m.other == nil {
			m.other = make(map[Key]uint64)
		}
		m.other[k] = n
	}
	m.order = append(m.order, entry{key: k, hash: h, at: now.UnixNano(), enc: enc})
	m.bytes += Cost(k, enc)
	m.bound(now)
}

// bound forgets the oldest early while the memory is over its limit (Keep, add).
func (m *Memory) bound(now time.Time) {
	t := now.UnixNano()
	for m.bytes-HashCost*(len(m.sent)-m.sentAt) > m.limit/2 && m.first < len(m.order) && m.order[m.first].at < t {
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
func (m *Memory) Len() int { return len(m.order) - m.first }

// Hashes returns the number of keys the memory holds the hash of.
func (m *Memory) Hashes() int { return len(m.sent) - m.sentAt }

// expire forgets what is older than the window.
func (m *Memory) expire(now time.Time) {
	t := now.UnixNano()
	for m.first < len(m.order) && t-m.order[m.first].at >= int64(m.window) {
		m.forgetFirst()
	}
	for m.sentAt < len(m.sent) && t-m.sent[m.sentAt].at >= int64(m.window) {
		m.forgetHash()
	}
	m.compact()
}

// forgetFirst forgets the oldest message, returning its hash and when it was sent.
func (m *Memory) forgetFirst() (hash uint64, at int64) {
	e := &m.order[m.first]
	if n, ok := m.index[e.hash]; ok && n == m.base+uint64(m.first) {
		delete(m.index, e.hash)
	} else {
		delete(m.other, e.key)
	}
	m.bytes -= Cost(e.key, e.enc)
	hash, at = e.hash, e.at
	*e = entry{}
	m.first++
	return hash, at
}

// hashFirst forgets the oldest message but for the hash of its key.
func (m *Memory) hashFirst() {
	h, at := m.forgetFirst()
	if m.hashes == nil {
		m.hashes = make(map[uint64]int)
	}
	m.hashes[h]++
	m.sent = append(m.sent, hashAt{hash: h, at: at})
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
		m.base += uint64(m.first)
		m.first = 0
	}
	if m.sentAt > 0 && m.sentAt >= len(m.sent)/2 {
		m.sent = m.sent[:copy(m.sent, m.sent[m.sentAt:])]
		m.sentAt = 0
	}
}
