// Package handle is the object table of the C ABI: it maps the integer ids that games hold to Go
// objects, and tells a live id from a dropped, forged or mistyped one without ever crashing.
//
// An ID packs a slot index (low 24 bits), the slot's generation (next 24 bits) and a type tag (top
// 16 bits). Zero is never a valid ID. Lookups take no lock: slots live in fixed-size chunks that
// never move, and each slot holds an atomic pointer to its entry.
package handle

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ID is an object's id as a game sees it (the opaque field of a C handle struct).
type ID uint64

// Type is a class tag, 1..65535. The generator derives each class's tag from its name, so a
// tag is wide enough that distinct names rarely share one (the generator refuses if they do).
type Type uint16

const (
	indexBits = 24
	genBits   = 24
	genMask   = 1<<genBits - 1
	chunkBits = 12
	chunkSize = 1 << chunkBits
	// MaxObjects is how many objects may be live at once.
	MaxObjects = 1 << indexBits
)

func makeID(typ Type, gen uint32, index uint32) ID {
	return ID(uint64(typ)<<(indexBits+genBits) | uint64(gen&genMask)<<indexBits | uint64(index))
}

// Type returns the tag in id.
func (id ID) Type() Type { return Type(id >> (indexBits + genBits)) }

func (id ID) gen() uint32   { return uint32(id>>indexBits) & genMask }
func (id ID) index() uint32 { return uint32(id) & (MaxObjects - 1) }

// Errors of Get and Remove. Each says what the game did wrong.
var (
	ErrZero  = errors.New("the object is not initialized or was already dropped (zero id)")
	ErrStale = errors.New("the object was dropped (stale id)")
	ErrForge = errors.New("the id is not an sdkpp object (forged or corrupted)")
	ErrFull  = errors.New("too many live objects")
)

// WrongTypeError says an id names an object of another class.
type WrongTypeError struct{ Want, Got Type }

func (e *WrongTypeError) Error() string {
	return fmt.Sprintf("the id names an object of type %d, not %d", e.Got, e.Want)
}

// Entry is one live object. Mu guards Value's contents for classes that are not
// internally synchronized; the table itself never takes it.
type Entry struct {
	ID    ID
	Mu    sync.Mutex
	Value any
}

type slot struct {
	entry atomic.Pointer[Entry]
	gen   uint32 // guarded by Table.mu
}

type chunk [chunkSize]slot

// Table maps IDs to objects. The zero Table is ready to use.
type Table struct {
	mu     sync.Mutex
	chunks atomic.Pointer[[]*chunk] // grows by copy under mu; chunks never move
	next   uint32                   // slots handed out so far, guarded by mu
	free   []uint32                 // indexes of dropped slots, guarded by mu
	live   atomic.Int64
}

func (t *Table) slot(index uint32) *slot {
	cs := t.chunks.Load()
	if cs == nil {
		return nil
	}
	ci := int(index >> chunkBits)
	if ci >= len(*cs) {
		return nil
	}
	return &(*cs)[ci][index&(chunkSize-1)]
}

// Add stores v and returns its new ID. typ must be non-zero.
func (t *Table) Add(typ Type, v any) (ID, error) {
	if typ == 0 {
		return 0, fmt.Errorf("handle: type 0 is reserved")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var index uint32
	if n := len(t.free); n > 0 {
		index = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if t.next >= MaxObjects {
			return 0, ErrFull
		}
		index = t.next
		t.next++
		if t.slot(index) == nil {
			var cs []*chunk
			if old := t.chunks.Load(); old != nil {
				cs = append(cs, *old...)
			}
			cs = append(cs, new(chunk))
			t.chunks.Store(&cs)
		}
	}
	s := t.slot(index)
	s.gen = (s.gen + 1) & genMask
	if s.gen == 0 {
		s.gen = 1
	}
	id := makeID(typ, s.gen, index)
	s.entry.Store(&Entry{ID: id, Value: v})
	t.live.Add(1)
	return id, nil
}

// Get returns the live entry of id, which must be of type typ.
func (t *Table) Get(id ID, typ Type) (*Entry, error) {
	if id == 0 {
		return nil, ErrZero
	}
	s := t.slot(id.index())
	if s == nil || id.gen() == 0 || id.Type() == 0 {
		return nil, ErrForge
	}
	e := s.entry.Load()
	if e == nil {
		return nil, ErrStale
	}
	if e.ID != id {
		if id.gen() < e.ID.gen() {
			return nil, ErrStale // the slot was reused after a drop
		}
		return nil, ErrForge // a generation or tag this slot never had
	}
	if id.Type() != typ {
		return nil, &WrongTypeError{Want: typ, Got: id.Type()}
	}
	return e, nil
}

// Remove drops id and returns what it held.
func (t *Table) Remove(id ID, typ Type) (*Entry, error) {
	e, err := t.Get(id, typ)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.slot(id.index())
	if !s.entry.CompareAndSwap(e, nil) {
		return nil, ErrStale // dropped by another thread in the meantime
	}
	t.free = append(t.free, id.index())
	t.live.Add(-1)
	return e, nil
}

// Len returns the number of live objects.
func (t *Table) Len() int { return int(t.live.Load()) }

// RemoveAll drops every live object and returns their entries, in slot order. Every id handed out
// before it is stale afterwards.
func (t *Table) RemoveAll() []*Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Entry
	for index := uint32(0); index < t.next; index++ {
		s := t.slot(index)
		e := s.entry.Swap(nil)
		if e == nil {
			continue
		}
		out = append(out, e)
		t.free = append(t.free, index)
		t.live.Add(-1)
	}
	return out
}
