package wire

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LobbyMessage.IsZero answers as reflect.Value.IsZero does: true for the zero message, false when
// any one field, at any depth of the structs it holds, is set; a field added to LobbyMessage, User
// or LobbyMessageMember that IsZero does not look at fails here.
func TestLobbyMessageIsZero(t *testing.T) {
	var m LobbyMessage
	require.True(t, m.IsZero())
	leaves := 0
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if v.Kind() == reflect.Struct {
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
			return
		}
		leaves++
		old := reflect.New(v.Type()).Elem()
		old.Set(v)
		setNonZero(t, v)
		require.False(t, reflect.ValueOf(&m).Elem().IsZero(), path)
		assert.False(t, m.IsZero(), "%s set: not zero", path)
		v.Set(old)
		require.True(t, m.IsZero(), path)
	}
	walk(reflect.ValueOf(&m).Elem(), "LobbyMessage")
	assert.Greater(t, leaves, 20, "every field walked")
	// Empty, not nil: not zero, as reflect has it.
	m.Metadata = map[string]string{}
	assert.False(t, m.IsZero())
}

// setNonZero sets v, a field that is not a struct, to a value that is not its zero.
func setNonZero(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	default:
		t.Fatalf("a field of kind %s: setNonZero does not know it", v.Kind())
	}
}
