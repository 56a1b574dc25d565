package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// entry is one dispatch a session holds for delivery and replay. Its event name and data are
// shared by every session the dispatch went to; the frame is built when it is written, so that
// a dispatch to a 100-member lobby holds its data once, not once per session.
type entry struct {
	seq   int64
	event []byte // the JSON-quoted event name
	d     []byte // the event's data, JSON
}

// frame is the entry's payload, {"op":0,"d":...,"s":...,"t":...}.
func (e entry) frame() []byte { return appendDispatch(nil, e.seq, e.event, e.d) }

// session is an identified gateway session. Every field is guarded by Hub.mu.
type session struct {
	id           string
	who          Identity
	intents      uint64
	capabilities int64
	seq          int64 // the last sequence number given out
	// buf[head:] holds the last at most Config.ReplayLimit dispatches, oldest first.
	buf  []entry
	head int
	// conn is the connection the session is attached to; nil while it waits to be resumed,
	// until expires.
	conn    *conn
	expires time.Time
	// grant is the token grant of the access token that identified or last resumed the
	// session (Identity.Grant); guarded by Hub.mu.
	grant uint64
	// since is when the session was identified.
	since time.Time
}

// newSessionID returns 32 hex characters from a cryptographic random source.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// push gives the next sequence number to a dispatch of the quoted event with data d, keeps it in
// the replay buffer (dropping the oldest beyond limit), and returns it.
func (s *session) push(event, d []byte, limit int) entry {
	s.seq++
	e := entry{seq: s.seq, event: event, d: d}
	s.buf = append(s.buf, e)
	if len(s.buf)-s.head > limit {
		s.buf[s.head] = entry{}
		s.head++
	}
	if s.head >= limit && s.head >= len(s.buf)/2 { // compact, amortized O(1) per push
		n := copy(s.buf, s.buf[s.head:])
		clear(s.buf[n:])
		s.buf = s.buf[:n]
		s.head = 0
	}
	return e
}

// after returns a copy of the held dispatches with a sequence number above seq, and whether the
// buffer still holds all of them (false when some were dropped).
func (s *session) after(seq int64) ([]entry, bool) {
	held := s.buf[s.head:]
	if seq >= s.seq {
		return nil, true
	}
	if len(held) == 0 || held[0].seq > seq+1 {
		return nil, false
	}
	return append([]entry(nil), held[seq+1-held[0].seq:]...), true
}
