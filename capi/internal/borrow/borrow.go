// Package borrow copies what a game lends the C ABI for the length of one call (strings, string
// maps, spans of ids) into Go values, refusing NULL pointers with a size, sizes over the limits,
// invalid UTF-8 and duplicate keys before anything is allocated or read.
//
// It is pure Go: String and Properties have the memory layout of Sdkpp_String and
// Sdkpp_Properties (capi checks that at compile time), so capi converts its C values with a
// pointer cast, and tests and fuzz targets build the same values in Go memory.
package borrow

import (
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// Limits on what a game passes in, checked before anything is allocated or read.
const (
	MaxStringSize = 256 << 20 // bytes of one string (256 MiB)
	MaxProperties = 1 << 16   // entries of one Sdkpp_Properties
	MaxSpan       = 1 << 20   // elements of one span
	MaxAlloc      = 1 << 30   // bytes of one Sdkpp_Alloc
)

// Why an input is refused; the errors the functions return wrap one of them.
var (
	ErrNull      = errors.New("NULL pointer with a size")
	ErrTooLarge  = errors.New("over the limit")
	ErrNotUTF8   = errors.New("validation error: the string is not valid UTF-8")
	ErrDuplicate = errors.New("duplicate key")
)

// String is the layout of Sdkpp_String { uint8_t* ptr; size_t size; }.
type String struct {
	Ptr  *byte
	Size uintptr
}

// Properties is the layout of Sdkpp_Properties { size_t size; Sdkpp_String* keys; Sdkpp_String* values; }.
type Properties struct {
	Size   uintptr
	Keys   *String
	Values *String
}

// Str copies s; a zero size is the empty string whatever the pointer.
func Str(s String) (string, error) {
	if s.Size == 0 {
		return "", nil
	}
	if s.Ptr == nil {
		return "", fmt.Errorf("NULL string pointer with size %d: %w", uint64(s.Size), ErrNull)
	}
	if uint64(s.Size) > MaxStringSize {
		return "", fmt.Errorf("string of %d bytes is %w of %d bytes", uint64(s.Size), ErrTooLarge, MaxStringSize)
	}
	v := string(unsafe.Slice(s.Ptr, int(s.Size)))
	if !utf8.ValidString(v) {
		return "", ErrNotUTF8
	}
	return v, nil
}

// Props copies p into a map; a zero size is the empty map whatever the pointers.
func Props(p Properties) (map[string]string, error) {
	if p.Size == 0 {
		return map[string]string{}, nil
	}
	if p.Keys == nil || p.Values == nil {
		return nil, fmt.Errorf("NULL keys or values with size %d: %w", uint64(p.Size), ErrNull)
	}
	if uint64(p.Size) > MaxProperties {
		return nil, fmt.Errorf("%d entries are %w of %d", uint64(p.Size), ErrTooLarge, MaxProperties)
	}
	n := int(p.Size)
	keys, values := unsafe.Slice(p.Keys, n), unsafe.Slice(p.Values, n)
	m := make(map[string]string, n)
	for i := range n {
		k, err := Str(keys[i])
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		v, err := Str(values[i])
		if err != nil {
			return nil, fmt.Errorf("value %d: %w", i, err)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("key %q appears twice: %w", k, ErrDuplicate)
		}
		m[k] = v
	}
	return m, nil
}

// Span checks a span of size elements at ptr: NULL with a size, and sizes over MaxSpan, are
// refused. It reads nothing.
func Span(ptr unsafe.Pointer, size uint64) error {
	if size == 0 {
		return nil
	}
	if ptr == nil {
		return fmt.Errorf("NULL span with size %d: %w", size, ErrNull)
	}
	if size > MaxSpan {
		return fmt.Errorf("a span of %d elements is %w of %d", size, ErrTooLarge, MaxSpan)
	}
	return nil
}

// Uint64s copies a span of ids; an empty span is nil.
func Uint64s(ptr unsafe.Pointer, size uint64) ([]uint64, error) {
	if err := Span(ptr, size); err != nil || size == 0 {
		return nil, err
	}
	return append([]uint64(nil), unsafe.Slice((*uint64)(ptr), int(size))...), nil
}

// Alloc checks a Sdkpp_Alloc size and returns the size to allocate (at least 1).
func Alloc(size uint64) (uint64, error) {
	if size > MaxAlloc {
		return 0, fmt.Errorf("%d bytes are %w of %d", size, ErrTooLarge, MaxAlloc)
	}
	return max(size, 1), nil
}
