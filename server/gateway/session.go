package gateway

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"time"

	"sdkpp/server/gateway/internal/wsframe"
)

// session is an identified gateway session. Every field is guarded by Hub.mu.
type session struct {
	id           string
	who          Identity
	intents      uint64
	capabilities int64
	seq          int64 // the last sequence number given out
	// buf[head:] holds the last at most Config.ReplayLimit dispatches, oldest first; dropped is
	// the sequence number of the last one dropped from it (0 when none was).
	buf     []wsframe.Dispatch
	head    int
	dropped int64
	// conn is the connection the session is attached to; nil while it waits to be resumed,
	// until expires.
	conn    *conn
	expires time.Time
	// moved says another node resumed the session: this node, letting its connection go,
	// tells the others nothing more of it.
	moved bool
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
func (s *session) push(event, d []byte, limit int) wsframe.Dispatch {
	return s.pushSeq(s.seq+1, event, d, limit)
}

// pushSeq is push with the sequence number seq, which must be above s.seq. On a cluster the
// dispatches read from the bus take numbers derived from the bus's (see busSeq), so that
// another node that replays them from the bus gives them the same numbers.
func (s *session) pushSeq(seq int64, event, d []byte, limit int) wsframe.Dispatch {
	s.seq = seq
	e := wsframe.Dispatch{Seq: s.seq, Event: event, Data: d}
	s.buf = append(s.buf, e)
	if len(s.buf)-s.head > limit {
		s.dropped = s.buf[s.head].Seq
		s.buf[s.head] = wsframe.Dispatch{}
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
// buffer still holds all of them (false when some were dropped). Sequence numbers increase
// but need not be consecutive.
func (s *session) after(seq int64) ([]wsframe.Dispatch, bool) {
	held := s.buf[s.head:]
	if seq >= s.seq {
		return nil, true
	}
	if seq < s.dropped {
		return nil, false
	}
	i, _ := slices.BinarySearchFunc(held, seq+1, func(e wsframe.Dispatch, seq int64) int { return cmp.Compare(e.Seq, seq) })
	return append([]wsframe.Dispatch(nil), held[i:]...), true
}
