package osthread

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each function runs on a thread of its own, not the caller's, and that thread is gone once the
// function has returned; none is kept in the runtime's pool, however often it runs (a locked
// goroutine scheduled onto the runtime's first thread would leave that thread behind).
func TestGoEndsItsThread(t *testing.T) {
	caller := syscall.Gettid()
	for i := range 50 {
		tids := make(chan int)
		release := make(chan struct{})
		require.NoError(t, Go(func() {
			tids <- syscall.Gettid()
			<-release
		}))
		tid := <-tids
		assert.NotEqual(t, caller, tid, "run %d: on a thread of its own", i)
		task := fmt.Sprintf("/proc/self/task/%d", tid)
		_, err := os.Stat(task)
		require.NoError(t, err, "run %d: the thread lives while the function runs", i)
		close(release)
		gone := false
		for deadline := time.Now().Add(10 * time.Second); !gone && time.Now().Before(deadline); {
			_, err := os.Stat(task)
			gone = os.IsNotExist(err)
			if !gone {
				time.Sleep(time.Millisecond) // waiting for an expected exit, not proving an absence
			}
		}
		assert.True(t, gone, "run %d: thread %d ended with its function", i, tid)
	}
}

// Every function given runs, once.
func TestGoRunsEachFunctionOnce(t *testing.T) {
	done := make(chan int, 10)
	for i := range 10 {
		require.NoError(t, Go(func() { done <- i }))
	}
	seen := map[int]bool{}
	for range 10 {
		seen[<-done] = true
	}
	assert.Len(t, seen, 10)
}
