package noncemem

import (
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
	m := New(window)
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
		require.Len(t, m.byKey, n-step-1)
		require.LessOrEqual(t, len(m.order), 2*(n-step-1)+1, "order is compacted")
	}
}
