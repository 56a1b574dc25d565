package osyield

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The system call is made and succeeds, with and without another thread waiting for the CPU.
func TestSchedYieldSucceeds(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			Yield()
		}
	}()
	for range 1000 {
		require.Equal(t, syscall.Errno(0), schedYield(), "sched_yield")
	}
	<-done
}
