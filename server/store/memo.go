package store

import (
	"sync"
	"sync/atomic"
)

// memo is what a SQLite store remembers between statements, shared by the store and its
// transactions: the cache epoch and the access tokens it has read.
//
// The service reads a token on every request and the users and applications behind a lobby
// message on every message; each read is a SQLite statement of 15-25 µs. Those rows rarely
// change, so the store keeps tokens itself and tells other caches, through the epoch, when a
// user, an application or a token's validity has changed.
type memo struct {
	epoch atomic.Uint64
	// on is false where other processes write the same database (PostgreSQL): nothing is
	// kept, and the epoch moves at every look.
	on bool

	mu     sync.Mutex
	tokens map[string]Token // by hash; only committed rows read outside a transaction
}

// maxMemoTokens bounds the token cache; when it is full it starts again empty.
const maxMemoTokens = 1 << 16

// newMemo returns a memo that keeps tokens when on, and one that keeps nothing otherwise.
func newMemo(on bool) *memo { return &memo{on: on, tokens: make(map[string]Token)} }

// changed is called by every write that can make a cached user, application or token wrong:
// it moves the epoch on and forgets the tokens. It is called twice (DB.changed): before the
// write, and once the write is committed, as reads run on other connections meanwhile.
func (m *memo) changed() {
	m.mu.Lock()
	m.epoch.Add(1)
	clear(m.tokens)
	m.mu.Unlock()
}

// token returns the cached token of hash.
func (m *memo) token(hash []byte) (Token, bool) {
	if !m.on {
		return Token{}, false
	}
	m.mu.Lock()
	t, ok := m.tokens[string(hash)]
	m.mu.Unlock()
	return t, ok
}

// keepToken caches t, read when the epoch was epoch, unless something changed since.
func (m *memo) keepToken(t *Token, epoch uint64) {
	if !m.on {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.epoch.Load() != epoch {
		return
	}
	if len(m.tokens) >= maxMemoTokens {
		clear(m.tokens)
	}
	m.tokens[string(t.Hash)] = *t
}

// CacheEpoch changes whenever a user, an application or a token's validity changes. A service
// that keeps such rows in memory keeps them while the epoch it read them at is current. Where
// other processes write the database (PostgreSQL), this one cannot see their writes, so the
// epoch changes at every call: nothing read is kept.
func (s *DB) CacheEpoch() uint64 {
	if !s.memo.on {
		return s.memo.epoch.Add(1)
	}
	return s.memo.epoch.Load()
}
