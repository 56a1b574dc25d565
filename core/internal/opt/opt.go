// Package opt holds the helpers of optional values, held as pointers (nil: absent), that the
// records of core copy, read and compare.
package opt

// Clone returns a copy of the value p points to, nil when p is nil.
func Clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Of returns the value p points to and true, or the zero value and false when p is nil.
func Of[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

// Ptr returns a pointer to v when ok, nil when not: the inverse of Of.
func Ptr[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

// Equal reports whether a and b are both absent, or both present with equal values.
func Equal[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// EqualBy is Equal for values that eq compares.
func EqualBy[T any](a, b *T, eq func(x, y *T) bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return eq(a, b)
}

// Integer is an integer type, for Convert.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Convert returns the value p points to converted to U, nil when p is nil.
func Convert[U, T Integer](p *T) *U {
	if p == nil {
		return nil
	}
	v := U(*p)
	return &v
}
