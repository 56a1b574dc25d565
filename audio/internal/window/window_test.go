package window

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEmpty(t *testing.T) {
	w := New(4, 3, false)
	_, ok := w.Value()
	assert.False(t, ok)
	assert.Equal(t, 0, w.Len())
}

func TestMinimumAgesOut(t *testing.T) {
	w := New(2, 3, false) // covers 6 to 9 values
	w.Add(1)
	for range 5 {
		w.Add(10)
	}
	v, ok := w.Value()
	require.True(t, ok)
	assert.Equal(t, 1.0, v, "within the window the low value holds")
	for range 2 {
		w.Add(10)
	}
	v, _ = w.Value()
	assert.Equal(t, 1.0, v, "the oldest sub-window is still covered")
	w.Add(10) // completes a third sub-window, evicting the one with 1
	v, _ = w.Value()
	assert.Equal(t, 10.0, v)
	assert.Equal(t, 6, w.Len())
}

func TestMaximumFollowsNewPeaksAtOnce(t *testing.T) {
	w := New(3, 4, true)
	for i := range 20 {
		w.Add(float64(i % 3))
	}
	v, _ := w.Value()
	assert.Equal(t, 2.0, v)
	w.Add(7)
	v, _ = w.Value()
	assert.Equal(t, 7.0, v)
	w.Reset()
	_, ok := w.Value()
	assert.False(t, ok)
}

func TestShapeIsClamped(t *testing.T) {
	w := New(0, 0, false)
	w.Add(3)
	w.Add(5)
	v, _ := w.Value()
	assert.Equal(t, 5.0, v, "one sub-window of one value: the last value")
	assert.Equal(t, 1, w.Len())
	big := New(100, 1, true)
	for i := range MaxSubs + 1 {
		big.Add(float64(100 - i))
	}
	v, _ = big.Value()
	assert.Equal(t, float64(100-1), v, "MaxSubs completed sub-windows are kept")
}

func TestAddDoesNotAllocate(t *testing.T) {
	w := New(8, 16, false)
	x := 0.0
	allocs := testing.AllocsPerRun(1000, func() {
		x++
		w.Add(x)
		_, _ = w.Value()
	})
	assert.Zero(t, allocs)
}
