package handle

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzTable runs a program of table operations read from the input against a model: live ids
// give their own value, dropped ids are stale, ids of another class are of the wrong type, zero
// is zero, and any other id (forged from the input's bytes) is refused, never a value.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 0, 3, 0, 2, 1})
	f.Add([]byte{0, 0, 0, 0, 1, 1, 0, 0, 3, 0, 3, 1})
	f.Add([]byte{4, 0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xf0, 0x0d, 5})
	f.Add([]byte{0, 7, 4, 1, 0, 0, 1, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, prog []byte) {
		var tab Table
		live := map[ID]int{} // id -> value
		var order, dead []ID
		next := 0
		at := func(ids []ID, b byte) (ID, bool) {
			if len(ids) == 0 {
				return 0, false
			}
			return ids[int(b)%len(ids)], true
		}
		for pc := 0; pc < len(prog); pc++ {
			arg := byte(0)
			if pc+1 < len(prog) {
				arg = prog[pc+1]
			}
			switch prog[pc] % 6 {
			case 0: // add an object of class 1..3
				pc++
				next++
				id, err := tab.Add(Type(1+arg%3), next)
				require.NoError(t, err)
				require.NotZero(t, id)
				require.NotContains(t, live, id, "an id is handed out twice")
				live[id] = next
				order = append(order, id)
			case 1: // drop a live object
				pc++
				id, ok := at(order, arg)
				if !ok || live[id] == 0 {
					continue
				}
				e, err := tab.Remove(id, id.Type())
				require.NoError(t, err)
				assert.Equal(t, live[id], e.Value)
				delete(live, id)
				dead = append(dead, id)
			case 2: // a live object through another class
				pc++
				id, ok := at(order, arg)
				if !ok || live[id] == 0 {
					continue
				}
				_, err := tab.Get(id, id.Type()%3+1)
				var wt *WrongTypeError
				require.ErrorAs(t, err, &wt)
				assert.Equal(t, id.Type(), wt.Got)
			case 3: // a dropped object, read and dropped again
				pc++
				id, ok := at(dead, arg)
				if !ok {
					continue
				}
				_, err := tab.Get(id, id.Type())
				assert.ErrorIs(t, err, ErrStale)
				_, err = tab.Remove(id, id.Type())
				assert.ErrorIs(t, err, ErrStale)
			case 4: // a forged id
				var raw [8]byte
				n := copy(raw[:], prog[min(pc+1, len(prog)):])
				pc += n
				id := ID(binary.LittleEndian.Uint64(raw[:]))
				for typ := Type(1); typ <= 3; typ++ {
					e, err := tab.Get(id, typ)
					switch v := live[id]; {
					case id == 0:
						assert.ErrorIs(t, err, ErrZero)
					case v != 0 && id.Type() == typ:
						require.NoError(t, err)
						assert.Equal(t, v, e.Value)
					default:
						require.Error(t, err, "id %#x of class %d", uint64(id), typ)
						assert.Nil(t, e)
					}
				}
			case 5: // zero
				_, err := tab.Get(0, 1)
				assert.ErrorIs(t, err, ErrZero)
				_, err = tab.Remove(0, 1)
				assert.ErrorIs(t, err, ErrZero)
			}
			require.Equal(t, len(live), tab.Len())
		}
		for id, v := range live {
			e, err := tab.Remove(id, id.Type())
			require.NoError(t, err)
			assert.Equal(t, v, e.Value)
		}
		assert.Zero(t, tab.Len())
	})
}
