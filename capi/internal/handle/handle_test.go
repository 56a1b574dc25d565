package handle

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddGetRemove(t *testing.T) {
	var tab Table
	id, err := tab.Add(3, "three")
	if err != nil || id == 0 {
		t.Fatalf("Add = %v, %v", id, err)
	}
	if id.Type() != 3 {
		t.Fatalf("type = %d, want 3", id.Type())
	}
	e, err := tab.Get(id, 3)
	if err != nil || e.Value != "three" {
		t.Fatalf("Get = %v, %v", e, err)
	}
	if tab.Len() != 1 {
		t.Fatalf("Len = %d", tab.Len())
	}
	if _, err := tab.Remove(id, 3); err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 0 {
		t.Fatalf("Len after Remove = %d", tab.Len())
	}
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
			if _, err := tab.Get(c.id, c.typ); !errors.Is(err, c.want) {
				t.Fatalf("Get(%#x) = %v, want %v", uint64(c.id), err, c.want)
			}
			if _, err := tab.Remove(c.id, c.typ); err == nil {
				t.Fatalf("Remove(%#x) succeeded", uint64(c.id))
			}
		})
	}
	var wt *WrongTypeError
	if _, err := tab.Get(other, 1); !errors.As(err, &wt) || wt.Got != 2 || wt.Want != 1 {
		t.Fatalf("Get of another type = %v", err)
	}
	if e, err := tab.Get(reused, 1); err != nil || e.Value != "d" {
		t.Fatalf("reused slot = %v, %v", e, err)
	}
	if _, err := tab.Remove(live, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Remove(live, 1); !errors.Is(err, ErrStale) {
		t.Fatalf("double Remove = %v, want ErrStale", err)
	}
	if _, err := tab.Add(0, "x"); err == nil {
		t.Fatal("Add with type 0 succeeded")
	}
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
				if err != nil {
					t.Error(err)
					return
				}
				if e, err := tab.Get(id, Type(g+1)); err != nil || e.Value != i {
					t.Errorf("Get = %v, %v", e, err)
					return
				}
				if _, err := tab.Remove(id, Type(g+1)); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if tab.Len() != 0 {
		t.Fatalf("Len = %d after all removed", tab.Len())
	}
}

func TestGrowsAcrossChunks(t *testing.T) {
	var tab Table
	ids := make([]ID, 3*chunkSize)
	for i := range ids {
		ids[i], _ = tab.Add(1, i)
	}
	for i, id := range ids {
		if e, err := tab.Get(id, 1); err != nil || e.Value != i {
			t.Fatalf("Get(%d) = %v, %v", i, e, err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	var tab Table
	id, _ := tab.Add(1, 1)
	for b.Loop() {
		tab.Get(id, 1)
	}
}
