package store

import (
	"context"
	"sync"
	"sync/atomic"
)

// memo is what a store remembers between statements, shared by the store and its
// transactions: the cache epoch, and the access tokens, applications and top-level
// authorizations it has read (on PostgreSQL, where other nodes write too, only while their
// changes are heard, memoListener, and only for reads that may be a moment behind).
//
// The service reads a token on every request (for a signed client_credentials token, its
// authorization instead, server/token), the users and applications behind a lobby message on
// every message, and an application and its bot's authorization on every client_credentials
// token; each read is a SQLite statement of 15-25 µs. Those rows rarely
// change, so the store keeps them itself and tells other caches, through the epoch, when a
// user, an application, an authorization or a token's validity has changed.
type memo struct {
	epoch atomic.Uint64
	// gen moves with every change, as epoch does, but not at CacheEpoch's calls on PostgreSQL:
	// a row read is kept unless gen moved meanwhile.
	gen atomic.Uint64
	// on is false where other processes write the same database (PostgreSQL): the epoch moves
	// at every look, and only the tables the database notifies changes of are kept, while
	// notified is set.
	on bool
	// notified is set on PostgreSQL while this node listens to the database's notifications of
	// changed applications, authorizations and tokens (memoListener): each one empties the memo,
	// as a write of this node does, so those tables are kept meanwhile.
	notified atomic.Bool

	mu     sync.Mutex                           // guards the tables; only committed rows read outside a transaction
	shared sharedEpoch                          // the last SharedEpoch read, for reads under MayBeBehind
	tokens memoTable[uint64, Token]             // by id
	apps   memoTable[uint64, *Application]      // by id
	auths  memoTable[[2]uint64, *Authorization] // top-level ones, by application and user
}

// sharedEpoch is a value SharedEpoch read for key; ok is false when none is kept.
type sharedEpoch struct {
	key string
	n   uint64
	ok  bool
}

// memoTable is one of the memo's caches: at most max rows, each copied in and out by clone so
// that callers never share one.
type memoTable[K comparable, V any] struct {
	rows  map[K]V
	max   int // when full, the table starts again empty
	clone func(V) V
	// notified tells that the database notifies every change of the table's rows (PostgreSQL's
	// triggers, migration 16): the table is kept on PostgreSQL too, while memo.notified is set.
	notified bool
}

func newMemoTable[K comparable, V any](max int, clone func(V) V, notified bool) memoTable[K, V] {
	return memoTable[K, V]{rows: make(map[K]V), max: max, clone: clone, notified: notified}
}

// newMemo returns a memo that keeps rows when on, and one that keeps nothing otherwise.
func newMemo(on bool) *memo {
	return &memo{on: on,
		// On PostgreSQL a token is answered from the memo only under MayBeBehind (a lobby
		// message's sender): every other read refuses a token revoked on another node at once.
		tokens: newMemoTable[uint64](1<<16, func(t Token) Token { return t }, true),
		apps:   newMemoTable[uint64](1<<12, (*Application).clone, true),
		auths:  newMemoTable[[2]uint64](1<<14, (*Authorization).clone, true)}
}

// keeps tells whether t's rows may be kept now.
func keeps[K comparable, V any](m *memo, t *memoTable[K, V]) bool {
	return m.on || t.notified && m.notified.Load()
}

// mayBeBehind is the context key of MayBeBehind.
type mayBeBehind struct{}

// MayBeBehind returns ctx for reads that the memo may answer on PostgreSQL too: the application
// and the bot's authorization of each client_credentials token, and the token of each lobby
// message sent. There the memo follows another node's change a notification later
// (memoListener), so a read under ctx may return a row that another node changed (a token it
// revoked) a moment ago; reads under other contexts see every commit. (On SQLite, one node, the
// memo answers every read outside a transaction.)
func MayBeBehind(ctx context.Context) context.Context {
	return context.WithValue(ctx, mayBeBehind{}, true)
}

// answers tells whether the memo may answer a read of t under ctx.
func answers[K comparable, V any](ctx context.Context, m *memo, t *memoTable[K, V]) bool {
	return m.on || t.notified && m.notified.Load() && ctx.Value(mayBeBehind{}) != nil
}

// changed is called by every write that can make a cached row wrong: it moves the epoch on and
// forgets every row. It is called twice (DB.changed): before the write, and once the write is
// committed, as reads run on other connections meanwhile.
func (m *memo) changed() {
	m.mu.Lock()
	m.epoch.Add(1)
	m.gen.Add(1)
	m.shared = sharedEpoch{}
	clear(m.tokens.rows)
	clear(m.apps.rows)
	clear(m.auths.rows)
	m.mu.Unlock()
}

// memoGet returns a copy of t's row k, for a read under ctx.
func memoGet[K comparable, V any](ctx context.Context, m *memo, t *memoTable[K, V], k K) (v V, ok bool) {
	if !answers(ctx, m, t) {
		return v, false
	}
	m.mu.Lock()
	v, ok = t.rows[k]
	m.mu.Unlock()
	if !ok {
		return v, false
	}
	return t.clone(v), true
}

// memoKeep caches a copy of v as t's row k, read when the memo's generation was gen, unless
// something changed since.
func memoKeep[K comparable, V any](m *memo, t *memoTable[K, V], k K, v V, gen uint64) {
	if !keeps(m, t) {
		return
	}
	v = t.clone(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen.Load() != gen || !keeps(m, t) {
		return
	}
	if len(t.rows) >= t.max {
		clear(t.rows)
	}
	t.rows[k] = v
}

// memoRead returns t's row k from the memo, or reads it with read (remembering it) outside a
// transaction; in a transaction, which may read its own uncommitted rows, it always reads. On
// PostgreSQL the memo answers only reads under MayBeBehind, but keeps what every read finds.
func memoRead[K comparable, V any](ctx context.Context, s *DB, t *memoTable[K, V], k K, read func() (V, error)) (V, error) {
	if s.tx {
		return read()
	}
	if v, ok := memoGet(ctx, s.memo, t, k); ok {
		return v, nil
	}
	gen := s.memo.gen.Load()
	v, err := read()
	if err == nil {
		memoKeep(s.memo, t, k, v, gen)
	}
	return v, err
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
