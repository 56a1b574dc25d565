package osyield

import "testing"

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
		if errno := schedYield(); errno != 0 {
			t.Fatalf("sched_yield: %v", errno)
		}
	}
	<-done
}
