package borrow

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lent is what a game lends: data with a declared size. A size past the data that is still within
// the limit cannot be told from a real string (the SDK would read past the game's buffer, which
// no C API can detect), so such a size is cut back to the data; a NULL pointer or a size over the
// limit are kept, and must be refused before anything is read.
func lent(data []byte, size uint64, null bool) String {
	s := String{Size: uintptr(size)}
	if uint64(len(data)) < size && size <= MaxStringSize {
		s.Size = uintptr(len(data))
	}
	if !null && len(data) > 0 {
		s.Ptr = &data[0]
	} else if !null && s.Size > 0 {
		s.Ptr = new(byte) // a real pointer with a size over the limit
	}
	return s
}

// wantStr is Str's contract, written out.
func wantStr(s String) (string, error) {
	switch {
	case s.Size == 0:
		return "", nil
	case s.Ptr == nil:
		return "", ErrNull
	case uint64(s.Size) > MaxStringSize:
		return "", ErrTooLarge
	}
	v := string(unsafe.Slice(s.Ptr, s.Size))
	if !utf8.ValidString(v) {
		return "", ErrNotUTF8
	}
	return v, nil
}

func checkStr(t *testing.T, s String) {
	got, err := Str(s)
	want, wantErr := wantStr(s)
	if wantErr != nil {
		require.ErrorIs(t, err, wantErr)
		assert.Empty(t, got)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// FuzzStr: a borrowed string is copied exactly, or refused for a NULL pointer, a size over the
// limit or invalid UTF-8, whatever the bytes and the declared size.
func FuzzStr(f *testing.F) {
	f.Add([]byte("openid sdk.social_layer"), uint64(23), false)
	f.Add([]byte("é\x00after-nul"), uint64(12), false)
	f.Add([]byte{'o', 'k', 0xC3, 0x28, 0xFF}, uint64(5), false)
	f.Add([]byte{}, uint64(5), true)
	f.Add([]byte("x"), uint64(1)<<40, false)
	f.Add([]byte("x"), ^uint64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, size uint64, null bool) {
		checkStr(t, lent(data, size, null))
	})
}

// pairs splits data into entries: NUL separates the strings, which alternate key and value.
func pairs(data []byte) (keys, values [][]byte) {
	parts := bytes.Split(data, []byte{0})
	for i := 0; i+1 < len(parts); i += 2 {
		keys, values = append(keys, parts[i]), append(values, parts[i+1])
	}
	return keys, values
}

// FuzzProps: a borrowed string map is copied exactly, or refused for NULL arrays, a size over the
// limit, a bad key or value, or a key given twice.
func FuzzProps(f *testing.F) {
	f.Add([]byte("a\x001\x00b\x002"), uint64(2), uint8(0))
	f.Add([]byte("a\x001\x00a\x002"), uint64(2), uint8(0))
	f.Add([]byte("k\x00\xff"), uint64(1), uint8(0))
	f.Add([]byte(""), uint64(1)<<30, uint8(1))
	f.Add([]byte("k\x00v"), uint64(1)<<62, uint8(0))
	f.Add([]byte("k\x00v"), ^uint64(0), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, size uint64, flags uint8) {
		ks, vs := pairs(data)
		keys := make([]String, len(ks)+1) // one more, so that the arrays are never empty
		values := make([]String, len(vs)+1)
		for i := range ks {
			keys[i] = lent(ks[i], uint64(len(ks[i])), flags&4 != 0 && i == 0)
			values[i] = lent(vs[i], uint64(len(vs[i])), flags&8 != 0 && i == 0)
		}
		p := Properties{Size: uintptr(size), Keys: &keys[0], Values: &values[0]}
		if size <= MaxProperties && size > uint64(len(ks)) {
			p.Size = uintptr(len(ks)) // past the arrays: see lent
		}
		if flags&1 != 0 {
			p.Keys = nil
		}
		if flags&2 != 0 {
			p.Values = nil
		}

		got, err := Props(p)
		switch {
		case p.Size == 0:
			require.NoError(t, err)
			assert.Empty(t, got)
			assert.NotNil(t, got)
			return
		case p.Keys == nil || p.Values == nil:
			require.ErrorIs(t, err, ErrNull)
			return
		case uint64(p.Size) > MaxProperties:
			require.ErrorIs(t, err, ErrTooLarge)
			return
		}
		want := map[string]string{}
		for i := range int(p.Size) {
			k, errK := wantStr(keys[i])
			v, errV := wantStr(values[i])
			if firstErr := errors.Join(errK, errV); firstErr != nil {
				require.Error(t, err)
				require.ErrorIs(t, err, cmpOr(errK, errV))
				return
			}
			if _, dup := want[k]; dup {
				require.ErrorIs(t, err, ErrDuplicate)
				return
			}
			want[k] = v
		}
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})
}

func cmpOr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// FuzzUint64s: a borrowed span of ids is copied exactly, or refused for NULL with a size or a
// size over the limit; Span agrees.
func FuzzUint64s(f *testing.F) {
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"), uint64(2), false)
	f.Add([]byte{}, uint64(1)<<30, true)
	f.Add([]byte("12345678"), uint64(1)<<62, false)
	f.Add([]byte("12345678"), ^uint64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, size uint64, null bool) {
		ids := make([]uint64, len(data)/8+1)
		for i := range len(data) / 8 {
			ids[i] = uint64(data[8*i]) | uint64(data[8*i+1])<<8 | uint64(data[8*i+2])<<16 | uint64(data[8*i+3])<<24 |
				uint64(data[8*i+4])<<32 | uint64(data[8*i+5])<<40 | uint64(data[8*i+6])<<48 | uint64(data[8*i+7])<<56
		}
		n := uint64(len(data) / 8)
		if size > n && size <= MaxSpan {
			size = n // past the array: see lent
		}
		var ptr unsafe.Pointer
		if !null {
			ptr = unsafe.Pointer(&ids[0])
		}
		got, err := Uint64s(ptr, size)
		assert.Equal(t, err, Span(ptr, size), "Uint64s and Span refuse alike")
		switch {
		case size == 0:
			require.NoError(t, err)
			assert.Nil(t, got)
		case null:
			require.ErrorIs(t, err, ErrNull)
		case size > MaxSpan:
			require.ErrorIs(t, err, ErrTooLarge)
		default:
			require.NoError(t, err)
			assert.Equal(t, ids[:size], got)
		}
	})
}

// FuzzAlloc: sizes up to the limit are granted (zero as one byte), larger ones refused.
func FuzzAlloc(f *testing.F) {
	for _, n := range []uint64{0, 1, MaxAlloc, MaxAlloc + 1, 1 << 62, ^uint64(0)} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, size uint64) {
		n, err := Alloc(size)
		if size > MaxAlloc {
			require.ErrorIs(t, err, ErrTooLarge)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, max(size, 1), n)
	})
}
