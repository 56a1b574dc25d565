package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"sdkpp/server/gateway/internal/replay"
)

// session is an identified gateway session. Every field is guarded by Hub.mu.
type session struct {
	id           string
	who          Identity
	intents      uint64
	capabilities int64
	// Buffer gives out the sequence numbers and holds the last at most Config.ReplayLimit
	// dispatches.
	replay.Buffer
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
	// since is when the session was identified; gen is busmsg.SessionNote.Gen.
	since time.Time
	gen   uint64
	// stamp is the Hub.stamp of the last dispatch pushed to the session (Hub.push).
	stamp uint64
}

// newSessionID returns 32 hex characters from a cryptographic random source.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}
