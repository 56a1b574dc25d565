package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/gateway/internal/wsframe"
)

// A Buffer keeps the last limit dispatches, with amortized compaction.
func TestBufferKeepsTheLast(t *testing.T) {
	var s Buffer
	for range 10000 {
		s.Push([]byte(`"N"`), []byte("1"), 1000)
	}
	assert.Equal(t, 1000, len(s.buf)-s.head, "held")
	assert.Equal(t, int64(10000), s.Seq())
	got, ok := s.After(9000)
	require.True(t, ok)
	require.Len(t, got, 1000)
	assert.Equal(t, int64(9001), got[0].Seq)
	assert.Equal(t, int64(10000), got[999].Seq)
	f := got[0].Frame()
	assert.Equal(t, `{"op":0,"d":1,"s":9001,"t":"N"}`, string(f))
	_, ok = s.After(8999)
	assert.False(t, ok, "After(8999) reports dropped dispatches")
	got, ok = s.After(10000)
	assert.True(t, ok)
	assert.Empty(t, got, "After(last)")
}

// On a cluster a session's sequence numbers come from the bus and have gaps: After finds the
// dispatches above any number, and tells when the buffer dropped some the client missed.
func TestAfterWithSparseSequenceNumbers(t *testing.T) {
	var s Buffer
	for _, m := range []int64{3, 4, 9, 12, 13} {
		s.PushSeq(m<<20, []byte(`"E"`), []byte("1"), 3)
	}
	got, ok := s.After(9 << 20)
	require.True(t, ok)
	require.Len(t, got, 2)
	assert.Equal(t, int64(12)<<20, got[0].Seq)
	got, ok = s.After(10 << 20) // a number between two held ones
	require.True(t, ok)
	assert.Len(t, got, 2)
	got, ok = s.After(4<<20 + 1) // a local push after 4: 9 is the next
	require.True(t, ok)
	assert.Len(t, got, 3)
	_, ok = s.After(3 << 20) // 4 was dropped
	assert.False(t, ok)
	e := s.Push([]byte(`"L"`), []byte("1"), 3) // a push of the node's own follows the last
	assert.Equal(t, int64(13)<<20+1, e.Seq)
}

// After finds the dispatches above any number, whether they are a few at the end (looked for
// from there) or more (searched for), numbers with gaps included.
func TestAfterNearTheEndAndFar(t *testing.T) {
	var s Buffer
	var seqs []int64
	for m := int64(1); m <= 300; m++ {
		seq := m<<3 + m%3 // gaps of 7 to 9
		s.PushSeq(seq, []byte(`"E"`), []byte("1"), 200)
		seqs = append(seqs, seq)
	}
	kept := seqs[len(seqs)-200:]
	for seq := kept[0] - 1; seq <= kept[len(kept)-1]+1; seq++ { // above the last dropped
		got, ok := s.After(seq)
		require.True(t, ok, "After(%d)", seq)
		var want []int64
		for _, k := range kept {
			if k > seq {
				want = append(want, k)
			}
		}
		require.Len(t, got, len(want), "After(%d)", seq)
		if len(want) > 0 {
			assert.Equal(t, want[0], got[0].Seq, "After(%d)", seq)
		}
	}
}

// A session resumed from another node starts numbering after the bus's number (SetSeq), and
// the dispatches replayed from the bus go before what it got since (Prepend), the oldest
// dropped beyond the limit.
func TestSetSeqAndPrepend(t *testing.T) {
	var b Buffer
	b.SetSeq(10 << 20)
	e := b.Push([]byte(`"RESUMED"`), []byte("{}"), 3)
	assert.Equal(t, int64(10)<<20+1, e.Seq)
	b.Prepend([]wsframe.Dispatch{{Seq: 7 << 20}}, 3)
	got, ok := b.After(0)
	require.True(t, ok, "nothing dropped")
	assert.Equal(t, []wsframe.Dispatch{{Seq: 7 << 20}, e}, got)

	b.Prepend([]wsframe.Dispatch{{Seq: 3 << 20}, {Seq: 5 << 20}}, 3)
	got, ok = b.After(3 << 20)
	require.True(t, ok)
	assert.Equal(t, []wsframe.Dispatch{{Seq: 5 << 20}, {Seq: 7 << 20}, e}, got)
	_, ok = b.After(3<<20 - 1)
	assert.False(t, ok, "3 was dropped")
	assert.Equal(t, int64(10)<<20+1, b.Seq())
}

// Prepend keeps its own copy: the resumed session writes the replayed list out without the
// hub's lock while new dispatches are pushed and the buffer compacts.
func TestPrependDoesNotShareTheList(t *testing.T) {
	var b Buffer
	list := make([]wsframe.Dispatch, 2, 8) // room to grow in place
	list[0], list[1] = wsframe.Dispatch{Seq: 1}, wsframe.Dispatch{Seq: 2}
	b.Prepend(list, 4)
	for range 6 {
		b.Push([]byte(`"E"`), []byte("{}"), 4)
	}
	assert.Equal(t, []wsframe.Dispatch{{Seq: 1}, {Seq: 2}}, list, "the caller's list is untouched")
	assert.Equal(t, []wsframe.Dispatch{{Seq: 1}, {Seq: 2}, {}, {}, {}, {}, {}, {}}, list[:8], "nor its spare capacity")
}

// AppendAfter appends to the array it is given, which Reusable keeps for the next call unless it
// grew past a catch-up's size: a connection's takes in a steady stream allocate nothing.
func TestAppendAfterReusesItsArray(t *testing.T) {
	var s Buffer
	var taken []wsframe.Dispatch
	take := func(seq int64) []wsframe.Dispatch {
		got, ok := s.AppendAfter(taken[:0], seq)
		require.True(t, ok)
		taken = Reusable(got)
		return got
	}
	for range 3 {
		s.Push([]byte(`"N"`), []byte("1"), 1000)
	}
	got := take(0)
	require.Len(t, got, 3)
	event, two, three := []byte(`"N"`), []byte("2"), []byte("3")
	allocs := testing.AllocsPerRun(100, func() {
		seq := s.Seq()
		s.Push(event, two, 1000)
		s.Push(event, three, 1000)
		if got := take(seq); len(got) != 2 || string(got[1].Data) != "3" {
			t.Fatal(got)
		}
	})
	assert.Zero(t, allocs)

	seq := s.Seq()
	for range maxReused + 1 {
		s.Push([]byte(`"N"`), []byte("4"), 1000)
	}
	require.Len(t, take(seq), maxReused+1)
	assert.Nil(t, taken, "a catch-up's array is not kept")
}
