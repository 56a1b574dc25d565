package handle

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddGetRemove(t *testing.T) {
	var tab Table
	id, err := tab.Add(3, "three")
	require.NoError(t, err)
	require.NotZero(t, id)
	assert.Equal(t, Type(3), id.Type())
	e, err := tab.Get(id, 3)
	require.NoError(t, err)
	assert.Equal(t, "three", e.Value)
	assert.Equal(t, 1, tab.Len())
	_, err = tab.Remove(id, 3)
	require.NoError(t, err)
	assert.Zero(t, tab.Len(), "after Remove")
}

// TestIDLayout: a tag uses all 16 bits (the generator hashes class names into them), and tag,
// generation and index never bleed into each other.
func TestIDLayout(t *testing.T) {
	cases := []struct {
		typ   Type
		gen   uint32
		index uint32
	}{
		{1, 1, 0},
		{0xFF, 1, 1},
		{0x100, 1, 1},
		{0xFFFF, genMask, MaxObjects - 1},
		{0x8001, 0x123456, 0xABCDEF},
	}
	for _, c := range cases {
		id := makeID(c.typ, c.gen, c.index)
		assert.Equal(t, c.typ, id.Type(), "%#x", uint64(id))
		assert.Equal(t, c.gen, id.gen(), "%#x", uint64(id))
		assert.Equal(t, c.index, id.index(), "%#x", uint64(id))
	}

	var tab Table
	wide, err := tab.Add(0x1FF, "wide")
	require.NoError(t, err)
	assert.Equal(t, Type(0x1FF), wide.Type())
	_, err = tab.Get(wide, 0xFF) // the same tag in 8 bits is another class
	var wt *WrongTypeError
	require.ErrorAs(t, err, &wt)
	assert.Equal(t, Type(0x1FF), wt.Got)
}

// Every kind of bad id is told apart and refused, never a panic.
func TestBadIDs(t *testing.T) {
	var tab Table
	live, _ := tab.Add(1, "a")
	other, _ := tab.Add(2, "b")
	dropped, _ := tab.Add(1, "c")
	tab.Remove(dropped, 1)
	reused, _ := tab.Add(1, "d") // takes dropped's slot with a new generation

	cases := []struct {
		name string
		id   ID
		typ  Type
		want error
	}{
		{"zero", 0, 1, ErrZero},
		{"stale after reuse", dropped, 1, ErrStale},
		{"index out of range", makeID(1, 1, 1<<20), 1, ErrForge},
		{"generation never issued", makeID(1, 500, live.index()), 1, ErrForge},
		{"tag changed", makeID(9, live.gen(), live.index()), 1, ErrForge},
		{"all ones", ^ID(0), 1, ErrForge},
		{"type zero", makeID(0, 1, 0), 1, ErrForge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tab.Get(c.id, c.typ)
			assert.ErrorIs(t, err, c.want, "Get(%#x)", uint64(c.id))
			_, err = tab.Remove(c.id, c.typ)
			assert.Error(t, err, "Remove(%#x)", uint64(c.id))
		})
	}
	var wt *WrongTypeError
	_, err := tab.Get(other, 1)
	require.ErrorAs(t, err, &wt, "Get of another type")
	assert.Equal(t, Type(2), wt.Got)
	assert.Equal(t, Type(1), wt.Want)
	e, err := tab.Get(reused, 1)
	require.NoError(t, err, "the reused slot")
	assert.Equal(t, "d", e.Value)
	_, err = tab.Remove(live, 1)
	require.NoError(t, err)
	_, err = tab.Remove(live, 1)
	assert.ErrorIs(t, err, ErrStale, "double Remove")
	_, err = tab.Add(0, "x")
	assert.Error(t, err, "Add with type 0")
}

// Concurrent adds, gets and removes (with -race) keep the count right and never confuse ids.
func TestConcurrent(t *testing.T) {
	var tab Table
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				id, err := tab.Add(Type(g+1), i)
				if !assert.NoError(t, err) {
					return
				}
				e, err := tab.Get(id, Type(g+1))
				if !assert.NoError(t, err) || !assert.Equal(t, i, e.Value) {
					return
				}
				_, err = tab.Remove(id, Type(g+1))
				if !assert.NoError(t, err) {
					return
				}
			}
		}(g)
	}
	wg.Wait()
	assert.Zero(t, tab.Len(), "after all removed")
}

func TestGrowsAcrossChunks(t *testing.T) {
	var tab Table
	ids := make([]ID, 3*chunkSize)
	for i := range ids {
		ids[i], _ = tab.Add(1, i)
	}
	for i, id := range ids {
		e, err := tab.Get(id, 1)
		require.NoError(t, err, "Get(%d)", i)
		require.Equal(t, i, e.Value, "Get(%d)", i)
	}
}

func BenchmarkGet(b *testing.B) {
	var tab Table
	id, _ := tab.Add(1, 1)
	for b.Loop() {
		tab.Get(id, 1)
	}
}

// RemoveAll empties the table: every entry comes back once, every old id is stale, and the slots
// are reused with new generations.
func TestRemoveAll(t *testing.T) {
	var tab Table
	a, _ := tab.Add(1, "a")
	b, _ := tab.Add(2, "b")
	c, _ := tab.Add(1, "c")
	_, err := tab.Remove(b, 2)
	require.NoError(t, err)

	got := tab.RemoveAll()
	var values []any
	for _, e := range got {
		values = append(values, e.Value)
	}
	assert.Equal(t, []any{"a", "c"}, values)
	assert.Zero(t, tab.Len())
	for _, id := range []ID{a, c} {
		_, err := tab.Get(id, id.Type())
		assert.ErrorIs(t, err, ErrStale)
	}
	assert.Empty(t, tab.RemoveAll(), "nothing left")

	d, err := tab.Add(1, "d")
	require.NoError(t, err)
	assert.NotEqual(t, a, d)
	assert.NotEqual(t, c, d)
	assert.Equal(t, 1, tab.Len())
}
