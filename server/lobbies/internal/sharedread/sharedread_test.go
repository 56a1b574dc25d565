package sharedread

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A caller alone reads the value itself, every time.
func TestReadAlone(t *testing.T) {
	var r Reader[int]
	n := 0
	for want := 1; want <= 3; want++ {
		v, err := r.Read(context.Background(), func(context.Context) (int, error) { n++; return n, nil })
		require.NoError(t, err)
		assert.Equal(t, want, v)
	}
	boom := errors.New("boom")
	_, err := r.Read(context.Background(), func(context.Context) (int, error) { return 0, boom })
	assert.ErrorIs(t, err, boom)
}

// Callers that come while a read runs do not take its value, which may be older than their
// call: they share the next read, one for all of them.
func TestReadSharedByCallersThatWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Reader[int]
		var mu sync.Mutex
		reads := 0
		release := make(chan struct{})
		read := func(context.Context) (int, error) {
			mu.Lock()
			reads++
			n := reads
			mu.Unlock()
			if n == 1 {
				<-release // the first read runs until released
			}
			return n, nil
		}
		first := make(chan int, 1)
		go func() {
			v, _ := r.Read(context.Background(), read)
			first <- v
		}()
		synctest.Wait() // the first read runs
		got := make(chan int, 3)
		for range 3 {
			go func() {
				v, _ := r.Read(context.Background(), read)
				got <- v
			}()
		}
		synctest.Wait() // the three wait
		close(release)
		assert.Equal(t, 1, <-first)
		for range 3 {
			assert.Equal(t, 2, <-got, "a value read after the call")
		}
		assert.Equal(t, 2, reads, "reads")
	})
}
