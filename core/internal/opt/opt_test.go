package opt

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOpt(t *testing.T) {
	one, two := 1, 2
	c := Clone(&one)
	assert.Equal(t, 1, *c)
	assert.NotSame(t, &one, c, "a copy")
	assert.Nil(t, Clone[int](nil))

	v, ok := Of(&two)
	assert.True(t, ok)
	assert.Equal(t, 2, v)
	v, ok = Of[int](nil)
	assert.False(t, ok)
	assert.Zero(t, v)
	assert.Equal(t, 2, *Ptr(Of(&two)), "Ptr undoes Of")
	assert.Nil(t, Ptr(Of[int](nil)))

	assert.True(t, Equal[int](nil, nil))
	assert.False(t, Equal(&one, nil))
	assert.True(t, Equal(&one, Clone(&one)))
	assert.False(t, Equal(&one, &two))
	odd := func(x, y *int) bool { return *x%2 == *y%2 }
	assert.True(t, EqualBy(&one, Clone(&one), odd))
	assert.False(t, EqualBy(&one, &two, odd))
	assert.False(t, EqualBy(nil, &two, odd))
}

func TestConvert(t *testing.T) {
	type code int32
	n := 7
	c := Convert[code](&n)
	assert.Equal(t, code(7), *c)
	assert.Nil(t, Convert[code, int](nil))
}
