package noncemem

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// The memory forgets each message its window after it was sent, and only then, whatever the number
// it holds; its order is compacted as it goes, so that it does not grow without end.
func TestMemoryExpiresInOrder(t *testing.T) {
	const window = 5 * time.Minute
	m := New(window, 1<<30) // far above what it keeps
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := func(i int) Key { return Key{Lobby: 1, Author: 2, Nonce: strconv.Itoa(i)} }
	const n = 1000
	const every = 100 * time.Millisecond // n of them within the window
	for i := range n {
		m.Keep(key(i), wire.Encoded(strconv.Itoa(i)), t0.Add(time.Duration(i)*every))
	}
	for _, step := range []int{0, 1, 299, 300, 301, 700, 999} {
		now := t0.Add(window + time.Duration(step)*every)
		for i := range n {
			enc, ok := m.Find(key(i), now)
			require.Equal(t, i > step, ok, "%d steps past the window, message %d", step, i)
			if ok {
				require.Equal(t, strconv.Itoa(i), string(enc))
			}
		}
		require.Equal(t, n-step-1, m.Len())
		require.Len(t, m.index, n-step-1)
		require.LessOrEqual(t, len(m.order), 2*(n-step-1)+1, "order is compacted")
	}
}

// Over its limit the memory forgets its oldest messages early, whatever the number kept: first
// but for their key's hash (Sent), then whole (ForgotEarly tells when the newest of those was
// sent). What it holds stays under the limit for a long run of sends and is what it counts, and
// the newest stay remembered (the store answers for the others: rule LOB-2's repeated send,
// lobbies.TestMessageNonceOverTheMemoryLimit).
func TestMemoryStaysUnderItsLimit(t *testing.T) {
	const window = 5 * time.Minute
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := func(i int) Key { return Key{Lobby: 1, Author: 2, Nonce: strconv.Itoa(i)} }
	enc := func() wire.Encoded { return wire.Encoded(make([]byte, 600, 640)) }
	limit := 100 * Cost(key(99999), enc()) // 50 of the largest, and the rest in hashes
	m := New(window, limit)
	require.True(t, m.ForgotEarly().IsZero())
	const n = 20000
	const every = time.Millisecond // all within the window
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * every) }
	for i := range n {
		m.Keep(key(i), enc(), at(i))
		require.LessOrEqual(t, m.Bytes(), limit, "after %d sends", i+1)
		require.LessOrEqual(t, len(m.order), 2*m.Len()+1, "order is compacted")
		require.LessOrEqual(t, len(m.sent), 2*m.Hashes()+1, "sent is compacted")
		if kept := m.Len() + m.Hashes(); i >= kept {
			require.WithinDuration(t, at(i-kept), m.ForgotEarly(), 0, "after %d sends", i+1)
		}
	}
	require.GreaterOrEqual(t, m.Len(), 50)
	require.Greater(t, m.Hashes(), 500)
	now := at(n - 1)
	for i := range n {
		_, found := m.Find(key(i), now)
		whole, hashed := i >= n-m.Len(), i >= n-m.Len()-m.Hashes()
		require.Equal(t, whole, found, "message %d", i)
		if !whole {
			require.Equal(t, hashed, m.Sent(key(i)), "message %d", i)
		}
	}
	require.False(t, m.Sent(key(n)), "a key never sent")

	total := HashCost * len(m.hashes)
	for _, e := range m.order[m.first:] {
		total += Cost(e.key, e.enc)
	}
	require.Equal(t, total, m.Bytes(), "Bytes counts what is held")
	m.Find(key(0), now.Add(window)) // the window passes: everything expires
	require.Zero(t, m.Bytes())
	require.Zero(t, m.Len())
	require.Zero(t, m.Hashes())
	require.Empty(t, m.hashes)
	require.False(t, m.Sent(key(n-1)))
}

// Messages kept at the same time (accepted together, perhaps not yet stored) are never forgotten
// early, even past the limit; the next instant forgets them.
func TestMemoryKeepsTheNewestInstant(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := func(i int) Key { return Key{Nonce: strconv.Itoa(i)} }
	m := New(time.Minute, 1) // below any message
	for i := range 5 {
		m.Keep(key(i), wire.Encoded("x"), t0)
	}
	require.Equal(t, 5, m.Len())
	require.True(t, m.ForgotEarly().IsZero())
	m.Keep(key(5), wire.Encoded("y"), t0.Add(time.Nanosecond))
	require.Equal(t, 1, m.Len())
	require.Zero(t, m.Hashes())
	require.WithinDuration(t, t0, m.ForgotEarly(), 0)
	enc, ok := m.Find(key(5), t0.Add(time.Nanosecond))
	require.True(t, ok)
	require.Equal(t, "y", string(enc))
}

// Keeping a key again replaces its message in place: it is counted once and expires from its
// first time.
func TestMemoryKeepAgain(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := Key{Lobby: 1, Nonce: "n"}
	m := New(time.Minute, 1<<20)
	m.Keep(k, wire.Encoded("first"), t0)
	m.Keep(k, wire.Encoded("second!"), t0.Add(time.Second))
	require.Equal(t, Cost(k, wire.Encoded("second!")), m.Bytes())
	_, ok := m.Find(k, t0.Add(time.Minute))
	require.False(t, ok)
	require.Zero(t, m.Bytes())
}

// BenchmarkMemoryHeap reports the heap a remembered key holds (heap-B/key) beside what the memory
// counts for it (cost-B/key), for messages of the usual size (a 640-byte buffer, as the service
// encodes them, and a 20-character nonce, as the SDK's tunnel makes them) kept whole, and for
// keys mostly kept as hashes.
func BenchmarkMemoryHeap(b *testing.B) {
	const n = 100000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, bc := range []struct {
		name  string
		limit int
	}{{"whole", 1 << 40}, {"hashes", 2 * n * HashCost}} {
		b.Run(bc.name, func(b *testing.B) {
			var cost, heap float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				m := New(time.Hour, bc.limit)
				for i := range n {
					k := Key{Lobby: 1, Author: 2, Nonce: string(strconv.AppendInt([]byte("0123456789"), int64(1e9+i), 10))}
					m.Keep(k, wire.Encoded(make([]byte, 600, 640)), t0.Add(time.Duration(i)))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = float64(after.HeapAlloc-before.HeapAlloc) / n
				cost = float64(m.Bytes()) / n
				require.Equal(b, n, m.Len()+m.Hashes())
				runtime.KeepAlive(m)
			}
			b.ReportMetric(heap, "heap-B/key")
			b.ReportMetric(cost, "cost-B/key")
		})
	}
}

// Add, after Find missed a key, leaves the memory as Keep would: the same messages, hashes,
// bytes and early forgetting, over the limit too (rule LOB-2's repeated send finds either's).
func TestMemoryAddIsKeepOfAMissingKey(t *testing.T) {
	const window = 5 * time.Minute
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := func(i int) Key { return Key{Lobby: 1, Author: uint64(i % 3), Nonce: strconv.Itoa(i)} }
	enc := func(i int) wire.Encoded { return wire.Encoded(make([]byte, 100+i%500)) }
	limit := 40 * Cost(key(99999), enc(499))
	kept, added := New(window, limit), New(window, limit)
	const n = 3000
	for i := range n {
		now := t0.Add(time.Duration(i) * 200 * time.Millisecond) // the first expire midway
		_, ok := kept.Find(key(i), now)
		require.False(t, ok)
		kept.Keep(key(i), enc(i), now)
		_, ok = added.Find(key(i), now)
		require.False(t, ok)
		added.Add(key(i), enc(i), now)
		require.Equal(t, kept.Bytes(), added.Bytes(), "after %d sends", i+1)
		require.Equal(t, kept.Len(), added.Len())
		require.Equal(t, kept.Hashes(), added.Hashes())
		require.Equal(t, kept.ForgotEarly(), added.ForgotEarly())
		got, ok := added.Find(key(i), now)
		require.True(t, ok, "the message just added")
		require.Len(t, got, len(enc(i)))
		require.Equal(t, kept.Sent(key(i/2)), added.Sent(key(i/2)))
	}
	require.Less(t, added.Len(), n, "the limit forgot the oldest early")
	require.NotZero(t, added.Hashes())
}

// Keys of the same hash are each found, replaced and forgotten as any other: the first in the
// map of hashes, the others in the map by key beside it, whichever of them goes first.
func TestMemoryKeysOfOneHash(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := New(time.Minute, 1<<20)
	m.sum = func(k Key) uint64 { return k.Lobby } // every key of a lobby collides
	key := func(i int) Key { return Key{Lobby: uint64(i % 2), Author: 7, Nonce: strconv.Itoa(i)} }
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	const n = 10
	for i := range n {
		_, ok := m.Find(key(i), at(i))
		require.False(t, ok, "key %d before it was added", i)
		m.Add(key(i), wire.Encoded("m"+strconv.Itoa(i)), at(i))
	}
	require.Len(t, m.index, 2)
	require.Len(t, m.other, n-2)
	m.Keep(key(3), wire.Encoded("again"), at(n))
	for i := range n {
		enc, ok := m.Find(key(i), at(n))
		require.True(t, ok, "key %d", i)
		require.Equal(t, map[bool]string{true: "again", false: "m" + strconv.Itoa(i)}[i == 3], string(enc))
	}
	_, ok := m.Find(Key{Lobby: 1, Author: 7, Nonce: "x"}, at(n))
	require.False(t, ok, "a key of a remembered hash that was never added")
	for gone := range n { // the window passes the messages one by one, the first of a hash first
		now := at(gone).Add(time.Minute)
		for i := range n {
			_, ok := m.Find(key(i), now)
			require.Equal(t, i > gone, ok, "key %d once %d are gone", i, gone+1)
		}
		m.Add(key(100+gone*2), wire.Encoded("new"), now) // a new key of that hash takes its slot
		enc, ok := m.Find(key(100+gone*2), now)
		require.True(t, ok)
		require.Equal(t, "new", string(enc))
	}
	require.Equal(t, n, m.Len())
	require.Len(t, m.index, 1)
}
