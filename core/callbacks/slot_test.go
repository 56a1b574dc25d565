package callbacks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlot(t *testing.T) {
	q := New()
	var s Slot[func(int)]
	require.False(t, s.Post(func(f func(int)) { f(1) }), "no handler: nothing posted")

	released := 0
	var got []int
	s.Set(q.NewScope(func() { released++ }), func(v int) { got = append(got, v) })
	require.True(t, s.IsSet())
	require.True(t, s.Post(func(f func(int)) { f(2) }))
	q.Run()
	assert.Equal(t, []int{2}, got)

	s.Set(q.NewScope(nil), func(v int) { got = append(got, -v) })
	q.Run()
	assert.Equal(t, 1, released, "replacing a handler releases the old one")
	s.Post(func(f func(int)) { f(3) })
	q.Run()
	assert.Equal(t, []int{2, -3}, got)

	scope := s.Take()
	require.NotNil(t, scope)
	assert.False(t, s.IsSet())
	assert.Nil(t, s.Take(), "emptied")
}

// PostValue queues the call with its value, and allocates only the queued call: the call itself
// captures nothing.
func TestSlotPostValue(t *testing.T) {
	q := New()
	var s Slot[func(int)]
	call := func(f func(int), v int) { f(v) }
	require.False(t, PostValue(&s, 1, call), "no handler: nothing posted")
	var got []int
	s.Set(q.NewScope(nil), func(v int) { got = append(got, v) })
	require.True(t, PostValue(&s, 2, call))
	require.True(t, PostValue(&s, 3, call))
	q.Run()
	assert.Equal(t, []int{2, 3}, got)
	v := 4
	post := testing.AllocsPerRun(100, func() {
		s.Post(func(f func(int)) { f(v) })
		q.Run()
	})
	postValue := testing.AllocsPerRun(100, func() {
		PostValue(&s, v, call)
		q.Run()
	})
	t.Logf("allocations: Post %v, PostValue %v", post, postValue)
	assert.Equal(t, post-1, postValue, "one allocation fewer than Post with a call that captures its value")
}
